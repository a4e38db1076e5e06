# The shell tests' shared preamble (sourced): `check DESCRIPTION COMMAND...` and its ok/bad
# lines with a failure count, `has FILE TEXT`, a skip that prints GANDER-SKIP and is a failure
# under CI=true, a private HOME and XDG directories, and the rerun of a test as uid 65534.
fails=0
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

skip_test() {  # skip_test NAME REASON: exit 77, or 1 under CI=true (nothing may skip there)
  echo "GANDER-SKIP: $1: $2"
  if [ "${CI:-}" = true ]; then
    echo "$1: CI=true: a skip is a failure" >&2
    exit 1
  fi
  exit 77
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

again_as_nobody() {  # again_as_nobody NAME SCRATCH CMD...: as root, CMD again as uid 65534, each
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
