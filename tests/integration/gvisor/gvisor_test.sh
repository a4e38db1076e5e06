#!/bin/bash
# gander run --backend gvisor, end to end (see CMakeLists.txt). As root it runs itself again
# as uid 65534, so both pass. Under CI=true a missing runsc is a failure, not a skip.
#   tests/integration/gvisor/gvisor_test.sh build/launcher/gander
set -u
GANDER=$(realpath "$1")
SELF=$(realpath "$0")
TEST_NAME=gvisor_test
# shellcheck source=../../scripts/preamble.sh
. "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"

command -v runsc >/dev/null 2>&1 || skip "runsc is not installed (apt-get install runsc)"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

# Not under /tmp: the sandbox's /tmp is a private tmpfs, so "outside" must be elsewhere.
world=$(mktemp -d /var/tmp/gander-gvisor-test-XXXXXX)
chmod 755 "$world"
# The runs below end when their command does: their stdin (fd 9) is a pipe whose writer
# sleeps, since a client's EOF makes gander stop the extension 1 s later (SIGTERM, as Goose's
# stop asks: checked on its own below), which cut a multi-step run short when a loaded CI
# machine and a sanitizer build made it slower than that (exit 143). The sleep's stdout IS
# that pipe's only writer: redirected elsewhere (as it once was), the pipe read EOF at once
# and every `<&9` run was stopped after 1 s all the same (CI's gvisor.backend failures).
exec 9< <(exec sleep 3600 </dev/null 2>/dev/null)
held=$!
trap 'kill "$held" 2>/dev/null; rm -rf "$world"' EXIT
# Held open, not at EOF: a read times out (status > 128) rather than ending at once.
read -r -t 0.2 -u 9 _
[ $? -gt 128 ] || { echo "Bail out! fd 9 is not held open: every run below would be stopped 1 s in"; exit 1; }
mkdir -p "$world/home/.ssh" "$world/ws" "$world/outside"
echo "PLANTED-KEY-$$" >"$world/home/.ssh/id_rsa"
export HOME=$world/home XDG_STATE_HOME=$world/state XDG_CONFIG_HOME=$world/config
cd "$world/ws"
audit=$world/audit.jsonl
run() {  # run ARGS... -- the extension; stdin from /dev/null unless redirected
  "$GANDER" run --backend gvisor --collector off --audit-log "$audit" --name gv "$@"
}
echo "# uid $(id -u), runsc $(runsc --version | head -1), kernel $(uname -r)," \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"

# --- exit status, stdout cleanliness --------------------------------------------------------
run -- /bin/sh -c 'exit 7' </dev/null
check "exit status propagated (7)" test $? -eq 7
run -- /bin/sh -c 'kill -9 $$' </dev/null
check "killed by SIGKILL inside gVisor -> 137" test $? -eq 137
run -- /no/such/command </dev/null 2>/dev/null
check "command not found -> 127" test $? -eq 127
out=$(run -- /bin/sh -c 'echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"; echo diag >&2' \
  <&9 2>/dev/null)
check "stdout carries only the extension's bytes" test "$out" = '{"jsonrpc":"2.0","id":1,"result":{}}'
out=$(echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | run -- /bin/cat 2>/dev/null)
check "stdin relayed to the extension and back" test "$out" = '{"jsonrpc":"2.0","id":1,"method":"ping"}'

# --- files ----------------------------------------------------------------------------------
rm -f "$audit"
out=$(run -- /bin/sh -c "cat $HOME/.ssh/id_rsa; echo x > $world/outside/new; \
  echo y > $world/ws/inside; echo z > /etc/gander-test" <&9 2>/dev/null)
check "~/.ssh key unreadable" test -z "$out"
check "write outside the workspace refused (no host file)" test ! -e "$world/outside/new"
check "write into a read-only grant refused (/etc)" test ! -e /etc/gander-test
check "write inside the workspace lands on the host" test "$(cat "$world/ws/inside")" = y
check "the file written belongs to the caller" test "$(stat -c %u "$world/ws/inside")" = "$(id -u)"
ev() { jq -c "select($1)" "$audit"; }
logged() { check "$1" test -n "$(ev "$2")"; }      # logged DESCRIPTION JQ-FILTER
not_logged() { check "$1" test -z "$(ev "$2")"; }  # not_logged DESCRIPTION JQ-FILTER
logged "start event: backend gvisor, accounting gvisor-strace+broker" \
  '.kind=="lifecycle" and .lifecycle.what=="start" and .lifecycle.info.backend=="gvisor" and .lifecycle.info.syscall_accounting=="gvisor-strace+broker"'
