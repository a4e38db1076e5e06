#!/usr/bin/env bash
# gander monitor benchmarks (issue 3, "Benchmarks"): what watching costs, side by side in one run.
#
#   bench/monitor.sh                        # GANDER defaults to build/launcher/gander
#   GANDER=/tmp/build-mbench/launcher/gander bench/monitor.sh
#
# Four measurements, each with every column interleaved (round-robin) or in one hyperfine run:
#   1. round trip of one watched syscall: openat() of a workspace file in a loop, per-call
#      p50/p90/p99, bare vs `gander run --files off` vs `--files opens` (unpinned, gander and
#      the target on the same core, on different cores), plus the kernel's floor: a minimal
#      supervisor (bench/monitor_bench.cc `floor`) with and without SYNC_WAKE_UP, and with
#      each syscall gander makes per notification added one at a time;
#   2. the filter's cost on allowed syscalls: getppid() (cacheable) and ioctl(FIONREAD) (the
#      filter has argument rules for ioctl, so the kernel runs the BPF), bare vs under gander;
#   3. a compute-bound program (~2 s), hyperfine, bare vs under gander;
#   4. server-filesystem start -> tools/list -> exit (bench/mcp_roundtrip.mjs), hyperfine,
#      `--files opens` vs `--files off` (bare, `--files all`, and the bare server under the
#      minimal supervisor for reference), plus the number of notifications per start, counted
#      from gander's ioctls with strace.
# Writes markdown to bench/results/monitor.md ($OUT). A benchmark, not a test: no timing
# decides the exit status. Details and how to read it: bench/MONITOR.md.
#
# Knobs: GANDER, MONITOR_BENCH (a prebuilt monitor_bench; else built with $CXX into a temp dir),
# ROUNDS (5: rounds of sections 1-2), ITERS (100000 openat calls per run), BATCHES (3000 batches
# of 1000 calls, section 2), SPIN_SECONDS (2), RUNS_SPIN (16), RUNS_MCP (40), WARMUP_MCP (1 per
# hyperfine round), HF_ROUNDS (8: sections 3 and 4 split their runs over this many hyperfine
# invocations, so load that comes and goes hits every column alike), SUP_RUNS (7: runs per column
# of the supervisor-CPU measurement in section 4), OUT, E2E_DIR (tests/e2e),
# SKIP (any of: roundtrip allowed compute mcp), CXX.
set -euo pipefail

