#!/usr/bin/env bash
# The start-up regression check (ctest bench.startup_ratio, issue 20): a short interleaved run
# of `/bin/true` bare, under gander and under bwrap + seccomp (bench/startup.sh with
# TABLES=interleaved), then the gander/bwrap overhead ratio printed. Reported, never asserted:
# the exit status is 0 whatever the timings, non-zero only when a column cannot run (a broken
# gander start is a failure), 77 (skipped) when bwrap or node is missing.
#
# Knobs: GANDER (build/launcher/gander), RATIO_ROUNDS (20), RATIO_OUT (where the report goes).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GANDER=${GANDER:-$REPO/build/launcher/gander}
OUT=${RATIO_OUT:-${TMPDIR:-/tmp}/gander-startup-ratio.md}
for tool in bwrap node hyperfine; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 77; }
done
"$GANDER" run -- /bin/true || { echo "FAIL: \`gander run -- /bin/true\` does not run"; exit 1; }
GANDER=$GANDER OUT=$OUT TABLES=interleaved ROUNDS_INTERLEAVED=${RATIO_ROUNDS:-20} \
  SKIP="firejail runsc srt" "$REPO/bench/startup.sh" >/dev/null
grep -q '`gander run`' "$OUT" || { echo "FAIL: no gander column in $OUT"; cat "$OUT"; exit 1; }
grep -q '`bwrap' "$OUT" || { echo "SKIPPED: bwrap does not run here"; sed -n '/^Notes:/,/^$/p' "$OUT"; exit 77; }
echo "start-up, /bin/true, interleaved (report: $OUT; load average: $(cut -d' ' -f1-3 /proc/loadavg)):"
sed -n '/^## 1b/,/^Exact commands/p' "$OUT" | grep -E '^\| |paired overhead|gander/bwrap' || true
echo "(information only: no timing is asserted)"
