#!/bin/bash
# gander run --backend gvisor, end to end (see CMakeLists.txt). As root it runs itself again
# as uid 65534, so both pass. Under CI=true a missing runsc is a failure, not a skip.
#   tests/gvisor/gvisor_test.sh build/launcher/gander
set -u
GANDER=$(realpath "$1")
SELF=$(realpath "$0")
fails=0

skip() {
  echo "gvisor_test: SKIPPED: $1" >&2
  if [ "${CI:-}" = true ]; then
    echo "gvisor_test: CI=true: a skip is a failure" >&2
    exit 1
  fi
  exit 77
}
command -v runsc >/dev/null 2>&1 || skip "runsc is not installed (apt-get install runsc)"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

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

# Not under /tmp: the sandbox's /tmp is a private tmpfs, so "outside" must be elsewhere.
world=$(mktemp -d /var/tmp/gander-gvisor-test-XXXXXX)
chmod 755 "$world"
trap 'rm -rf "$world"' EXIT
mkdir -p "$world/home/.ssh" "$world/ws" "$world/outside"
echo "PLANTED-KEY-$$" >"$world/home/.ssh/id_rsa"
export HOME=$world/home XDG_STATE_HOME=$world/state XDG_CONFIG_HOME=$world/config
cd "$world/ws"
audit=$world/audit.jsonl
run() {  # run ARGS... -- the extension; stdin from /dev/null unless redirected
  "$GANDER" run --backend gvisor --collector off --audit-log "$audit" --name gv "$@"
}
echo "# uid $(id -u), runsc $(runsc --version | head -1)"

# --- exit status, stdout cleanliness --------------------------------------------------------
run -- /bin/sh -c 'exit 7' </dev/null
check "exit status propagated (7)" test $? -eq 7
run -- /bin/sh -c 'kill -9 $$' </dev/null
check "killed by SIGKILL inside gVisor -> 137" test $? -eq 137
run -- /no/such/command </dev/null 2>/dev/null
check "command not found -> 127" test $? -eq 127
out=$(run -- /bin/sh -c 'echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"; echo diag >&2' \
  </dev/null 2>/dev/null)
check "stdout carries only the extension's bytes" test "$out" = '{"jsonrpc":"2.0","id":1,"result":{}}'
out=$(echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | run -- /bin/cat 2>/dev/null)
check "stdin relayed to the extension and back" test "$out" = '{"jsonrpc":"2.0","id":1,"method":"ping"}'

# --- files ----------------------------------------------------------------------------------
rm -f "$audit"
out=$(run -- /bin/sh -c "cat $HOME/.ssh/id_rsa; echo x > $world/outside/new; \
  echo y > $world/ws/inside; echo z > /etc/gander-test" </dev/null 2>/dev/null)
check "~/.ssh key unreadable" test -z "$out"
check "write outside the workspace refused (no host file)" test ! -e "$world/outside/new"
check "write into a read-only grant refused (/etc)" test ! -e /etc/gander-test
check "write inside the workspace lands on the host" test "$(cat "$world/ws/inside")" = y
check "the file written belongs to the caller" test "$(stat -c %u "$world/ws/inside")" = "$(id -u)"
ev() { jq -c "select($1)" "$audit"; }
check "start event: backend gvisor, accounting gvisor-strace" test -n "$(ev \
  '.kind=="lifecycle" and .lifecycle.what=="start" and .lifecycle.info.backend=="gvisor" and .lifecycle.info.syscall_accounting=="gvisor-strace"')"
check "audit: ~/.ssh read denied (class denied, label ~/.ssh)" test -n "$(ev \
  '.kind=="file" and .file.path_label=="~/.ssh" and .file.class=="denied" and .file.result=="denied"')"
check "audit: write outside the workspace denied (class outside)" test -n "$(ev \
  ".kind==\"file\" and .file.path==\"$world/outside/new\" and .file.class==\"outside\" and .file.access==\"create\" and .file.result==\"denied\"")"
check "audit: write to /etc denied (read-only grant)" test -n "$(ev \
  '.kind=="file" and .file.path=="/etc/gander-test" and .file.result=="denied"')"
check "audit: no event for the workspace write" test -z "$(ev \
  ".kind==\"file\" and .file.path==\"$world/ws/inside\"")"
check "audit: exec of cat with its argv" test -n "$(ev \
  ".kind==\"process\" and .process.action==\"exec\" and .process.path==\"/usr/bin/cat\" and .process.argv==[\"cat\",\"$HOME/.ssh/id_rsa\"]")"
