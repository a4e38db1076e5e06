#!/bin/sh
# Learning any number of times, with the default audit log (in gander's own state directory,
# which learn mode masks because it shows the real home): a node server twice, an npx server
# twice (installed at the first start through the install sandbox, whose events go to the same
# log first), then `gander policy suggest NAME` over both runs of each.
# Usage: learn_twice_test.sh GANDER SCRATCH NODE_MODULES
# The npx part needs registry.npmjs.org (as tests/integration/install does): skipped with the reason when it
# cannot be reached, except under CI=true.
set -eu
gander=$(realpath "$1")
modules=$3
self=$(realpath "$0")
scratch=$(mktemp -d "$2/learn-twice.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
mkdir -p "$scratch/home" "$scratch/ws"
export HOME="$scratch/home"
unset XDG_STATE_HOME XDG_CONFIG_HOME XDG_DATA_HOME
fail() { echo "FAIL: $*" >&2; exit 1; }
server="$modules/@modelcontextprotocol/server-memory/dist/index.js"
[ -f "$server" ] || { echo "SKIP: $server missing: run tests/e2e/install.sh"; exit 77; }

# Each run is a start whose client leaves once the server is up (its ready line; a bound of
# 180 s, not a timing: an npx start installs first, through the registry): the server then
# ends by itself at the EOF, or, when it is still running 1 s later (a loaded machine, a
# sanitizer build: CI saw it), gander stops it with SIGTERM, as it stops any extension whose
# client left, and exits 143. Both are a whole learning run. (With
# stdin /dev/null from the start, a slow enough machine stopped the server before it was up.)
learn() {  # NAME COMMAND...
  name=$1; shift
  for i in 1 2; do
    rm -f "$scratch/in" && mkfifo "$scratch/in"
    "$gander" run --mode learn --collector off --name "$name" --workspace "$scratch/ws" -- "$@" \
      <"$scratch/in" >/dev/null 2>"$scratch/run.err" &
    pid=$!
    exec 3>"$scratch/in"
    for _ in $(seq 1800); do
      grep -q "MCP Server running on stdio" "$scratch/run.err" && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    exec 3>&-
    rc=0
    wait "$pid" || rc=$?
    { [ "$rc" = 0 ] || [ "$rc" = 143 ]; } && grep -q "MCP Server running on stdio" "$scratch/run.err" ||
      fail "$name: learning run $i failed (exit $rc, as uid $(id -u)); gander's stderr ends: $(tail -n 15 "$scratch/run.err")"
  done
  (cd "$scratch/ws" && "$gander" policy suggest "$name" --workspace "$scratch/ws") \
    >"$scratch/$name.yaml" 2>"$scratch/suggest.err" ||
    fail "$name: suggest failed: $(cat "$scratch/suggest.err")"
  grep -q "2 learning runs" "$scratch/$name.yaml" || fail "$name: not both runs: $(cat "$scratch/$name.yaml")"
  "$gander" policy check "$scratch/$name.yaml" >/dev/null || fail "$name: the suggestion does not check"
}

learn memory-node node "$server"
echo "PASS: node server learned twice"

if ! node -e 'fetch("https://registry.npmjs.org/-/ping").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' 2>/dev/null; then
  [ "${CI:-}" = true ] && fail "registry.npmjs.org unreachable (CI=true: it must be reachable)"
  echo "SKIP (npx part): registry.npmjs.org unreachable"
else
  learn memory-npx npx -y @modelcontextprotocol/server-memory
  echo "PASS: npx server learned twice"
fi

# Again as uid 65534 when run as root.
if [ "$(id -u)" = 0 ] && [ -z "${GANDER_AS_NOBODY:-}" ] && command -v setpriv >/dev/null; then
  nobody=$(mktemp -d "$2/nobody.XXXXXX")
  chmod 777 "$nobody"
  cd /
  GANDER_AS_NOBODY=1 setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$self" "$gander" "$nobody" "$modules" || { rm -rf "$nobody"; fail "as uid 65534"; }
  rm -rf "$nobody"
  echo "PASS (uid 65534 too)"
fi