# Every column starts from the same small environment (see bench/README.md: NODE_EXTRA_CA_CERTS
# alone costs node ~120 ms); gander drops the caller's environment anyway.
if [[ -z ${GANDER_BENCH_CLEAN_ENV:-} ]]; then
  keep=(GANDER_BENCH_CLEAN_ENV=1 "PATH=/usr/local/bin:/usr/bin:/bin" "HOME=${HOME:-/root}")
  for v in TERM TMPDIR CXX GANDER MONITOR_BENCH ROUNDS ITERS BATCHES SPIN_SECONDS RUNS_SPIN \
           RUNS_MCP WARMUP_MCP HF_ROUNDS SUP_RUNS OUT E2E_DIR SKIP; do
    [[ -n ${!v+x} ]] && keep+=("$v=${!v}")
  done
  exec env -i "${keep[@]}" bash "${BASH_SOURCE[0]}" "$@"
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"   # gander's workspace is the cwd
WS=$REPO
GANDER=${GANDER:-build/launcher/gander}
[[ $GANDER == /* ]] || GANDER=$REPO/$GANDER
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-100000}
BATCHES=${BATCHES:-3000}
SPIN_SECONDS=${SPIN_SECONDS:-2}
RUNS_SPIN=${RUNS_SPIN:-16}
RUNS_MCP=${RUNS_MCP:-40}
WARMUP_MCP=${WARMUP_MCP:-1}
HF_ROUNDS=${HF_ROUNDS:-8}
SUP_RUNS=${SUP_RUNS:-7}
OUT=${OUT:-$REPO/bench/results/monitor.md}
E2E_DIR=${E2E_DIR:-$REPO/tests/e2e}
SKIP=" ${SKIP:-} "
CXX=${CXX:-c++}
PY=/usr/bin/python3

note() { printf '%s\n' "$*" >&2; }
die() { note "monitor.sh: $*"; exit 1; }
skip() { [[ $SKIP == *" $1 "* ]]; }
for tool in hyperfine taskset strace "$PY"; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done
[[ -x $GANDER ]] || die "no gander at $GANDER (build it, or set GANDER)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/gander-mbench.XXXXXX")
SPIN_DIR=""   # section 3, in the workspace (see there)
trap 'rm -rf "$TMP" ${SPIN_DIR:+"$SPIN_DIR"}' EXIT

if [[ -n ${MONITOR_BENCH:-} ]]; then
  BENCH=$MONITOR_BENCH
else
  BENCH=$TMP/monitor_bench
  "$CXX" -O2 -std=c++20 -Wall -Wextra -I. -o "$BENCH" bench/monitor_bench.cc common/fd_passing.cc || die "cannot build monitor_bench"
fi

RESULTS=$TMP/results.txt   # "CONFIG<TAB>RESULT ..." lines
: >"$RESULTS"
CMDS=$TMP/commands.txt     # "CONFIG<TAB>command line" (the exact command of each column)
: >"$CMDS"
LOADS=$TMP/loads.txt       # "SECTION<TAB>before<TAB>after"
: >"$LOADS"
load() { cut -d' ' -f1-3 /proc/loadavg; }
q() { local out="" w; for w in "$@"; do out+="$(printf '%q' "$w") "; done; printf '%s' "${out% }"; }

# gander's prefix for a files level; each run gets a fresh audit log outside the workspace.
gander() {  # gander LEVEL
  printf '%s\n' "$GANDER" run --files "$1" --audit-log "$TMP/audit-$1.jsonl" --
}

# run_config NAME CMD...: runs once, keeps its RESULT line, remembers the command. Every
# command runs under `monitor_bench hold`, which gives it a stdin that stays open: gander stops
# the extension 1 s after EOF on its stdin (the client went away), so /dev/null would cut
# runs longer than a second short.
declare -A SEEN=()
run_config() {
  local name=$1; shift
  set -- "$BENCH" hold "$@"
  if [[ -z ${SEEN[$name]:-} ]]; then
    SEEN[$name]=1
    printf '%s\t%s\n' "$name" "$(q "$@")" >>"$CMDS"
  fi
  local line
  if ! line=$("$@" </dev/null 2>"$TMP/err" | grep '^RESULT '); then
    note "$name failed: $(head -n 3 "$TMP/err" | tr '\n' ' ')"
    return 0
  fi
  printf '%s\t%s\n' "$name" "$line" >>"$RESULTS"
  rm -f "$TMP"/audit-*.jsonl*
}

FILE=$WS/CMakeLists.txt   # a workspace file: classified, not logged (not notable)
# A path outside every rule of the policy: not in the sandbox's view (ENOENT), but every attempt
# is an audit-log event (class "outside"), so its row adds the cost of logging.
OUTSIDE=/opt/gander-monitor-bench/outside
mapfile -t G_OFF < <(gander off)
mapfile -t G_OPENS < <(gander opens)
mapfile -t G_ALL < <(gander all)
OPENAT=(openat --file "$FILE" --iters "$ITERS")

# ---- 0. is SYNC_WAKE_UP in force? ------------------------------------------------------------
note "== SYNC_WAKE_UP check (strace -e trace=ioctl on gander)"
"$BENCH" hold strace -o "$TMP/strace-sync.txt" -e trace=ioctl "${G_OPENS[@]}" "$BENCH" openat --file "$FILE" \
  --iters 1000 --warmup 0 >/dev/null 2>&1 || true
SYNC_LINE=$(grep -E '_IOC\(_IOC_WRITE, 0x21, 0x4, 0x8\)|SECCOMP_IOCTL_NOTIF_SET_FLAGS' "$TMP/strace-sync.txt" | head -n 1 || true)
RECV_OK=$(grep -c 'SECCOMP_IOCTL_NOTIF_RECV, {' "$TMP/strace-sync.txt" || true)
RECV_ENOENT=$(grep -c 'SECCOMP_IOCTL_NOTIF_RECV.*ENOENT' "$TMP/strace-sync.txt" || true)

# ---- 1. round trip of a watched syscall ------------------------------------------------------
if ! skip roundtrip; then
  LB=$(load)
  for ((r = 1; r <= ROUNDS; r++)); do
    note "== round trip, round $r/$ROUNDS (load $(load))"
    run_config "bare" "$BENCH" "${OPENAT[@]}"
    run_config "gander --files off" "${G_OFF[@]}" "$BENCH" "${OPENAT[@]}"
    run_config "gander --files opens" "${G_OPENS[@]}" "$BENCH" "${OPENAT[@]}"
    run_config "gander --files opens, path outside the policy (logged)" "${G_OPENS[@]}" "$BENCH" openat --file "$OUTSIDE" --may-fail --iters "$ITERS"
    run_config "gander --files opens, same core" taskset -c 0 "${G_OPENS[@]}" "$BENCH" "${OPENAT[@]}" --cpu 0
    run_config "gander --files opens, different cores" taskset -c 0 "${G_OPENS[@]}" "$BENCH" "${OPENAT[@]}" --cpu 1
    run_config "floor" "$BENCH" floor --sync 1 "${OPENAT[@]:1}"
    run_config "floor, no SYNC_WAKE_UP" "$BENCH" floor --sync 0 "${OPENAT[@]:1}"
    run_config "floor, same core" "$BENCH" floor --sync 1 --target-cpu 0 --super-cpu 0 "${OPENAT[@]:1}"
    run_config "floor, different cores" "$BENCH" floor --sync 1 --target-cpu 1 --super-cpu 0 "${OPENAT[@]:1}"
    run_config "floor, blocking in NOTIF_RECV (no poll)" "$BENCH" floor --sync 1 --poll 0 "${OPENAT[@]:1}"
    run_config "floor + poll of 8 fds" "$BENCH" floor --sync 1 --poll-fds 8 "${OPENAT[@]:1}"
    run_config "floor + read /proc/PID/status (only /proc/<pid> paths now)" "$BENCH" floor --sync 1 --work status "${OPENAT[@]:1}"
    run_config "floor + process_vm_readv" "$BENCH" floor --sync 1 --work vmread "${OPENAT[@]:1}"
    run_config "floor + readlink /proc/PID/root" "$BENCH" floor --sync 1 --work readlink "${OPENAT[@]:1}"
    run_config "floor + readlink /proc/PID/root/PATH" "$BENCH" floor --sync 1 --work inview "${OPENAT[@]:1}"
    run_config "floor + NOTIF_ID_VALID" "$BENCH" floor --sync 1 --work idvalid "${OPENAT[@]:1}"
    run_config "floor + gander's four, polling 8 fds" "$BENCH" floor --sync 1 --work gander --poll-fds 8 "${OPENAT[@]:1}"
  done
  printf 'roundtrip\t%s\t%s\n' "$LB" "$(load)" >>"$LOADS"
fi

# ---- 2. the filter's cost on allowed syscalls ------------------------------------------------
if ! skip allowed; then
  LB=$(load)
  for ((r = 1; r <= ROUNDS; r++)); do
    note "== allowed syscalls, round $r/$ROUNDS (load $(load))"
    for call in getppid ioctl; do
      run_config "$call: bare" "$BENCH" "$call" --batches "$BATCHES"
      run_config "$call: gander --files off" "${G_OFF[@]}" "$BENCH" "$call" --batches "$BATCHES"
      run_config "$call: gander --files opens" "${G_OPENS[@]}" "$BENCH" "$call" --batches "$BATCHES"
    done
  done
  printf 'allowed\t%s\t%s\n' "$LB" "$(load)" >>"$LOADS"
fi

# hyperfine_rounds NAME RUNS WARMUP HYPERFINE-ARGS...: RUNS runs per column, split over
# HF_ROUNDS hyperfine invocations (each with every column, WARMUP warm-up runs each), exported
# to $TMP/NAME-R.json. hyperfine runs one column's runs back to back; on a shared machine a
# compile starting halfway would otherwise land on whichever column runs then.
hyperfine_rounds() {
  local name=$1 runs=$2 warmup=$3; shift 3
  local per=$(( (runs + HF_ROUNDS - 1) / HF_ROUNDS )) r
  (( per >= 2 )) || per=2
  for ((r = 1; r <= HF_ROUNDS; r++)); do
    note "== $name: hyperfine round $r/$HF_ROUNDS ($per runs per column; load $(load))"
    hyperfine -N --warmup "$warmup" --runs "$per" --export-json "$TMP/$name-$r.json" "$@" >&2
  done
}

# ---- 3. compute-bound ------------------------------------------------------------------------
SPIN_ITERS=0
if ! skip compute; then
  note "== compute-bound: calibrating ${SPIN_SECONDS} s"
  # On the loop's CPU time (best of 3): wall time would shrink the loop whenever the machine is busy.
  cal=$(for _ in 1 2 3; do "$BENCH" spin --iters 3e8 | sed -n 's/.*cputime=\([0-9]*\).*/\1/p'; done | sort -n | head -n 1)
  SPIN_ITERS=$("$PY" -c "print(int(3e8 * $SPIN_SECONDS * 1e9 / $cal))")
  LB=$(load)
  # The spin program appends its own timing here; it must lie in the workspace (writable in the
  # sandbox, where /tmp is private).
  SPIN_DIR=$(mktemp -d "$REPO/bench/.monitor-spin.XXXXXX")
  # hold: see run_config (hyperfine gives commands /dev/null as stdin). Every column has it.
  spin() { printf '%s\n' "$BENCH" spin --iters "$SPIN_ITERS" --append "$SPIN_DIR/$1"; }
  mapfile -t S_BARE < <(printf '%s\n' "$BENCH" hold; spin bare)
  mapfile -t S_OFF < <(printf '%s\n' "$BENCH" hold "${G_OFF[@]}"; spin off)
  mapfile -t S_OPENS < <(printf '%s\n' "$BENCH" hold "${G_OPENS[@]}"; spin opens)
  printf 'spin: %s\t%s\n' "bare" "$(q "${S_BARE[@]}")" "gander --files off" "$(q "${S_OFF[@]}")" \
    "gander --files opens" "$(q "${S_OPENS[@]}")" >>"$CMDS"
  # No warm-up: the loop has nothing to warm, and every run appends its own timing to
  # $SPIN_DIR/{bare,off,opens}; copied out of the workspace at once for the report.
  hyperfine_rounds spin "$RUNS_SPIN" 0 \
    -n "bare" "$(q "${S_BARE[@]}")" \
    -n "gander --files off" "$(q "${S_OFF[@]}")" \
    -n "gander --files opens" "$(q "${S_OPENS[@]}")"
  mkdir -p "$TMP/spin" && cp "$SPIN_DIR"/* "$TMP/spin/" 2>/dev/null || note "spin timings missing from $SPIN_DIR"
  rm -rf "$SPIN_DIR"
  printf 'compute\t%s\t%s\n' "$LB" "$(load)" >>"$LOADS"
fi

# ---- 4. a real MCP server --------------------------------------------------------------------
MCP_SKIPPED=""
if ! skip mcp; then
  SERVER=$E2E_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
  if [[ ! -f $SERVER ]]; then
    note "== installing the e2e corpus (tests/e2e/install.sh)"
    "$E2E_DIR/install.sh" >&2 || true
  fi
  if [[ ! -f $SERVER ]] || ! command -v node >/dev/null; then
    MCP_SKIPPED="server-filesystem or node missing ($SERVER)"
  else
    CLIENT=(node "$REPO/bench/mcp_roundtrip.mjs" --)
    PAYLOAD=(node "$SERVER" "$WS")
    note "== MCP: notifications per start (strace -e trace=ioctl on gander)"
    for level in off opens all; do
      mapfile -t G < <(gander "$level")
      "${CLIENT[@]}" strace -o "$TMP/strace-mcp-$level.txt" -e trace=ioctl "${G[@]}" "${PAYLOAD[@]}" \
        >/dev/null 2>&1 || true
    done
    printf 'mcp: %s\t%s\n' "bare" "$(q "${CLIENT[@]}" "${PAYLOAD[@]}")" \
      "gander --files off" "$(q "${CLIENT[@]}" "${G_OFF[@]}" "${PAYLOAD[@]}")" \
      "gander --files opens" "$(q "${CLIENT[@]}" "${G_OPENS[@]}" "${PAYLOAD[@]}")" \
      "gander --files all" "$(q "${CLIENT[@]}" "${G_ALL[@]}" "${PAYLOAD[@]}")" \
      "floor supervisor, nothing watched" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --watch none -- "${PAYLOAD[@]}")" \
      "floor supervisor, opens set" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --watch opens -- "${PAYLOAD[@]}")" \
      "floor supervisor, opens set, no SYNC_WAKE_UP" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --sync 0 --watch opens -- "${PAYLOAD[@]}")" \
      "floor supervisor, all set" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --watch all -- "${PAYLOAD[@]}")" \
      "notification count, --files LEVEL" "$(q "${CLIENT[@]}" strace -o FILE -e trace=ioctl "$GANDER" run --files LEVEL --audit-log FILE -- "${PAYLOAD[@]}")" >>"$CMDS"
    # The supervisor's own CPU time per start, from /proc/PID/schedstat (ns on CPU) sampled until
    # it exits: gander's parent process (or floor-exec's), not node's. Steadier than wall time.
    supervisor_cpu() {  # supervisor_cpu LABEL CMD... (CMD is what the client spawns)
      local label=$1; shift
      "${CLIENT[@]}" "$@" "${PAYLOAD[@]}" >/dev/null 2>&1 &
      local client=$! sup="" last=0 v
      while kill -0 "$client" 2>/dev/null; do
        [[ -n $sup ]] || sup=$(pgrep -o -P "$client" || true)
        if [[ -n $sup ]] && v=$(cut -d' ' -f1 "/proc/$sup/schedstat" 2>/dev/null) && [[ -n $v ]]; then
          last=$v
        fi
        sleep 0.002
      done
      wait "$client" || true
      printf '%s\t%s\n' "$label" "$last" >>"$TMP/supervisor-cpu.txt"
    }
    note "== MCP: supervisor CPU per start (/proc/PID/schedstat), $SUP_RUNS interleaved rounds"
    : >"$TMP/supervisor-cpu.txt"
    for ((r = 1; r <= SUP_RUNS; r++)); do
      for level in off opens all; do
        mapfile -t G < <(gander "$level")
        supervisor_cpu "gander --files $level" "${G[@]}"
      done
      supervisor_cpu "floor supervisor, opens set" "$BENCH" floor-exec --watch opens --
      supervisor_cpu "floor supervisor, all set" "$BENCH" floor-exec --watch all --
    done
    LB=$(load)
    hyperfine_rounds mcp "$RUNS_MCP" "$WARMUP_MCP" \
      -n "bare" "$(q "${CLIENT[@]}" "${PAYLOAD[@]}")" \
      -n "gander --files off" "$(q "${CLIENT[@]}" "${G_OFF[@]}" "${PAYLOAD[@]}")" \
      -n "gander --files opens" "$(q "${CLIENT[@]}" "${G_OPENS[@]}" "${PAYLOAD[@]}")" \
      -n "gander --files all" "$(q "${CLIENT[@]}" "${G_ALL[@]}" "${PAYLOAD[@]}")" \
      -n "floor supervisor, nothing watched" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --watch none -- "${PAYLOAD[@]}")" \
      -n "floor supervisor, opens set" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --watch opens -- "${PAYLOAD[@]}")" \
      -n "floor supervisor, opens set, no SYNC_WAKE_UP" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --sync 0 --watch opens -- "${PAYLOAD[@]}")" \
      -n "floor supervisor, all set" "$(q "${CLIENT[@]}" "$BENCH" floor-exec --watch all -- "${PAYLOAD[@]}")"
    printf 'mcp\t%s\t%s\n' "$LB" "$(load)" >>"$LOADS"
  fi
fi

# ---- the report ------------------------------------------------------------------------------
GANDER_COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
# The binary does not say which commit it was built from: compare it with the sources.
GANDER_BUILT=$(date -u -r "$GANDER" '+%Y-%m-%d %H:%M UTC')
GANDER_STALE=$(cd "$REPO" && find common policies monitor exporters launcher CMakeLists.txt \
  \( -name '*.cc' -o -name '*.h' -o -name '*.yaml' -o -name CMakeLists.txt \) -newer "$GANDER" \
  2>/dev/null | sort | head -n 8 | tr '\n' ' ')
export GANDER_BUILT GANDER_STALE
export TMP GANDER GANDER_COMMIT SYNC_LINE RECV_OK RECV_ENOENT ITERS ROUNDS BATCHES SPIN_ITERS \
  SPIN_SECONDS OUTSIDE RUNS_SPIN RUNS_MCP WARMUP_MCP HF_ROUNDS SUP_RUNS MCP_SKIPPED FILE WS
mkdir -p "$(dirname "$OUT")"
"$PY" "$REPO/bench/monitor_report.py" >"$OUT"
cat "$OUT"
note "report written to $OUT"