check "audit: exit of cat with status 1" test -n "$(ev \
  '.kind=="process" and .process.action=="exit" and .process.exit_code==1 and .sandbox_pid!=1')"

# --- what gVisor does not let gander observe: asserted, not skipped -------------------------
rm -f "$audit"
run -- /bin/sh -c 'exec 3<>/dev/tcp/127.0.0.1/9 2>/dev/null; echo reached' </dev/null >/dev/null 2>&1
# bash-less /bin/sh has no /dev/tcp: use node when present for a real connect().
if command -v node >/dev/null; then
  out=$(run -- "$(command -v node)" -e 'require("net").connect(9,"127.0.0.1").on("error",e=>console.log(e.code)).on("connect",()=>console.log("connected"))' </dev/null 2>/dev/null)
  check "network: no connection out of gVisor (--network=none): $out" test "$out" != connected
  check "LIMITATION (documented): no network event for the refused connect under gVisor" \
    test -z "$(ev '.kind=="network"')"
fi
check "LIMITATION (documented): gVisor answers refused syscalls itself: no syscall events" \
  test -z "$(ev '.kind=="syscall"')"

# --- policies the backend cannot honour: exit 2, nothing started ----------------------------
cat >"$world/net.yaml" <<'YAML'
version: 1
extends: default
backend: gvisor
network:
  allow:
    - {host: api.github.com, ports: [443]}
YAML
msg=$("$GANDER" run --collector off --policy "$world/net.yaml" -- /bin/touch "$world/ws/started" 2>&1)
status=$?
check "network.allow under gvisor refused with exit 2" test $status -eq 2
check "the message names network.allow and the line" grep -q "net.yaml:3:10: backend gvisor cannot honour: network.allow (.*net.yaml:6:7: api.github.com" <<<"$msg"
check "nothing started" test ! -e "$world/ws/started"
"$GANDER" policy check "$world/net.yaml" >/dev/null 2>&1
check "gander policy check refuses it too (exit 2)" test $? -eq 2
"$GANDER" run --collector off --backend gvisor --mode learn -- /bin/true 2>/dev/null
check "--mode learn with gvisor refused (exit 2)" test $? -eq 2

# --- lifecycle ------------------------------------------------------------------------------
out=$( (sleep 1) | run -- /bin/sh -c 'trap "echo got-term; exit 9" TERM; while :; do sleep 0.1; done' 2>/dev/null)
status=$?
check "stdin EOF -> SIGTERM reaches the extension inside gVisor" test "$out" = got-term
check "  and its exit status (9) is gander's" test $status -eq 9
(sleep 1) | run -- /bin/sh -c 'trap "" TERM; while :; do sleep 0.1; done' >/dev/null 2>&1
check "an extension ignoring SIGTERM is SIGKILLed (137)" test $? -eq 137
sleep 60 | "$GANDER" run --backend gvisor --collector off --audit-log "$audit" -- \
  /bin/sh -c 'while :; do sleep 0.1; done' >/dev/null 2>&1 &
gpid=$!  # the pipeline's last process: gander itself
for _ in $(seq 100); do
  [ -n "$(ls -d /tmp/gander-gvisor-"$gpid"-* 2>/dev/null)" ] && pgrep -f "runsc-sandbox --root=/tmp/gander-gvisor-$gpid-" >/dev/null && break
  sleep 0.1
done
check "runsc's sandbox runs under gander's private --root" pgrep -f "runsc-sandbox --root=/tmp/gander-gvisor-$gpid-" >/dev/null
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null
for _ in $(seq 50); do
  pgrep -f "gander-gvisor-$gpid-" >/dev/null || break
  sleep 0.1
done
check "gander SIGKILLed: no runsc process of it survives" test -z "$(pgrep -f "gander-gvisor-$gpid-" | xargs -r ps -o stat= -p | grep -v Z)"
run -- /bin/true </dev/null
check "the next start removes the dead run's directory" test -z "$(ls -d /tmp/gander-gvisor-"$gpid"-* 2>/dev/null)"
kill %1 2>/dev/null
wait 2>/dev/null

if [ "$fails" -ne 0 ]; then
  echo "gvisor_test (uid $(id -u)): $fails check(s) failed" >&2
  exit 1
fi
echo "gvisor_test (uid $(id -u)): all checks passed"
if [ "$(id -u)" = 0 ] && [ -z "${GANDER_GVISOR_NESTED:-}" ]; then
  echo "# again as uid 65534"
  GANDER_GVISOR_NESTED=1 setpriv --reuid=65534 --regid=65534 --clear-groups -- "$SELF" "$GANDER"
  exit $?
fi
