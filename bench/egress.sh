#!/usr/bin/env bash
# gander egress benchmark (issue 5): what the connect broker costs, direct vs through gander,
# side by side in one run.
#
#   bench/egress.sh                          # GANDER defaults to build/launcher/gander
#   GANDER=/tmp/build/launcher/gander ROUNDS=7 bench/egress.sh
#
# A server (bench/egress_bench.cc `serve`) on 127.0.0.2, outside the sandbox's network
# namespace; the same client binary runs directly and under `gander run --collector off` with
# a policy allowing 127.0.0.2:PORT, round-robin (each round runs every column once, so load
# that comes and goes hits both alike):
#   1. latency: LAT_REQUESTS x (connect, GET of a 100-byte body over HTTP/1.0, read to EOF,
#      close), one at a time, per-request p50/p90/p99 measured inside the client (gander's own
#      start-up is not in it), and the connect() call alone;
#   2. throughput: one GET of THROUGHPUT_BYTES (default 1 GB), connect to EOF.
# Writes markdown to bench/results/egress.md ($OUT). A benchmark, not a test: no timing decides
# the exit status.
#
# Knobs: GANDER, EGRESS_BENCH (a prebuilt egress_bench; else built with $CXX into a temp dir),
# ROUNDS (5), LAT_REQUESTS (2000), THROUGHPUT_BYTES (1000000000), OUT, CXX.
set -euo pipefail

