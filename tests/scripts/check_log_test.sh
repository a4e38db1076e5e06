#!/usr/bin/env bash
# scripts/check_log.sh on fake logs: every form of skip is seen, in any log given (the
# sanitizer pass's too); a clean log is clean; a label under its minimum test count is named.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
source "$here/scripts/check_log.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
expect() {  # expect 0|1 WHAT COMMAND...: the command's status
  local want=$1 what=$2
  shift 2
  "$@" 2>"$dir/err"
  local got=$?
  [[ $got -ne 0 ]] && got=1
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what (status $got, want $want)"; sed 's/^/  /' "$dir/err"; failed=1
  else
    echo "ok: $what"
  fi
}

cat >"$dir/clean.log" <<'LOG'
1/3 Test #1: Unit.A ...........................   Passed    0.01 sec
[  PASSED  ] 1 test.
2/3 Test #2: gvisor.script ....................   Passed    3.20 sec
100% tests passed, 0 tests failed out of 3

Label Time Summary:
e2e           =   1.00 sec*proc (6 tests)
escape        =   9.00 sec*proc (451 tests)
fuzz          =  30.00 sec*proc (6 tests)
gvisor        =   9.00 sec*proc (3 tests)
collector     =   9.00 sec*proc (8 tests)
integration   =  90.00 sec*proc (460 tests)
unit          =  10.00 sec*proc (401 tests)

Total Test time (real) = 100.00 sec
LOG
expect 0 "a clean log has no skip" check_skips "$dir/clean.log"
expect 0 "a full log meets every label's minimum" check_label_counts "$dir/clean.log"

skip_log() { cp "$dir/clean.log" "$dir/$1.log"; printf '%s\n' "$2" >>"$dir/$1.log"; }
skip_log ctest '  5/9 Test #5: Escape.X .........................***Skipped   0.00 sec'
skip_log gtest '[  SKIPPED ] EscapeTest.Ptrace: needs CAP_SYS_ADMIN'
skip_log marker 'GANDER-SKIP: runsc is not installed: the gVisor part is not run'
skip_log helper 'gvisor_test: SKIPPED: runsc is not installed (apt-get install runsc)'
for kind in ctest gtest marker helper; do
  expect 1 "a $kind skip is seen" check_skips "$dir/$kind.log"
done
expect 1 "a skip in the second log (the sanitizer pass) is seen" \
  check_skips "$dir/clean.log" "$dir/gtest.log"
expect 1 "a missing log does not hide a skip in another" \
  check_skips "$dir/none.log" "$dir/marker.log"
# The old notes of the two shell tests are gone: each announces a skip with the marker.
for t in tests/integration/gvisor/gvisor_test.sh tests/integration/learn/syscall_allow_test.sh; do
  expect 1 "$t has no NOTE/# note skip left" grep -qE '"(NOTE|# note):' "$here/$t"
done

sed '/^e2e /d' "$dir/clean.log" >"$dir/no-e2e.log"
expect 1 "a label missing from the summary (no node at configure) fails" \
  check_label_counts "$dir/no-e2e.log"
grep -q 'label e2e ran 0 tests' "$dir/err" || { echo "FAIL: the label is named"; failed=1; }
sed 's/(401 tests)/(12 tests)/' "$dir/clean.log" >"$dir/few.log"
expect 1 "a label under its minimum fails" check_label_counts "$dir/few.log"
GANDER_MIN_TESTS="unit=1" expect 0 "the minimums can be set" check_label_counts "$dir/few.log"
# failure_summary: a failed step names its failed tests and their first failure lines at the
# end of check's output, the part CI shows; a log without ctest's list of them shows its end.
cat >"$dir/failed.log" <<'LOG'
12: ==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010
12/20 Test #12: Collector.Finish ...............***Failed    2.00 sec
95% tests passed, 1 tests failed out of 20

The following tests FAILED:
	 12 - Collector.Finish (Failed)
