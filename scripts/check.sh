#!/usr/bin/env bash
# The whole test suite, in the order that makes a failure cheapest to read:
#   1. formatting of our sources (clang-format)
#   2. unit + integration tiers under ASan/UBSan (a separate Debug build)
#   3. every tier on the normal build: unit, integration (the escape suite as root and as
#      uid 65534), end-to-end with real MCP servers
# Under CI=true a skipped test is a failure: CI runs as root on a kernel with every feature.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
failed=0
failures=()

step() { printf '\n== %s\n' "$*" >&2; }
# CI shows only the tail of the output: name every failed step again at the end.
# fail WHAT [LOG]: a LOG's failed tests are summed up at the end too (failure_summary).
fail() {
  failed=1
  failures+=("$1")
  if [[ -n ${2:-} ]]; then failed_logs+=("$2"); fi
}
failed_logs=()

step "clang-format"
make --no-print-directory format-check || fail "clang-format: run make format"

source scripts/check_log.sh

# The full output of every test, passing ones included (-V): a skip inside a passing entry is
# seen only there. The console gets ctest's usual lines.
progress='^ *[0-9]+/[0-9]+ Test|tests passed|tests failed|^The following|^[[:space:]]+[0-9]+ - |^Label|sec\*proc'

step "unit + integration under ASan/UBSan"
sanitize_log="$build/sanitize.log"
make --no-print-directory sanitize BUILD="$build" CTEST_FLAGS=-V >"$sanitize_log" 2>&1
[[ $? -eq 0 ]] || fail "unit + integration under ASan/UBSan (log: $sanitize_log)" "$sanitize_log"
grep -E "$progress" "$sanitize_log" >&2

step "all tiers"
log="$build/ctest.log"
ctest --test-dir "$build" -V --output-on-failure --timeout 900 -j"${TEST_JOBS:-3}" >"$log" 2>&1
[[ $? -eq 0 ]] || fail "all tiers (ctest; log: $log)" "$log"
grep -E "$progress" "$log" >&2

if ! check_skips "$sanitize_log" "$log"; then
  echo "check: some tests, or parts of them, were skipped (lines above)" >&2
  if [[ ${CI:-} == true ]]; then
    echo "check: CI runs as root on a kernel with every feature: nothing may skip" >&2
    fail "skipped tests under CI=true"
  fi
fi
if [[ ${CI:-} == true ]] && ! check_label_counts "$log"; then
  fail "too few tests in a label under CI=true"
fi
for l in "${failed_logs[@]}"; do failure_summary "$l"; done
for f in "${failures[@]}"; do echo "check: FAILED: $f" >&2; done
((failed)) || echo "check: all steps passed" >&2
exit $failed