if [[ -z ${GANDER_BENCH_CLEAN_ENV:-} ]]; then
  keep=(GANDER_BENCH_CLEAN_ENV=1 "PATH=/usr/local/bin:/usr/bin:/bin" "HOME=${HOME:-/root}")
  for v in TERM TMPDIR CXX GANDER EGRESS_BENCH ROUNDS LAT_REQUESTS THROUGHPUT_BYTES OUT; do
    [[ -n ${!v+x} ]] && keep+=("$v=${!v}")
  done
  exec env -i "${keep[@]}" bash "${BASH_SOURCE[0]}" "$@"
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GANDER=${GANDER:-build/launcher/gander}
[[ $GANDER == /* ]] || GANDER=$REPO/$GANDER
ROUNDS=${ROUNDS:-5}
LAT_REQUESTS=${LAT_REQUESTS:-2000}
THROUGHPUT_BYTES=${THROUGHPUT_BYTES:-1000000000}
OUT=${OUT:-$REPO/bench/results/egress.md}
CXX=${CXX:-c++}
PY=/usr/bin/python3

note() { printf '%s\n' "$*" >&2; }
die() { note "egress.sh: $*"; exit 1; }
[[ -x $GANDER ]] || die "no gander at $GANDER (build it, or set GANDER)"
[[ -x $PY ]] || die "python3 is not installed"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/gander-ebench.XXXXXX")
SERVER_PID=""
HOLD_PID=""
cleanup() {
  for pid in $SERVER_PID $HOLD_PID; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
# gander's stdin: a pipe that stays open (at stdin EOF gander ends the extension after 1 s, as
# when Goose closes the session).
exec {HOLD}< <(exec sleep 1000000)
HOLD_PID=$!

# The client runs from the workspace (the sandbox sees it wherever the build tree is).
BENCH=$TMP/egress_bench
if [[ -n ${EGRESS_BENCH:-} ]]; then
  cp "$EGRESS_BENCH" "$BENCH"
else
  "$CXX" -O2 -std=c++20 -pthread -Wall -Wextra -o "$BENCH" "$REPO/bench/egress_bench.cc" ||
    die "cannot build egress_bench"
fi

"$BENCH" serve 127.0.0.2 >"$TMP/port" &
SERVER_PID=$!
for _ in $(seq 50); do [[ -s $TMP/port ]] && break; sleep 0.1; done
PORT=$(cat "$TMP/port")
[[ -n $PORT ]] || die "the server did not start"
printf 'version: 1\nextends: default\nnetwork:\n  allow:\n    - {host: 127.0.0.2, ports: [%s]}\n' \
  "$PORT" >"$TMP/policy.yaml"
GANDER_CMD=("$GANDER" run --collector off --policy "$TMP/policy.yaml" --workspace "$TMP" --)

# column: direct | gander; rest: the client's arguments. Appends "<column> <client line>".
measure() {
  local column=$1
  shift
  local line
  if [[ $column == direct ]]; then
    line=$("$BENCH" "$@") || die "direct $* failed (status $?)"
  else
    line=$("${GANDER_CMD[@]}" "$BENCH" "$@" <&"$HOLD") || die "gander $* failed (status $?)"
  fi
  [[ -n $line ]] || die "$column $* printed nothing"
  note "  $column: $line"
  printf '%s %s\n' "$column" "$line" >>"$TMP/results"
}

for round in $(seq "$ROUNDS"); do
  note "round $round/$ROUNDS"
  for column in direct gander; do
    measure "$column" latency 127.0.0.2 "$PORT" "$LAT_REQUESTS"
  done
  for column in gander direct; do
    measure "$column" throughput 127.0.0.2 "$PORT" "$THROUGHPUT_BYTES"
  done
done

COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
"$PY" - "$TMP/results" "$OUT" "$COMMIT" "$LOAD" "$ROUNDS" "$LAT_REQUESTS" "$THROUGHPUT_BYTES" \
  "$(uname -r)" <<'EOF'
import statistics, sys
results, out, commit, load, rounds, requests, nbytes, kernel = sys.argv[1:]
rows = {}
for line in open(results):
    column, kind, *fields = line.split()
    values = dict(f.split("=") for f in fields)
    rows.setdefault((column, kind), []).append({k: float(v) for k, v in values.items()})

def med(column, kind, key):
    return statistics.median(r[key] for r in rows[(column, kind)])

def spread(column, kind, key):
    values = sorted(r[key] for r in rows[(column, kind)])
    return f"{values[0]:.0f}-{values[-1]:.0f}" if key.endswith("_us") else \
        f"{values[0]:.2f}-{values[-1]:.2f}"

lines = [
    "# The egress broker against a direct connection (bench/egress.sh)",
    "",
    f"`bench/egress.sh` (ROUNDS={rounds}, LAT_REQUESTS={requests}, THROUGHPUT_BYTES={nbytes}), "
    f"commit {commit}, kernel {kernel}, 2-core machine, load average at the end: {load}.",
    "Server on 127.0.0.2 (outside the sandbox), the same client binary directly and under "
    "`gander run --collector off` with the policy allowing 127.0.0.2:PORT; columns "
    "round-robin, each figure the median over the rounds (range over rounds in brackets).",
    "",
    "| measurement | direct | through gander | added |",
    "|---|---:|---:|---:|",
]
for q in ("p50", "p90", "p99"):
    d, g = med("direct", "latency", q + "_us"), med("gander", "latency", q + "_us")
    lines.append(
        f"| connect + 100-byte HTTP GET, {q} | {d:.0f} us ({spread('direct', 'latency', q + '_us')})"
        f" | {g:.0f} us ({spread('gander', 'latency', q + '_us')}) | {g - d:.0f} us |")
d, g = med("direct", "latency", "mean_us"), med("gander", "latency", "mean_us")
lines.append(f"| connect + 100-byte HTTP GET, mean | {d:.0f} us | {g:.0f} us | {g - d:.0f} us |")
for q in ("p50", "p90"):
    key = f"connect_{q}_us"
    d, g = med("direct", "latency", key), med("gander", "latency", key)
    lines.append(f"| of which connect() alone, {q} | {d:.0f} us ({spread('direct', 'latency', key)})"
                 f" | {g:.0f} us ({spread('gander', 'latency', key)}) | {g - d:.0f} us |")
d, g = med("direct", "throughput", "gb_per_s"), med("gander", "throughput", "gb_per_s")
lines.append(
    f"| one {int(nbytes) / 1e9:g} GB download | {d:.2f} GB/s ({spread('direct', 'throughput', 'gb_per_s')})"
    f" | {g:.2f} GB/s ({spread('gander', 'throughput', 'gb_per_s')}) | {100 * g / d:.0f} % of direct |")
added = med("gander", "latency", "p50_us") - med("direct", "latency", "p50_us")
ratio = 100 * g / d
lines += [
    "",
    "| goal | result | |",
    "|---|---|---|",
    f"| added latency per request < 0.5 ms | {added / 1000:.3f} ms (p50) | "
    f"{'met' if added < 500 else '**not met**'} |",
    f"| 1 GB throughput >= 50 % of direct | {ratio:.0f} % | "
    f"{'met' if ratio >= 50 else '**not met**'} |",
    "",
]
text = "\n".join(lines)
open(out, "w").write(text)
print(text)
EOF
