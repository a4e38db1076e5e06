#!/usr/bin/env bash
# gander start-up benchmark: gander against bare, bubblewrap, firejail and gVisor (runsc).
#
#   bench/startup.sh                      # GANDER defaults to build/launcher/gander
#   GANDER=/tmp/build/launcher/gander bench/startup.sh
#
# Two hyperfine runs (one per table), every sandbox side by side in the same run:
#   1. `/bin/true` start -> exit;
#   2. an MCP server (@modelcontextprotocol/server-filesystem from tests/e2e/node_modules)
#      start -> initialize -> tools/list answer -> stdin EOF -> exit, driven by
#      bench/mcp_roundtrip.mjs.
# Writes the markdown tables plus overhead ratios to bench/results/startup.md ($OUT) and prints
# them. A benchmark, not a test: no timing decides the exit status; a peer that is missing or
# does not work here is skipped with the reason printed. The exact flags of every column are
# in bench/README.md.
#
# Environment: the script re-executes itself with only PATH, HOME, TERM, TMPDIR and the knobs
# below, so every column sees the same small environment. Knobs: GANDER, GANDER_RUN_ARGS (extra args after `gander run`, e.g.
# "--profile default"), RUNS_TRUE (default 100), WARMUP_TRUE (5), RUNS_MCP (15), WARMUP_MCP (2),
# OUT, E2E_DIR (default tests/e2e), SKIP (space-separated column keys to leave out:
# gander bwrap firejail runsc srt floor nfloor), TABLES (default "true interleaved mcp"), ROUNDS_INTERLEAVED (60),
# ROUNDS_INTERLEAVED_MCP (10), CC.
set -euo pipefail

# Every column, bare included, starts from the same small environment: gander and bwrap
# (--clearenv) drop the caller's environment anyway, and variables such as NODE_EXTRA_CA_CERTS
# (~120 ms per node start here) would otherwise make "bare" look slower than a sandbox.
if [[ -z ${GANDER_BENCH_CLEAN_ENV:-} ]]; then
  keep=(GANDER_BENCH_CLEAN_ENV=1 "PATH=/usr/local/bin:/usr/bin:/bin" "HOME=${HOME:-/root}")
  for v in TERM TMPDIR CC GANDER GANDER_RUN_ARGS RUNS_TRUE WARMUP_TRUE RUNS_MCP WARMUP_MCP OUT \
           E2E_DIR SKIP TABLES ROUNDS_INTERLEAVED ROUNDS_INTERLEAVED_MCP GANDER_BEFORE \
           ROWS ROWS_ROUNDS MONITOR_BENCH STEADY_WARMUP STEADY_CALLS NOTIFY_ITERS GANDER_BEFORE_LABEL; do
    [[ -n ${!v+x} ]] && keep+=("$v=${!v}")
  done
  exec env -i "${keep[@]}" bash "${BASH_SOURCE[0]}" "$@"
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"  # the workspace of every sandbox is the repo root (gander: the cwd)
WS=$REPO

