#!/usr/bin/env bash
# Learning mode's cost: an MCP server's start -> tools/list -> exit (bench/mcp_roundtrip.mjs),
# bare, under `gander run` (enforce, the default `--files opens`) and under `gander run --mode
# learn` (every syscall through the supervisor and counted, every file access logged), in one
# hyperfine run so every column sees the same machine.
#   bench/learn.sh                       # GANDER defaults to build/launcher/gander
#   GANDER=/path/gander RUNS=20 OUT=bench/results/learn.md bench/learn.sh
# The server is server-filesystem from tests/e2e (tests/e2e/install.sh installs it). Audit logs
# go to a scratch directory; `--collector off` so no collector outlives the benchmark.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
GANDER=${GANDER:-build/launcher/gander}
[[ $GANDER == /* ]] || GANDER=$REPO/$GANDER
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
OUT=${OUT:-$REPO/bench/results/learn.md}
SERVER_JS=$REPO/tests/e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }
[[ -x $GANDER ]] || { echo "no gander at $GANDER" >&2; exit 1; }
[[ -f $SERVER_JS ]] || { echo "run tests/e2e/install.sh first" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
WS=$scratch/ws
mkdir -p "$WS"
NODE=$(command -v node)
CLIENT=(node "$REPO/bench/mcp_roundtrip.mjs" --)
run=("$GANDER" run --collector off --workspace "$WS")
cmd_bare="${CLIENT[*]} $NODE $SERVER_JS $WS"
cmd_enforce="${CLIENT[*]} ${run[*]} --name bench-enforce --audit-log $scratch/enforce.jsonl -- $NODE $SERVER_JS $WS"
cmd_learn="${CLIENT[*]} ${run[*]} --mode learn --name bench-learn --audit-log $scratch/learn.jsonl -- $NODE $SERVER_JS $WS"

hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-markdown "$scratch/table.md" \
  --export-json "$scratch/result.json" \
  -n bare "$cmd_bare" -n "gander (enforce)" "$cmd_enforce" -n "gander --mode learn" "$cmd_learn" >&2

census=$(grep -c '"action":"counted"' "$scratch/learn.jsonl" || true)
calls=$(jq -s '[.[] | select(.kind=="syscall" and .syscall.action=="counted") | .syscall.count] | add' \
  "$scratch/learn.jsonl")
runs_logged=$(grep -c '"what":"start"' "$scratch/learn.jsonl" || true)
medians=$(jq -r '.results[] | "| \(.command) | \(.median*1000 | floor) ms | \(.mean*1000 | floor) ms +- \(.stddev*1000 | floor) | \(.min*1000 | floor) ms |"' \
  "$scratch/result.json")
{
  echo "# Learning mode's overhead: MCP server start -> tools/list -> exit"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$REPO" rev-parse --short HEAD), $(nproc) cores,"
  echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg). \`bench/learn.sh\`: hyperfine -N,"
  echo "$RUNS runs and $WARMUP warm-up per column, one run. Server: server-filesystem (node $(node --version))."
  echo
  echo "| column | median | mean +- sd | min |"
  echo "|---|---:|---:|---:|"
  echo "$medians"
  echo
  echo "Learning runs logged: $runs_logged; census lines: $census; syscalls counted in all: $calls"
  echo "(about $(( ${calls:-0} / (runs_logged > 0 ? runs_logged : 1) )) per start -> tools/list -> exit, each a round trip through gander's supervisor)."
  echo
  echo "Commands (\`hyperfine -N\`):"
  echo
  echo '```'
  echo "bare:    $cmd_bare"
  echo "enforce: $cmd_enforce"
  echo "learn:   $cmd_learn"
  echo '```'
  echo
  echo "hyperfine's own table:"
  echo
  cat "$scratch/table.md"
} >"$OUT"
cat "$OUT"
