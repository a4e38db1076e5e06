#!/usr/bin/env bash
# What scripts/check.sh reads in the test logs, apart so that it can be tested on fake logs
# (tests/check_log_test.sh). Sourced by check.sh; its functions print what they found on
# stderr and return non-zero when there is something to report.
#
# A skip is any of:
#   ***Skipped            ctest's verdict (exit code 77, or a gtest skip seen by ctest)
#   [  SKIPPED ]          gtest's, also inside an entry ctest counts as passed (a script that
#                         runs a gtest binary, a uid 65534 variant)
#   GANDER-SKIP:          the marker our shell tests print for a part they did not run
#                         (tests/integration/gvisor/gvisor_test.sh, tests/integration/learn/syscall_allow_test.sh ...)
#   SKIPPED:              the skip() helper of the shell tests before they exit 77

# Minimum number of tests per ctest label under CI=true: a configure that misses node,
# python3, runsc or clang drops whole tiers without a failure otherwise. LABEL=N words.
GANDER_MIN_TESTS=${GANDER_MIN_TESTS:-"unit=400 integration=450 escape=450 e2e=6 fuzz=6 gvisor=3 collector=8"}

skip_pattern='\*\*\*Skipped|\[  SKIPPED \]|GANDER-SKIP:|(^|[ :])SKIPPED: '

# check_skips LOG...: the skip lines of each log, with the log's name. 1 when any.
check_skips() {
  local found=0 log
  for log in "$@"; do
    [[ -f $log ]] || continue
    if grep -qE "$skip_pattern" "$log"; then
      found=1
      grep -nE "$skip_pattern" "$log" | sed "s|^|$log:|" >&2
    fi
  done
  return $found
}

# check_label_counts LOG: compares ctest's "Label Time Summary" in LOG with GANDER_MIN_TESTS.
# 1 when a label ran fewer tests than its minimum (or not at all), naming it.
check_label_counts() {
  local log=$1 bad=0 want label min got
  for want in $GANDER_MIN_TESTS; do
    label=${want%%=*} min=${want#*=}
    got=$(sed -n '/^Label Time Summary:/,/^$/p' "$log" |
      sed -nE "s/^${label} +=.*\(([0-9]+) tests?\)\$/\1/p" | head -1)
    got=${got:-0}
    if ((got < min)); then
      echo "check: label $label ran $got tests, fewer than $min (a tier dropped out at configure?)" >&2
      bad=1
    fi
  done
  return $bad
}

# failure_summary LOG: what a failed step's log says went wrong, short enough for the tail of
# CI's output (which is all CI shows): the failed tests ctest lists, the log's first 10
# sanitizer, gtest, shell-test check ("FAIL - ") or timeout lines, the first gtest failure's
# message (30 lines) and the "# " lines the first failed shell test printed before that check
# (20); a failed step without that
# list (its build failed, or ctest itself stopped) shows the log's last lines instead. Called for
# failed steps only.
failure_summary() {
  local log=$1 failed
  [[ -f $log ]] || { echo "check: $log: no log" >&2; return 1; }
  failed=$(sed -n '/^The following tests FAILED:/,/^Errors while running CTest/p' "$log" |
    grep -E '^[[:space:]]+[0-9]+ - ')
  if [[ -z $failed ]]; then
    echo "check: $log names no failed test; its last lines:" >&2
    tail -n 25 "$log" | sed 's/^/  /' >&2
    return 1
  fi
  echo "check: failed in $log:" >&2
  printf '%s\n' "$failed" >&2
  grep -nE '==[0-9]+==ERROR|runtime error:|\[  FAILED  \] .*\(|Failure$|: FAIL - |\*\*\*(Failed|Timeout)' "$log" |
    head -n 10 | sed -E 's/\.{4,}/ ... /' | cut -c1-300 | sed "s|^|  $log:|" >&2
  # The first gtest failure's message (a timed-out run's ends with what each process was
  # doing), from ctest's test-numbered copy of the output: its lines until the next gtest mark.
  local first
  first=$(grep -nE '^[0-9]+: .*Failure$' "$log" | head -n 1 | cut -d: -f1)
  if [[ -n $first ]]; then
    echo "check: the first failure's message ($log:$first):" >&2
    tail -n +"$((first + 1))" "$log" | sed -E '/^[0-9]+: \[ +(FAILED|OK|RUN) +\]/q' |
      grep -vE '^[0-9]+: \[ +(FAILED|OK|RUN) +\]' | head -n 30 | cut -c1-240 | sed 's/^/  | /' >&2
  fi
  # The first failed shell-test check: the diagnostic lines ("# ...") that test printed before
  # it (what it saw: a command's output, gander's stderr), from ctest's test-numbered copy.
  local fail_line test_no
  fail_line=$(grep -nE '^[0-9]+: FAIL - ' "$log" | head -n 1 | cut -d: -f1)
  if [[ -n $fail_line ]]; then
    test_no=$(sed -n "${fail_line}p" "$log" | cut -d: -f1)
    echo "check: what that test printed before its first failed check ($log:$fail_line):" >&2
    head -n "$fail_line" "$log" | grep -E "^${test_no}: #" | tail -n 20 | cut -c1-240 |
      sed 's/^/  | /' >&2
  fi
  # Last, nearest the end that CI shows: the last lines each failed test printed (up to three
  # tests), whatever its form of failure ("FAIL: ...", a gander error, a timeout's last words).
  local no name
  while read -r no name; do
    echo "check: the last lines of $name ($log, lines \"$no: ...\"):" >&2
    grep -E "^$no: " "$log" | grep -vE "^$no: *$" | tail -n 8 | cut -c1-240 | sed 's/^/  | /' >&2
  done < <(printf '%s\n' "$failed" | sed -nE 's/^[[:space:]]+([0-9]+) - ([^ ]+).*/\1 \2/p' | head -n 3)
  return 1
}