GANDER=${GANDER:-build/launcher/gander}
[[ $GANDER == /* ]] || GANDER=$REPO/$GANDER
read -r -a GANDER_RUN_ARGS <<<"${GANDER_RUN_ARGS:-}"
RUNS_TRUE=${RUNS_TRUE:-100}
WARMUP_TRUE=${WARMUP_TRUE:-5}
RUNS_MCP=${RUNS_MCP:-15}
WARMUP_MCP=${WARMUP_MCP:-2}
OUT=${OUT:-$REPO/bench/results/startup.md}
E2E_DIR=${E2E_DIR:-$REPO/tests/e2e}
TABLES=" ${TABLES:-true interleaved mcp} "
ROUNDS_INTERLEAVED=${ROUNDS_INTERLEAVED:-60}
ROUNDS_INTERLEAVED_MCP=${ROUNDS_INTERLEAVED_MCP:-10}
SKIP=" ${SKIP:-} "
CC=${CC:-cc}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/gander-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

note() { printf '%s\n' "$*" >&2; }
NOTES=()   # lines for the report: skipped peers, caveats
addnote() { note "note: $*"; NOTES+=("$*"); }

command -v hyperfine >/dev/null || { note "hyperfine is not installed (apt-get install hyperfine)"; exit 1; }

# hyperfine -N runs commands without a shell and splits them like a shell would; quote words.
q() { local out="" w; for w in "$@"; do out+="$(printf '%q' "$w") "; done; printf '%s' "${out% }"; }

# Runs a command once and reports whether it works; on failure the first stderr line is the reason.
probe() {  # probe NAME CMD...
  local name=$1; shift
  local rc=0 reason
  "$@" </dev/null >"$TMP/probe.out" 2>"$TMP/probe.err" || rc=$?
  ((rc == 0)) && return 0
  reason=$(grep -v '^\s*$' "$TMP/probe.err" | head -n 3 | tr '\n' ' ')
  addnote "$name skipped: \`$(q "$@")\` failed (exit $rc): ${reason:-no message}"
  return 1
}
skipped() { [[ $SKIP == *" $1 "* ]] && { addnote "$1 skipped: SKIP=\"$(echo $SKIP)\""; return 0; }; return 1; }

# ---------------------------------------------------------------------------------------------
# Column definitions. Each sandbox is a prefix; the payload (/bin/true or the MCP server) follows.
HOME_DIR=${HOME:-/root}
[[ $HOME_DIR == / ]] && HOME_DIR=/root

declare -A PREFIX=()   # key -> quoted prefix
ORDER=()               # keys in table order

# (a) bare
PREFIX[bare]=""
ORDER+=(bare)

# (b) gander
if ! skipped gander; then
  if [[ ! -x $GANDER ]]; then
    addnote "gander skipped: no executable at $GANDER (build it, or set GANDER=...)"
  elif probe gander "$GANDER" run "${GANDER_RUN_ARGS[@]}" -- /bin/true; then
    PREFIX[gander]="$(q "$GANDER" run "${GANDER_RUN_ARGS[@]}" --)"
    ORDER+=(gander)
  fi
fi

# (b2) an earlier gander build side by side (GANDER_BEFORE), for before/after figures from one
# interleaved run.
if [[ -n ${GANDER_BEFORE:-} ]] && ! skipped gander; then
  if probe "gander (before)" "$GANDER_BEFORE" run "${GANDER_RUN_ARGS[@]}" -- /bin/true; then
    PREFIX[before]="$(q "$GANDER_BEFORE" run "${GANDER_RUN_ARGS[@]}" --)"
    ORDER+=(before)
  fi
fi

# (c) bubblewrap, isolation as close to gander's as its flags allow (see README). Merged-/usr
# systems have /bin and /lib* as symlinks into /usr: recreate the symlink (what the host has)
# rather than bind the same directory a second time.
BWRAP_SECCOMP=0
if ! skipped bwrap; then
  if ! command -v bwrap >/dev/null; then
    addnote "bwrap skipped: not installed (apt-get install bubblewrap)"
  else
    bw=(bwrap --unshare-all --die-with-parent --new-session --clearenv
        --setenv PATH /usr/local/bin:/usr/bin:/bin --setenv HOME "$HOME_DIR"
        --ro-bind /usr /usr)
    for p in /bin /sbin /lib /lib32 /lib64 /libx32; do
      if [[ -L $p ]]; then bw+=(--symlink "$(readlink "$p")" "$p")
      elif [[ -d $p ]]; then bw+=(--ro-bind "$p" "$p"); fi
    done
    bw+=(--ro-bind /etc /etc)
    # gander's default profile hides these system paths (policies/profiles/default.yaml, deny:
    # the ~/... entries are under the private $HOME already): /dev/null over files, an empty
    # read-only tmpfs over directories.
    for p in /etc/shadow /etc/shadow- /etc/gshadow /etc/gshadow- /etc/sudoers /etc/sudoers.d \
             /etc/ssh /etc/ssl/private; do
      if [[ -L $p || ! -e $p ]]; then continue
      elif [[ -d $p ]]; then bw+=(--tmpfs "$p" --remount-ro "$p")
      else bw+=(--ro-bind /dev/null "$p"); fi
    done
    # tmpfs first, then the workspace bind, so a workspace under /tmp or $HOME stays visible.
    bw+=(--tmpfs /tmp --tmpfs "$HOME_DIR" --bind "$WS" "$WS" --chdir "$WS"
         --proc /proc --dev /dev --cap-drop ALL)
    # The seccomp filter: bench/seccomp_fd_exec.c compiles gander's denylist with libseccomp
    # and execs bwrap with the BPF on fd 9.
    if "$CC" -O2 -static -o "$TMP/seccomp_fd_exec" bench/seccomp_fd_exec.c -lseccomp \
         2>"$TMP/cc.err" ||
       "$CC" -O2 -o "$TMP/seccomp_fd_exec" bench/seccomp_fd_exec.c -lseccomp 2>"$TMP/cc.err"; then
      BWRAP_SECCOMP=1
      "$TMP/seccomp_fd_exec" --dump "$TMP/filter.bpf" | tail -n 1 | sed 's/^# /bwrap seccomp filter: /' >&2
      bw=("$TMP/seccomp_fd_exec" 9 "${bw[@]}" --seccomp 9)
    else
      addnote "bwrap runs WITHOUT seccomp: could not build bench/seccomp_fd_exec.c ($(head -n 1 "$TMP/cc.err")); install gcc and libseccomp-dev"
    fi
    if probe bwrap "${bw[@]}" /bin/true; then
      PREFIX[bwrap]="$(q "${bw[@]}")"
      ORDER+=(bwrap)
      if ((BWRAP_SECCOMP)); then
        # The helper alone (compile filter + one execve), to see what it adds to the bwrap column.
        PREFIX[helper]="$(q "$TMP/seccomp_fd_exec" 9)"
        ORDER+=(helper)
      fi
    fi
  fi
fi

# (d) firejail, its closest equivalent. --noroot (a user namespace) is refused for root.
if ! skipped firejail; then
  if ! command -v firejail >/dev/null; then
    addnote "firejail skipped: not installed (apt-get install firejail)"
  else
    fj=(firejail --noprofile --quiet --net=none --private --private-tmp --private-dev
        --caps.drop=all --nonewprivs --seccomp --seccomp.block-secondary --ipc-namespace)
    (($(id -u) != 0)) && fj+=(--noroot)
    if probe firejail "${fj[@]}" /bin/true; then
      PREFIX[firejail]="$(q "${fj[@]}")"
      ORDER+=(firejail)
    fi
  fi
fi

# (e) gVisor, rootless, no network, default (ptrace) platform; state in a private dir.
if ! skipped runsc; then
  if ! command -v runsc >/dev/null; then
    addnote "runsc skipped: not installed (apt-get install runsc)"
  else
    mkdir -p "$TMP/runsc"
    rs=(runsc --rootless --network=none --root "$TMP/runsc" do)
    if probe runsc "${rs[@]}" /bin/true; then
      PREFIX[runsc]="$(q "${rs[@]}")"
      ORDER+=(runsc)
    fi
  fi
fi

# (f) Anthropic's sandbox-runtime (srt: bubblewrap + a filtering proxy for the network), from
# bench/srt (npm ci there; it needs ripgrep and socat). Its default settings: no network, the
# host's filesystem readable, writes allowed nowhere but what its settings grant.
# (h) the floor of any stdio relay (bench/relay_floor.c): two blocking copy threads, nothing
# else. Not a sandbox: the steady row's reference for what a relay hop costs on this machine.
if ! skipped floor; then
  if "$CC" -O2 -o "$TMP/relay_floor" bench/relay_floor.c -lpthread 2>"$TMP/cc.err" &&
     probe "relay floor" "$TMP/relay_floor" /bin/true; then
    PREFIX[floor]="$(q "$TMP/relay_floor")"
    ORDER+=(floor)
  else
    addnote "relay floor skipped: could not build bench/relay_floor.c ($(head -n 1 "$TMP/cc.err"))"
  fi
fi

# (i) the floor of seccomp user notification (MONITOR_BENCH floor-exec, with a built
# monitor_bench only): the payload under a filter that notifies what gander's default
# `--files opens` watches, each answered CONTINUE by a minimal supervisor blocked in
# NOTIF_RECV (sync wake-up). Not a sandbox: the MCP row's reference for what watching a node
# server's opens costs on this machine whoever does it.
if [[ -n ${MONITOR_BENCH:-} ]] && ! skipped nfloor; then
  if [[ -x $MONITOR_BENCH ]] &&
     probe "notify floor" "$MONITOR_BENCH" floor-exec --sync 1 --poll 0 --watch opens -- /bin/true; then
    PREFIX[nfloor]="$(q "$MONITOR_BENCH" floor-exec --sync 1 --poll 0 --watch opens --)"
    ORDER+=(nfloor)
  else
    addnote "notify floor skipped: $MONITOR_BENCH floor-exec does not run"
  fi
fi

SRT=$REPO/bench/srt/node_modules/.bin/srt
if ! skipped srt; then
  if [[ ! -x $SRT ]]; then
    addnote "srt skipped: $SRT missing (run \`npm ci\` in bench/srt)"
  elif probe srt "$SRT" /bin/true; then
    PREFIX[srt]="$(q "$SRT")"
    ORDER+=(srt)
  fi
fi

declare -A LABEL=(
  [bare]="bare"
  [gander]="gander run"
  [before]="gander run (before: ${GANDER_BEFORE_LABEL:-GANDER_BEFORE})"
  [bwrap]="bwrap$( ((BWRAP_SECCOMP)) && echo ' + seccomp' || echo ' (NO seccomp)')"
  [helper]="seccomp_fd_exec alone"
  [firejail]="firejail"
  [runsc]="runsc do (gVisor)"
  [srt]="srt (sandbox-runtime)"
  [floor]="relay floor (bench/relay_floor.c)"
  [nfloor]="notify floor (monitor_bench floor-exec --watch opens)"
)

# ---------------------------------------------------------------------------------------------
# Runs one hyperfine over all columns. run_table ID PAYLOAD_DESCRIPTION RUNS WARMUP PAYLOAD...
# (the payload is appended to every prefix; "{client}" in front is the MCP client).
run_table() {
  local id=$1 runs=$2 warmup=$3; shift 3
  local client=$1; shift  # quoted client prefix or ""
  local payload; payload=$(q "$@")
  local args=() key cmd
  for key in "${ORDER[@]}"; do
    if [[ $key == helper ]]; then
      [[ $id == true ]] || continue  # the helper row only makes sense next to /bin/true
      cmd="${PREFIX[helper]} $payload"
    else
      cmd="${PREFIX[$key]:+${PREFIX[$key]} }$payload"
    fi
    [[ -n $client ]] && cmd="$client $cmd"
    args+=(--command-name "${LABEL[$key]}" "$cmd")
    printf '# %s\n%s\n' "${LABEL[$key]}" "$cmd" >>"$TMP/$id.cmds"
  done
  note ""
  note "== hyperfine: $id ($runs runs, $warmup warm-up per column) =="
  hyperfine -N --warmup "$warmup" --runs "$runs" \
    --export-markdown "$TMP/$id.md" --export-csv "$TMP/$id.csv" --export-json "$TMP/$id.json" \
    "${args[@]}" >&2
}

# Overhead ratios from hyperfine's CSV (command,mean,stddev,median,user,system,min,max).
# An overhead (column - bare) is shown with +- 2 standard errors (2*sqrt(sd_a^2 + sd_b^2)/sqrt(n),
# n = runs per column); a ratio whose denominator is not clearly above zero says so
# instead of printing a meaningless number.
ratios() {
  local id=$1 runs=$2
  awk -F, -v n="$runs" -v L_bare="${LABEL[bare]}" -v L_gander="${LABEL[gander]}" \
      -v L_bwrap="${LABEL[bwrap]}" -v L_helper="${LABEL[helper]}" -v L_runsc="${LABEL[runsc]}" '
    NR > 1 { gsub(/^"|"$/, "", $1); mean[$1] = $2; sd[$1] = $3; median[$1] = $4; min[$1] = $7 }
    function has(l) { return (l in mean) }
    function missing(a, b) { return (has(a) ? "" : a) (has(a) || has(b) ? "" : " and ") (has(b) ? "" : b) }
    function noise(a, b) { return 2 * sqrt(sd[a] ^ 2 + sd[b] ^ 2) / sqrt(n) }
    function ms(x) { return sprintf("%.2f ms", x * 1000) }
    function over(l, v) { return sprintf("%s %.2f ms (+- %.2f)", l == L_gander ? "gander" : l == L_bwrap ? "bwrap" : l == L_runsc ? "runsc" : l, (v[l] - v[L_bare]) * 1000, noise(l, L_bare) * 1000) }
    # ratio of the overheads of a and b over bare, or why there is none
    function ratio(a, b, v,   num, den) {
      num = v[a] - v[L_bare]; den = v[b] - v[L_bare]
      if (den <= noise(b, L_bare)) return "n/a: the overhead of " b " is not clearly above zero (" ms(den) ", noise +- " ms(noise(b, L_bare)) ")"
      return sprintf("**%.2f**", num / den)
    }
    function line(stat, v,   s, r, h) {
      s = "- " stat ": overhead over bare:"
      if (has(L_gander)) s = s " " over(L_gander, v) ";"
      if (has(L_bwrap)) s = s " " over(L_bwrap, v) ";"
      if (has(L_runsc)) s = s " " over(L_runsc, v) ";"
      print s
      if (has(L_gander) && has(L_bwrap)) {
        r = ratio(L_gander, L_bwrap, v)
        printf "  - gander/bwrap overhead ratio (gander - bare)/(bwrap - bare) = %s%s\n", r, (r ~ /^\*/ ? ((v[L_gander] - v[L_bare]) <= (v[L_bwrap] - v[L_bare]) ? " (goal <= 1.0: met)" : " (goal <= 1.0: not met)") : "")
        if (has(L_helper) && v[L_bwrap] - v[L_helper] > 0) {
          printf "  - stricter, bwrap without the cost of its seccomp_fd_exec helper (filter compile + one execve): (gander - bare)/(bwrap - helper alone) = %.2f\n", (v[L_gander] - v[L_bare]) / (v[L_bwrap] - v[L_helper])
        }
      } else print "  - gander/bwrap overhead ratio: n/a (" missing(L_gander, L_bwrap) " not measured)"
      if (has(L_gander) && has(L_runsc)) {
        r = ratio(L_runsc, L_gander, v)
        printf "  - runsc/gander overhead ratio (runsc - bare)/(gander - bare) = %s%s\n", r, (r ~ /^\*/ ? ((v[L_runsc] - v[L_bare]) >= 20 * (v[L_gander] - v[L_bare]) ? " (goal >= 20: met)" : " (goal >= 20: not met)") : "")
      } else print "  - runsc/gander overhead ratio: n/a (" missing(L_runsc, L_gander) " not measured)"
    }
    END { line("mean", mean); line("median", median); line("min (least disturbed by other load)", min) }
  ' "$TMP/$id.csv"
}