logged "audit: ~/.ssh read denied (class denied, label ~/.ssh)" \
  '.kind=="file" and .file.path_label=="~/.ssh" and .file.class=="denied" and .file.result=="denied"'
logged "audit: write outside the workspace denied (class outside)" \
  ".kind==\"file\" and .file.path==\"$world/outside/new\" and .file.class==\"outside\" and .file.access==\"create\" and .file.result==\"denied\""
logged "audit: write to /etc denied (read-only grant)" \
  '.kind=="file" and .file.path=="/etc/gander-test" and .file.result=="denied"'
not_logged "audit: no event for the workspace write" \
  ".kind==\"file\" and .file.path==\"$world/ws/inside\""
logged "audit: exec of cat with its argv" \
  ".kind==\"process\" and .process.action==\"exec\" and .process.path==\"/usr/bin/cat\" and .process.argv==[\"cat\",\"$HOME/.ssh/id_rsa\"]"
logged "audit: exit of cat with status 1" \
  '.kind=="process" and .process.action=="exit" and .process.exit_code==1 and .sandbox_pid!=1'

# --- network: gander's egress broker and DNS stub, as native ----------------------------------
# A "remote" HTTP server on 127.0.0.2 (outside the sandbox's network namespace); names come
# from a private host-side /etc/hosts that gander's DNS stub resolves through.
command -v node >/dev/null 2>&1 || skip "node is not installed (the test's HTTP server)"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
cat >"$world/server.js" <<'JS'
const body = "hello from 127.0.0.2\n".repeat(50);
const s = require("http").createServer((q, r) => {
  r.writeHead(200, {"Content-Type": "text/plain", "Content-Length": body.length}); r.end(body);
});
s.listen(0, "127.0.0.2", () => console.log(s.address().port));
JS
node "$world/server.js" >"$world/port" 2>/dev/null &
server=$!
for _ in $(seq 100); do [ -s "$world/port" ] && break; sleep 0.1; done
port=$(cat "$world/port")
[ -n "$port" ] || skip "the test HTTP server did not start on 127.0.0.2"
printf '127.0.0.1 localhost\n127.0.0.2 allowed.gander.test other.gander.test\n' >"$world/hosts"
chmod 644 "$world/hosts"
hosts_wrap=(unshare)
[ "$(id -u)" = 0 ] || hosts_wrap+=(--map-root-user)
hosts_wrap+=(--mount --propagation private -- /bin/sh -c 'mount --bind "$0" /etc/hosts && exec "$@"'
  "$world/hosts")
"${hosts_wrap[@]}" getent hosts allowed.gander.test 2>/dev/null | grep -q 127.0.0.2 ||
  skip "cannot bind-mount a private /etc/hosts (unshare --mount)"
cat >"$world/net.yaml" <<YAML
version: 1
extends: default
backend: gvisor
network:
  allow:
    - {host: allowed.gander.test, ports: [$port]}
YAML
curl_w='%{http_code} %{size_header} %{size_download} %{size_request}'
# A UDP datagram to a refused address: under gVisor's host network the broker's ECONNREFUSED
# made the sentry retry for good (the sender hung until the extension was killed); it must fail
# at once. `timeout 120` only bounds a hang (rc 124): no clock threshold.
cat >"$world/ws/udp.py" <<'PY'
import errno, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("192.0.2.1", 9))
    print("udp=sent")
except OSError as e:
    print("udp=" + errno.errorcode.get(e.errno, str(e.errno)))
