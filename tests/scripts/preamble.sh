# What every shell test starts with; sourced, never run. Set TEST_NAME first:
#   TEST_NAME=goose_cli_test
#   . "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"
# Then:
#   ok TEXT / bad TEXT          one result each; bad counts into $fails
#   check TEXT COMMAND...       ok when COMMAND succeeds, else bad
#   has FILE TEXT               FILE holds TEXT (fixed string)
#   again_as_nobody SCRATCH ARGS...  as root, the same script again as uid 65534
#   skip REASON                 exit 77 (CTest's SKIP_RETURN_CODE), saying why; under CI=true
#                               nothing may skip, so it is a failure (exit 1) there
# shellcheck shell=bash
fails=0

skip() {
  echo "$TEST_NAME: SKIPPED: $1" >&2
  if [ "${CI:-}" = true ]; then
    echo "$TEST_NAME: CI=true: a skip is a failure" >&2
    exit 1
  fi
  exit 77
}
ok() { echo "ok   - $1"; }
bad() {
  echo "FAIL - $1" >&2
  fails=$((fails + 1))
}
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
has() { grep -qF -- "$2" "$1"; }  # has FILE TEXT

# again_as_nobody SCRATCH ARGS...: as root (and not already in the second run), runs this
# script again as uid 65534 with ARGS and a new directory under SCRATCH as its last argument;
# exits 1 when that run fails.
SELF=${SELF:-$(realpath "$0")}
again_as_nobody() {
  local scratch=$1 nobody status
  shift
  if [ "$(id -u)" != 0 ] || [ -n "${GANDER_AS_NOBODY:-}" ] || ! command -v setpriv >/dev/null; then
    return 0
  fi
  nobody=$(mktemp -d "$scratch/nobody.XXXXXX")
  chmod 777 "$nobody"
  GANDER_AS_NOBODY=1 setpriv --reuid=65534 --regid=65534 --clear-groups "$SELF" "$@" "$nobody"
  status=$?
  rm -rf "$nobody"
  [ "$status" -eq 0 ] || { echo "$TEST_NAME: FAIL as uid 65534" >&2; exit 1; }
}