Errors while running CTest
LOG
expect 1 "a failed test is summed up" failure_summary "$dir/failed.log"
grep -q '12 - Collector.Finish' "$dir/err" || { echo "FAIL: the failed test is named"; failed=1; }
grep -q 'heap-use-after-free' "$dir/err" || { echo "FAIL: its sanitizer line is shown"; failed=1; }
printf '%s\n' '1097: FAIL - learn: server-filesystem answers under gVisor (hello)' >>"$dir/failed.log"
failure_summary "$dir/failed.log" 2>"$dir/err"
grep -q 'FAIL - learn: server-filesystem' "$dir/err" ||
  { echo "FAIL: a shell test's failed check is shown"; failed=1; }
cat >>"$dir/failed.log" <<'LOG'
710: /src/tests/integration/escape/escape_attempts.h:200: Failure
710: Value of: r.timed_out
710: status -1 (TIMED OUT) after 90 s
710:   task 4242 gander state S wchan do_epoll_wait syscall 232
710: [  FAILED  ] Escape/EscapeTest.AttemptFailsInsideSandbox/uid65534_race (90321 ms)
710: unrelated line after the failure
LOG
failure_summary "$dir/failed.log" 2>"$dir/err"
grep -q 'task 4242 gander state S' "$dir/err" ||
  { echo "FAIL: the first gtest failure's message is shown"; failed=1; }
grep -q 'unrelated line after' "$dir/err" &&
  { echo "FAIL: the message stops at the next gtest mark"; failed=1; }
cat >"$dir/shell.log" <<'LOG'
The following tests FAILED:
	1317 - gvisor.backend (Failed)
1317: # 200 name=6 ip=7
1317: # status 1; gander's stderr:
1317: #   gander: the sandbox ended with signal 6
1317: FAIL - network.allow under gvisor runs (exit 0)
1317: # printed after the failure
LOG
failure_summary "$dir/shell.log" 2>"$dir/err"
grep -q 'ended with signal 6' "$dir/err" ||
  { echo "FAIL: what the failed shell test printed before its check is shown"; failed=1; }
sed '/the last lines of/,$d' "$dir/err" | grep -q 'printed after the failure' &&
  { echo "FAIL: only what came before the first failed check"; failed=1; }
cat >"$dir/plain.log" <<'LOG'
1110: PASS: node server learned twice
1110: FAIL: memory-npx: learning run 1 failed (exit 1): npm error code ECONNRESET
1109: a line of another test
1110/1130 Test #1110: learn_twice ......................................***Failed   37.38 sec
The following tests FAILED:
	1110 - learn_twice (Failed)
LOG
failure_summary "$dir/plain.log" 2>"$dir/err"
grep -q 'learning run 1 failed (exit 1): npm error code ECONNRESET' "$dir/err" ||
  { echo "FAIL: the last lines of a test failing in its own words are shown"; failed=1; }
grep -q 'a line of another test' "$dir/err" &&
  { echo "FAIL: only the failed test's lines"; failed=1; }
grep -q '\.\.\.\.\.' "$dir/err" && { echo "FAIL: ctest's dots are shortened"; failed=1; }
printf '100%% tests passed, 0 tests failed out of 3\nErrors while running CTest\nOutput from these tests are in: x\n' >"$dir/ctest-error.log"
expect 1 "a failed step whose log lists no failed test shows its end" failure_summary "$dir/ctest-error.log"
grep -q 'Errors while running CTest' "$dir/err" || { echo "FAIL: the log's end is shown"; failed=1; }
printf 'ld.lld: error: undefined symbol: foo\nmake: *** [Makefile:62: sanitize] Error 2\n' >"$dir/build.log"
expect 1 "a log without a verdict (a failed build) is summed up" failure_summary "$dir/build.log"
grep -q 'undefined symbol' "$dir/err" || { echo "FAIL: the build error is shown"; failed=1; }
exit $failed