PY
rm -f "$audit"
out=$("${hosts_wrap[@]}" "$GANDER" run --collector off --audit-log "$audit" --name gv \
  --policy "$world/net.yaml" -- /bin/sh -c "
  curl -sS -m 20 -o /dev/null -w '$curl_w\n' http://allowed.gander.test:$port/
  curl -sS -m 20 -o /dev/null http://other.gander.test:$port/; echo name=\$?
  curl -sS -m 20 -o /dev/null http://192.0.2.1:$port/; echo ip=\$?" <&9 2>"$world/net.err")
status=$?
echo "# $(tr '\n' ' ' <<<"$out")"
[ $status -eq 0 ] || { echo "# status $status; gander's stderr:"; tail -15 "$world/net.err" | sed 's/^/#   /'; }
check "network.allow under gvisor runs (exit 0)" test $status -eq 0
read -r code hdr body req <<<"$(head -1 <<<"$out")"
check "allowed host reached by name through the DNS stub (HTTP 200)" test "$code" = 200
check "  the whole body arrived (1050 bytes)" test "$body" = 1050
logged "  network event: host, ip 127.0.0.2, rule, exact bytes out/in" \
  ".kind==\"network\" and .network.transport==\"tcp\" and .network.host==\"allowed.gander.test\" and .network.ip==\"127.0.0.2\" and .network.port==$port and .network.result==\"allowed\" and .network.rule==\"allowed.gander.test\" and .network.bytes_out==$req and .network.bytes_in==$((hdr + body))"
logged "  the DNS query recorded (allowed)" \
  '.kind=="network" and .network.transport=="dns" and .network.host=="allowed.gander.test" and .network.result=="allowed"'
check "unlisted name: the stub refuses it (curl: cannot resolve, 6)" grep -qx "name=6" <<<"$out"
logged "  DNS event denied for other.gander.test" \
  '.kind=="network" and .network.transport=="dns" and .network.host=="other.gander.test" and .network.result=="denied"'
check "unlisted address: refused at once (curl: connection refused, 7)" grep -qx "ip=7" <<<"$out"
logged "  network event denied for 192.0.2.1 (connect, ECONNREFUSED)" \
  ".kind==\"network\" and .network.ip==\"192.0.2.1\" and .network.port==$port and .network.result==\"denied\" and .network.syscall==\"connect\" and .network.errno_name==\"ECONNREFUSED\""
check "  only the allowed connection was brokered" test "$(ev \
  '.kind=="network" and .network.transport=="tcp" and .network.result=="allowed"' | wc -l)" = 1
# A run of its own, so that its failure is told apart from the connects' above.
rm -f "$audit"
out=$("${hosts_wrap[@]}" "$GANDER" run --collector off --audit-log "$audit" --name gv \
  --policy "$world/net.yaml" -- /bin/sh -c "timeout 120 python3 udp.py; echo udp_rc=\$?" \
  <&9 2>"$world/udp.err")
status=$?
echo "# $(tr '\n' ' ' <<<"$out")"
[ $status -eq 0 ] || { echo "# status $status; gander's stderr:"; tail -15 "$world/udp.err" | sed 's/^/#   /'; }
check "a UDP sender under gvisor runs (exit 0)" test $status -eq 0
check "UDP sendto to a refused address fails at once (EPERM), no hang" grep -qx "udp=EPERM" <<<"$out"
logged "  network event denied for the datagram (udp, sendto)" \
  '.kind=="network" and .network.ip=="192.0.2.1" and .network.transport=="udp" and .network.result=="denied" and .network.syscall=="sendto"'

rm -f "$audit"
# 127.0.0.2 unnamed is the sandbox's own loopback (nothing listens there): refused, no event.
out=$(run -- /bin/sh -c "curl -sS -m 20 -o /dev/null http://127.0.0.2:$port/; echo rc=\$?
  curl -sS -m 20 -o /dev/null http://192.0.2.1:$port/; echo rc=\$?" <&9 2>/dev/null)
check "no allow rules: no network at all (curl 7 twice: refused)" test "$(echo $out)" = "rc=7 rc=7"
logged "  a denied network event for 192.0.2.1" \
  ".kind==\"network\" and .network.ip==\"192.0.2.1\" and .network.result==\"denied\""
not_logged "  no connection brokered" '.kind=="network" and .network.result=="allowed"'
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null

# --- renames, chmod, links, relative paths, refused syscalls (from gVisor's strace) ----------
rm -f "$audit"
run -- /bin/sh -c 'mount -t tmpfs x /mnt; cd /etc && mv hostname hn; chmod 600 passwd;
  ln -s x /etc/gander-lnk; rm -rf /etc/ssl/certs' <&9 >/dev/null 2>&1
logged "audit: mount refused by gVisor -> syscall event denied EPERM" \
  '.kind=="syscall" and .syscall.name=="mount" and .syscall.action=="denied" and .syscall.errno==1'
logged "audit: rename in /etc (relative to the cwd) denied" \
  '.kind=="file" and .file.raw_path=="hostname" and .file.path=="/etc/hostname" and .file.access=="rename" and .file.result=="denied"'
logged "  and the new name as a create" \
  '.kind=="file" and .file.path=="/etc/hn" and .file.access=="create" and .file.result=="denied"'
logged "audit: chmod of /etc/passwd denied" \
  '.kind=="file" and .file.path=="/etc/passwd" and .file.access=="chmod" and .file.result=="denied"'
logged "audit: symlink created in /etc denied" \
  '.kind=="file" and .file.path=="/etc/gander-lnk" and .file.access=="create" and .file.result=="denied"'
logged "audit: unlinkat relative to a directory fd resolved (rm -r /etc/ssl/certs)" \
  '.kind=="file" and .file.syscall=="unlinkat" and (.file.raw_path|startswith("/")|not) and (.file.path|startswith("/etc/ssl/certs/")) and .file.access=="delete" and .file.result=="denied"'

# --- --mode monitor: the wider trial view, would_deny events ---------------------------------
cat >"$world/trial.yaml" <<'YAML'
version: 1
filesystem:
  write: ['${WORKSPACE}']
  private: [/tmp, '~']
  deny: ['~/.ssh']
YAML
rm -f "$audit"
out=$(run --mode monitor --policy "$world/trial.yaml" -- /bin/sh -c \
  "cat /etc/hostname >/dev/null && echo read; cat $HOME/.ssh/id_rsa" <&9 2>/dev/null)
check "monitor: the trial's refusals are not enforced (/etc readable)" test "$out" = read
logged "monitor: start event says mode monitor" \
  '.kind=="lifecycle" and .lifecycle.what=="start" and .lifecycle.info.mode=="monitor" and .lifecycle.info.backend=="gvisor"'
logged "monitor: /etc/hostname would_deny (class outside under the trial)" \
  '.kind=="file" and .file.path=="/etc/hostname" and .file.result=="would_deny" and .file.class=="outside"'
logged "monitor: ~/.ssh still denied (the default profile enforces)" \
  '.kind=="file" and .file.path_label=="~/.ssh" and .file.result=="denied"'

# --- --mode learn: census from the strace stream, a usable policy suggest --------------------
echo data >"$world/outside/data"
rm -f "$audit"
run --mode learn -- /bin/sh -c "cat $world/outside/data; echo x > $world/outside/new" \
  <&9 >/dev/null 2>&1
logged "learn: start event says gvisor-census(+broker)" \
  '.kind=="lifecycle" and .lifecycle.what=="start" and .lifecycle.info.mode=="learn" and (.lifecycle.info.syscall_accounting|startswith("gvisor-census"))'
logged "learn: every syscall counted by name (openat)" \
  '.kind=="syscall" and .syscall.action=="counted" and .syscall.name=="openat" and .syscall.count>0'
logged "learn: plain reads of grants are logged too (/etc/ld.so.cache)" \
  '.kind=="file" and .file.path=="/etc/ld.so.cache"'
suggested=$("$GANDER" policy suggest --from "$audit" gv 2>/dev/null)
check "learn: policy suggest grants the outside directory written" grep -q "\"$world/outside\"" <<<"$suggested"
check "learn: policy suggest lists the syscall census (syscalls.allow)" grep -qE '^    - openat  # [0-9]+ calls?' <<<"$suggested"
"$GANDER" policy suggest --from "$audit" --format oci-seccomp gv 2>/dev/null | jq -e \
  '.syscalls[0].names | (index("openat") != null) and (index("execve") != null)' >/dev/null
check "learn: --format oci-seccomp from the gVisor census" test $? -eq 0

# A real MCP server (the e2e corpus' server-filesystem) learned under gVisor: a session that
# reads a workspace file, then `policy suggest` from that run.
fsdir=$(dirname "$SELF")/../../e2e/node_modules/@modelcontextprotocol/server-filesystem
if command -v node >/dev/null && [ -f "$fsdir/package.json" ]; then
  fsbin=$(node -e 'const p=require(process.argv[1]);console.log(typeof p.bin==="string"?p.bin:Object.values(p.bin)[0])' "$fsdir/package.json")
  echo hello >"$world/ws/note.txt"
  rm -f "$audit" "$world/fs.out"
  mkfifo "$world/fs.in"
  run --mode learn -- "$(readlink -f "$(command -v node)")" "$fsdir/$fsbin" "$world/ws" \
    <"$world/fs.in" >"$world/fs.out" 2>"$world/fs.err" &
  server=$!
  exec 7>"$world/fs.in"
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"$world/ws/note.txt\"}}}" >&7
  for _ in $(seq 1200); do  # until the answer (a bound, not an assertion on time)
    grep -q '"id":2' "$world/fs.out" 2>/dev/null && break
    sleep 0.1
  done
  exec 7>&-
  wait "$server"
  if ! grep -q 'hello' "$world/fs.out"; then  # what the server and gander said, for the log
    echo "# its stdout:"; cut -c1-300 "$world/fs.out" | sed 's/^/#   /'
    echo "# its stderr and gander's:"; tail -20 "$world/fs.err" | sed 's/^/#   /'
  fi
  check "learn: server-filesystem answers under gVisor (hello)" grep -q 'hello' "$world/fs.out"
  attributed=".kind==\"file\" and .file.path==\"$world/ws/note.txt\" and .tool_call.tool==\"read_text_file\""
  if [ -z "$(ev "$attributed")" ]; then
    # What was logged of note.txt and of the call instead (a CI run missed the attribution once).
    echo "# events naming note.txt:"
    ev '.file.path // "" | test("note.txt")' | cut -c1-400 | sed 's/^/#   /'
    echo "# events attributed to read_text_file:"
    ev '.tool_call.tool=="read_text_file"' | head -n 8 | cut -c1-300 | sed 's/^/#   /'
  fi
  logged "learn: its read of note.txt logged and attributed to read_text_file" "$attributed"
  logged "learn: node's exec and a census of its syscalls (futex)" \
    '.kind=="syscall" and .syscall.action=="counted" and .syscall.name=="futex"'
  suggested=$("$GANDER" policy suggest --from "$audit" gv 2>/dev/null)
  check "learn: policy suggest from the server's run (futex in syscalls.allow)" \
    grep -qE '^    - futex  # [0-9]+ calls?' <<<"$suggested"
else
  echo "GANDER-SKIP: node or tests/e2e/node_modules missing (tests/e2e/install.sh): server-filesystem learning not run"
fi

# --- secrets as: file: /run/secrets read-only, refreshed in place ----------------------------
printf '#!/bin/sh\nn=$(cat %s/counter 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s/counter\n%s\n' \
  "$world" "$world" "printf '{\"token\": \"TOK-%s-x\", \"expiry\": %s}\\n' \$n \$(( \$(date +%s) + 3 ))" \
  >"$world/mint.sh"
chmod 755 "$world/mint.sh"
cat >"$world/secret.yaml" <<YAML
version: 1
extends: default
secrets:
  API_TOKEN: {from: command, run: $world/mint.sh, json: token, expires: expiry, ttl: 1s, on_expiry: refresh, as: file}
YAML
"$GANDER" policy check "$world/secret.yaml" >/dev/null 2>&1
check "secrets as: file accepted by policy check" test $? -eq 0
# The extension compares inside (stdout is redacted): a minted value (a slow start, under
# ASan, may already see the second), then it waits for the refresh to show through the
# read-only mount (bounded by iterations; no time is asserted).
exec 8< <(sleep 60)  # stdin stays open (EOF would end the extension); not waited for
keeper=$!
out=$(run --policy "$world/secret.yaml" -- /bin/sh -c '
  f=$API_TOKEN_FILE; first=$(cat "$f"); case "$first" in TOK-[1-9]*-x) echo first-ok;; esac
  i=0; while [ $i -lt 200 ]; do v=$(cat "$f"); [ "$v" != "$first" ] && break; sleep 0.1; i=$((i+1)); done
  case "$v" in "$first") ;; TOK-[1-9]*-x) echo refreshed;; esac
  echo "$f"; (echo x >"$f") 2>/dev/null || echo read-only' <&8 2>/dev/null)
exec 8<&-
kill "$keeper" 2>/dev/null
check "secret file at /run/secrets/API_TOKEN with a minted value" grep -q first-ok <<<"$out"
check "  the refreshed value shows through without a restart" grep -q refreshed <<<"$out"
check "  NAME_FILE points at it" grep -qx /run/secrets/API_TOKEN <<<"$out"
check "  and it is read-only" grep -q read-only <<<"$out"

# --- what gvisor refuses: exit 2 ----------------------------------------------------------
"$GANDER" run --collector off --backend gvisor --no-namespaces -- /bin/true 2>/dev/null
check "--no-namespaces with gvisor refused (exit 2)" test $? -eq 2

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
exec 9<&-
kill "$held" 2>/dev/null  # before `wait`, which may wait for a process substitution
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