# Median column next to hyperfine's mean (a 2-core machine is noisy; the median is steadier).
medians() {
  awk -F, 'NR == 1 { print "| Command | Median [ms] |"; print "|:---|---:|"; next }
           { gsub(/^"|"$/, "", $1); printf "| `%s` | %.2f |\n", $1, $4 * 1000 }' "$TMP/$1.csv"
}

# ---------------------------------------------------------------------------------------------
# Table 1: /bin/true.
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
TRUE_OK=0
if [[ $TABLES == *" true "* ]]; then
  run_table true "$RUNS_TRUE" "$WARMUP_TRUE" "" /bin/true
  TRUE_OK=1
fi

# The same columns round-robin, a cross-check when the machine's load changes.
# interleave ID ROUNDS WARMUP PAYLOAD... (for the MCP table the payload is wrapped in the client)
interleave() {
  local id=$1 rounds=$2 warmup=$3 key; shift 3
  : >"$TMP/$id.columns"
  for key in "${ORDER[@]}"; do
    [[ $key == helper && $id != true ]] && continue
    eval "argv=(${PREFIX[$key]})"  # PREFIX holds words quoted by q()
    argv+=("$@")
    [[ $id == mcp ]] && argv=(node "$REPO/bench/mcp_roundtrip.mjs" -- "${argv[@]}")
    printf '%s\0%s\0' "${LABEL[$key]}" "${#argv[@]}" >>"$TMP/$id.columns"
    printf '%s\0' "${argv[@]}" >>"$TMP/$id.columns"
  done
  note ""
  note "== interleaved: $id, $rounds rounds over all columns =="
  node "$REPO/bench/interleave.mjs" "$rounds" "$warmup" "$TMP/$id.columns" >"$TMP/$id.interleaved.md"
}
INTERLEAVED_TRUE=0
if [[ $TABLES == *" interleaved "* ]]; then
  if ! command -v node >/dev/null; then
    addnote "interleaved cross-check skipped: node is not installed"
  else
    interleave true "$ROUNDS_INTERLEAVED" 3 /bin/true
    INTERLEAVED_TRUE=1
  fi
