#!/usr/bin/env bash
# The gVisor backend against the native one, side by side in one hyperfine run:
#   true      /bin/true, start -> exit
#   mcp       server-filesystem: start -> initialize -> tools/list -> stdin EOF -> exit
#             (bench/mcp_roundtrip.mjs, tests/e2e/node_modules); and, outside hyperfine, the
#             round trip alone: CALL_SESSIONS sessions per backend of CALLS tools/list each
#             (mcp_roundtrip.mjs --calls), the median of each session's percentiles
#   syscalls  dd of 200,000 one-byte blocks /dev/zero -> /dev/null (400,000 read/write calls)
#   compute   awk summing 20 million integers (no syscalls to speak of)
#   net       10 curl downloads of 1 MiB from a node HTTP server on 127.0.0.2, allowed by the
#             policy: through gander's egress broker (gVisor: the sentry's connects, notified)
# each under `gander run --backend native` and `--backend gvisor`. Results (markdown) go to
# bench/results/gvisor.md ($OUT). A benchmark, not a test: no timing decides the exit status.
#
#   bench/gvisor.sh                  # GANDER defaults to build/launcher/gander
#   RUNS=10 GANDER=/path/to/gander bench/gvisor.sh
#   WORKLOADS="net" OUT=bench/results/gvisor-net.md bench/gvisor.sh   # a subset
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
GANDER=${GANDER:-build/launcher/gander}
[[ $GANDER == /* ]] || GANDER=$REPO/$GANDER
RUNS=${RUNS:-10}
CALLS=${CALLS:-200}
CALL_SESSIONS=${CALL_SESSIONS:-3}
WORKLOADS=${WORKLOADS:-true mcp syscalls compute net}
has() { [[ " $WORKLOADS " == *" $1 "* ]]; }
OUT=${OUT:-$REPO/bench/results/gvisor.md}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gander-bench-gvisor.XXXXXX")
server_pid=
trap 'rm -rf "$TMP"; [ -z "$server_pid" ] || kill "$server_pid"' EXIT

command -v hyperfine >/dev/null || { echo "bench/gvisor.sh: hyperfine is missing" >&2; exit 1; }
command -v runsc >/dev/null || { echo "bench/gvisor.sh: runsc is missing" >&2; exit 1; }
SERVER=$REPO/tests/e2e/node_modules/.bin/mcp-server-filesystem
! has mcp || [[ -x $SERVER ]] || { echo "bench/gvisor.sh: run tests/e2e/install.sh first" >&2; exit 1; }
if has net; then
  cat >"$TMP/server.js" <<'JS'
const body = Buffer.alloc(1 << 20, 120);
const s = require("http").createServer((q, r) => r.end(body));
s.listen(0, "127.0.0.2", () => console.log(s.address().port));
JS
  node "$TMP/server.js" >"$TMP/port" &
  server_pid=$!
  for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
  port=$(cat "$TMP/port")
  printf 'version: 1\nextends: default\nnetwork:\n  allow:\n    - {host: 127.0.0.2, ports: [%s]}\n' \
    "$port" >"$TMP/net.yaml"
fi

# gander ends an extension 1 s after its stdin closes (Goose's way of stopping it): the
# workloads read a pipe this script keeps open, so they run to their own end.
mkfifo "$TMP/stdin"
exec 3<>"$TMP/stdin"
g() {
  local policy=
  [ "${2:-}" = net ] && policy="--policy $TMP/net.yaml"
  echo "$GANDER run --collector off --audit-log $TMP/audit-$1.jsonl --backend $1 $policy --"
}
in="< $TMP/stdin"
commands=()
names=()
for backend in native gvisor; do
  ! has true || { names+=("true ($backend)") && commands+=("$(g "$backend") /bin/true $in"); }
  ! has mcp || { names+=("mcp ($backend)") && commands+=("node $REPO/bench/mcp_roundtrip.mjs -- $(g "$backend") $SERVER $REPO"); }
  ! has syscalls || { names+=("syscalls ($backend)") && commands+=("$(g "$backend") /bin/dd if=/dev/zero of=/dev/null bs=1 count=200000 status=none $in"); }
  ! has compute || { names+=("compute ($backend)") && commands+=("$(g "$backend") /usr/bin/awk 'BEGIN{for(i=0;i<20000000;i++)s+=i}' $in"); }
  ! has net || { names+=("net ($backend)") && commands+=("$(g "$backend" net) /bin/sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do curl -sf -o /dev/null http://127.0.0.2:$port/ || exit 1; done' $in"); }
done
args=()
for i in "${!commands[@]}"; do args+=(-n "${names[$i]}" "${commands[$i]}"); done

hyperfine --warmup 1 --runs "$RUNS" --export-json "$TMP/h.json" --export-markdown "$TMP/h.md" \
  "${args[@]}" >&2

# The MCP round trip through a running server, start-up left out: per backend, the median
# over the sessions of each session's p50/p90/p99.
roundtrips=()
if has mcp; then
  for backend in native gvisor; do
    for _ in $(seq "$CALL_SESSIONS"); do
      node "$REPO/bench/mcp_roundtrip.mjs" --calls "$CALLS" -- $(g "$backend") "$SERVER" "$REPO" \
        2>&1 >/dev/null | sed -n "s/^mcp_roundtrip calls=[0-9]* /$backend /p" >>"$TMP/calls"
    done
  done
  for backend in native gvisor; do
    row="| $backend"
    for q in p50 p90 p99; do
      row+=" | $(sed -n "s/^$backend .*${q}_us=\([0-9.]*\).*/\1/p" "$TMP/calls" | sort -n |
        awk '{v[NR]=$1} END {if (NR) printf "%.0f us", v[int((NR+1)/2)]; else printf "-"}')"
    done
    roundtrips+=("$row |")
  done
fi

{
  echo "# gVisor backend vs native (bench/gvisor.sh)"
  echo
  echo "$(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)," \
    "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(runsc --version | head -1)," \
    "platform ${GANDER_RUNSC_PLATFORM:-ptrace}, $RUNS runs each (hyperfine through its shell, the same for every column; 1 warm-up)."
  echo
  cat "$TMP/h.md"
  echo
  echo "| workload | native median | gvisor median | gvisor - native | gvisor / native |"
  echo "|---|---:|---:|---:|---:|"
  WORKLOADS=$WORKLOADS jq -r '.results | map({key: .command, value: .median}) | from_entries as $m
    | ($ENV.WORKLOADS | split(" ") | map(select(. != "")))[] as $w
    | $m["\($w) (native)"] as $n | $m["\($w) (gvisor)"] as $g
    | "| \($w) | \($n*1000|round) ms | \($g*1000|round) ms | \((($g-$n)*1000)|round) ms | \(($g/$n*100|round)/100) |"' \
    "$TMP/h.json"
  echo
  echo "CPU time per run (user + system of gander, runsc and the workload, hyperfine's means):"
  echo
  echo "| workload | native CPU | gvisor CPU | gvisor / native |"
  echo "|---|---:|---:|---:|"
  WORKLOADS=$WORKLOADS jq -r '.results | map({key: .command, value: (.user + .system)}) | from_entries as $m
    | ($ENV.WORKLOADS | split(" ") | map(select(. != "")))[] as $w
    | $m["\($w) (native)"] as $n | $m["\($w) (gvisor)"] as $g
    | "| \($w) | \($n*1000|round) ms | \($g*1000|round) ms | \(($g/$n*100|round)/100) |"' \
    "$TMP/h.json"
  if ((${#roundtrips[@]})); then
    echo
    echo "MCP round trip through the running server (tools/list, $CALL_SESSIONS sessions x $CALLS calls per backend, the median session):"
    echo
    echo "| backend | p50 | p90 | p99 |"
    echo "|---|---:|---:|---:|"
    printf '%s\n' "${roundtrips[@]}"
  fi
} >"$OUT"
cat "$OUT"
