# What every shell test starts with; sourced, never run. Set TEST_NAME first:
#   TEST_NAME=goose_cli_test
#   . "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"
# Then:
#   ok TEXT / bad TEXT          one result each; bad counts into $fails
#   check TEXT COMMAND...       ok when COMMAND succeeds, else bad
#   has FILE TEXT               FILE holds TEXT (fixed string)
#   again_as_nobody SCRATCH ARGS...  as root, the same script again as uid 65534
#   rerun_as_nobody NAME SCRATCH CMD...  as root, CMD again as uid 65534, each word
#                               NOBODY_SCRATCH in it a fresh directory under SCRATCH
#   skip REASON                 exit 77 (CTest's SKIP_RETURN_CODE), saying why (GANDER-SKIP:,
#                               which scripts/check.sh reads); under CI=true nothing may skip,
#                               so it is a failure (exit 1) there; skip_test NAME REASON the same
#   private_home WORLD          HOME and the XDG directories inside WORLD, exported
#   scratch_world TEMPLATE      world: a new directory (mktemp -d TEMPLATE), removed at exit,
#                               and the collector whose pid the script puts in $collector stopped
#   finish NAME OUT_DIR         the verdict; on failure OUT_DIR's files are shown
#   sandbox_mode_flags MODE     `gander run` flags for namespaces|no-namespaces|gvisor in mode_flags
# shellcheck shell=bash
fails=0

skip_test() {  # skip_test NAME REASON
  echo "GANDER-SKIP: $1: $2"
  if [ "${CI:-}" = true ]; then
    echo "$1: CI=true: a skip is a failure" >&2
    exit 1
  fi
  exit 77
}
skip() { skip_test "$TEST_NAME" "$1"; }
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

scratch_world() {  # scratch_world TEMPLATE: world (mktemp -d TEMPLATE) and its cleanup at exit
  world=$(mktemp -d "$1")
  collector=
  trap scratch_world_cleanup EXIT
}
scratch_world_cleanup() {
  if [ -n "$collector" ]; then kill "$collector" 2>/dev/null && wait "$collector" 2>/dev/null; fi
  rm -rf "$world"
}

private_home() {  # private_home WORLD: HOME and the XDG directories inside WORLD, exported
  export HOME=$1/home XDG_CONFIG_HOME=$1/home/.config XDG_STATE_HOME=$1/home/.local/state
  export XDG_DATA_HOME=$1/home/.local/share XDG_RUNTIME_DIR=$1/run
  unset XDG_CACHE_HOME
  mkdir -p "$HOME"
  mkdir -m 700 "$XDG_RUNTIME_DIR"
}

finish() {  # finish NAME OUT_DIR: the verdict; on failure OUT_DIR's files are shown
  if [ "$fails" -ne 0 ]; then
    echo "$1: $fails check(s) failed (uid $(id -u))" >&2
    for f in "$2"/*; do echo "== $f" >&2; tail -30 "$f" >&2; done
    exit 1
  fi
  echo "$1: all checks passed (uid $(id -u))"
}

rerun_as_nobody() {  # rerun_as_nobody NAME SCRATCH CMD...: as root, CMD again as uid 65534, each
  # word NOBODY_SCRATCH in it replaced by a fresh directory under SCRATCH that uid may write
  local name=$1 scratch=$2
  shift 2
  [ "$(id -u)" = 0 ] && [ -z "${GANDER_AS_NOBODY:-}" ] && command -v setpriv >/dev/null || return 0
  local nobody status arg argv=()
  nobody=$(mktemp -d "$scratch/nobody.XXXXXX")
  chmod 777 "$nobody"
  for arg in "$@"; do argv+=("${arg//NOBODY_SCRATCH/$nobody}"); done
  GANDER_AS_NOBODY=1 setpriv --reuid=65534 --regid=65534 --clear-groups "${argv[@]}"
  status=$?
  rm -rf "$nobody"
  [ "$status" -eq 0 ] || { echo "$name: FAIL as uid 65534" >&2; exit 1; }
}

sandbox_mode_flags() {  # sandbox_mode_flags MODE: `gander run` flags in the array mode_flags
  case "$1" in
    namespaces) mode_flags=() ;;
    no-namespaces) mode_flags=(--no-namespaces) ;;
    gvisor)
      mode_flags=(--backend gvisor)
      command -v "${GANDER_RUNSC:-runsc}" >/dev/null || skip "runsc (gVisor) is not installed"
      ;;
    *) echo "unknown sandbox mode $1 (namespaces, no-namespaces or gvisor)" >&2; exit 2 ;;
  esac
}