fi

# Table 2: MCP server round trip (needs node and the e2e corpus).
MCP_OK=0
INTERLEAVED_MCP=0
SERVER_JS=""
if [[ $TABLES != *" mcp "* ]]; then
  addnote "MCP table skipped: TABLES=\"$(echo $TABLES)\""
elif ! command -v node >/dev/null; then
  addnote "MCP table skipped: node is not installed"
elif [[ ! -e $E2E_DIR/node_modules/.bin/mcp-server-filesystem ]]; then
  addnote "MCP table skipped: $E2E_DIR/node_modules/.bin/mcp-server-filesystem missing (run \`npm ci\` in $E2E_DIR)"
else
  SERVER_JS=$(readlink -f "$E2E_DIR/node_modules/.bin/mcp-server-filesystem")
  CLIENT="$(q node "$REPO/bench/mcp_roundtrip.mjs") --"
  # Check each column answers tools/list once before timing it; drop the ones that do not.
  KEEP=()
  for key in "${ORDER[@]}"; do
    [[ $key == helper ]] && { KEEP+=(helper); continue; }
    # PREFIX holds words quoted by q(); eval turns them back into words.
    if eval "probe \"MCP under ${LABEL[$key]}\" node \"\$REPO/bench/mcp_roundtrip.mjs\" -- ${PREFIX[$key]} node \"\$SERVER_JS\" \"\$WS\""; then
      KEEP+=("$key")
    fi
  done
  ORDER=("${KEEP[@]}")
  run_table mcp "$RUNS_MCP" "$WARMUP_MCP" "$CLIENT" node "$SERVER_JS" "$WS"
  MCP_OK=1
  if [[ $TABLES == *" interleaved "* ]] && ((ROUNDS_INTERLEAVED_MCP > 0)); then
    interleave mcp "$ROUNDS_INTERLEAVED_MCP" 1 node "$SERVER_JS" "$WS"
    INTERLEAVED_MCP=1
  fi
fi

# Every row of issue 20's table, each interleaved round by round (bench/overhead.py).
ROWS_OK=0
if [[ $TABLES == *" rows "* ]]; then
  : >"$TMP/prefixes"
  for key in "${ORDER[@]}"; do
    [[ $key == helper ]] && continue
    eval "argv=(${PREFIX[$key]})"
    printf '%s\0%s\0' "${LABEL[$key]}" "${#argv[@]}" >>"$TMP/prefixes"
    ((${#argv[@]})) && printf '%s\0' "${argv[@]}" >>"$TMP/prefixes"
  done
  note ""
  note "== rows (bench/overhead.py) =="
  rows_args=()
  [[ -n ${ROWS:-} ]] && rows_args+=(--rows "$ROWS")
  [[ -n ${ROWS_ROUNDS:-} ]] && rows_args+=(--rounds "$ROWS_ROUNDS")
  REPO=$REPO E2E_DIR=$E2E_DIR python3 "$REPO/bench/overhead.py" "$TMP/prefixes" "${rows_args[@]}" \
    >"$TMP/rows.md"
  ROWS_OK=1
fi

# ---------------------------------------------------------------------------------------------
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$(dirname "$OUT")"
{
  echo "# gander start-up benchmark"
  echo
  echo "Generated by \`bench/startup.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); $(uname -sr);"
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')); uid $(id -u);"
  echo "gander \`$GANDER\` (repo commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown), worktree may differ);"
  echo "Versions: $(for p in hyperfine bubblewrap firejail runsc nodejs; do
    printf '%s %s; ' "$p" "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo '?')"; done)node $(node --version 2>/dev/null); srt $(node -p 'require("'"$REPO"'/bench/srt/node_modules/@anthropic-ai/sandbox-runtime/package.json").version' 2>/dev/null || echo '?')."
  echo "Load average before: $LOAD_START, after: $LOAD_END (other work on the machine biases whichever column runs meanwhile)."
  echo "Workspace (every sandbox's cwd and read-write bind): \`$WS\`. Flags of each column: bench/README.md."
  echo
  if ((${#NOTES[@]})); then
    echo "Notes:"
    for n in "${NOTES[@]}"; do echo "- $n"; done
    echo
  fi
  if ((TRUE_OK)); then
    echo "## 1. \`/bin/true\`: start -> exit ($RUNS_TRUE runs, $WARMUP_TRUE warm-up, \`hyperfine -N\`)"
    echo
    cat "$TMP/true.md"
    echo
    medians true
    echo
    echo "Overhead ratios:"
    echo
    ratios true "$RUNS_TRUE"
    echo
  fi
  if ((INTERLEAVED_TRUE)); then
    echo "## 1b. \`/bin/true\`, columns interleaved round-robin ($ROUNDS_INTERLEAVED rounds; cross-check)"
    echo
    echo "Each round runs every column once (\`bench/interleave.mjs\`, node's spawnSync; its"
    echo "spawn overhead is in every column, bare included), so load that comes and goes during the"
    echo "benchmark hits all columns alike, unlike hyperfine's column-after-column order."
    echo
    cat "$TMP/true.interleaved.md"
    echo
  fi
  if ((MCP_OK)); then
    echo "## 2. MCP server-filesystem: start -> initialize -> tools/list answer -> stdin EOF -> exit ($RUNS_MCP runs, $WARMUP_MCP warm-up)"
    echo
    echo "Each command is \`node bench/mcp_roundtrip.mjs -- [SANDBOX] node $SERVER_JS $WS\`."
    echo
    cat "$TMP/mcp.md"
    echo
    medians mcp
    echo
    echo "Overhead ratios:"
    echo
    ratios mcp "$RUNS_MCP"
    echo
  fi
  if ((INTERLEAVED_MCP)); then
    echo "## 2b. MCP round trip, columns interleaved round-robin ($ROUNDS_INTERLEAVED_MCP rounds; cross-check)"
    echo
    cat "$TMP/mcp.interleaved.md"
    echo
  fi
  if ((ROWS_OK)); then
    echo "## 3. Every row of issue 20, interleaved (\`bench/overhead.py\`)"
    echo
    cat "$TMP/rows.md"
  fi
  echo "Exact commands (\`hyperfine -N\`; the /tmp paths are the script's temporary directory):"
  echo
  echo '```'
  ((TRUE_OK)) && cat "$TMP/true.cmds"
  ((MCP_OK)) && cat "$TMP/mcp.cmds"
  echo '```'
  echo
  if ((BWRAP_SECCOMP)); then
    echo "bwrap's seccomp filter (bench/seccomp_fd_exec.c, mirrors sandbox/seccomp_filter.cc):"
    echo '```'
    "$TMP/seccomp_fd_exec" --dump "$TMP/filter.bpf" | tail -n 1 | sed 's/^# //'
    echo '```'
  fi
} >"$TMP/report.md"
cp "$TMP/report.md" "$OUT"
note ""
cat "$TMP/report.md"
note "written to $OUT"
