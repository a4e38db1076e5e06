#!/bin/bash
# `gander status` against a real collector (gander-collect, default --listen: the first free
# port from 9477, recorded beside the socket) in a private HOME and XDG dirs, as root and as
# uid 65534:
# - two runs of one extension: STARTS 2, an integer in --json, and a "last seen" time;
# - with workspace = $HOME, a read of ~/.ssh (labelled `${WORKSPACE}/.ssh`): listed as denied
#   inside the workspace, not outside it;
# - the recorded address pointing at a port another process owns (a fake /metrics): not
#   believed; status asks the process behind this user's socket at its own port, and says so;
# - no recorded address (a collector started by an older gander): found by its socket;
# - no collector: exit 1 with a reason.
# Under CI=true a skip is a failure.
#   tests/integration/goose/status_test.sh GANDER GANDER_COLLECT SCRATCH
set -u
GANDER=$(realpath "$1")
COLLECT=$(realpath "$2")
SELF=$(realpath "$0")
. "$(dirname "$SELF")/../../scripts/preamble.sh"

world=$(mktemp -d "$(realpath "$3")/status.XXXXXX")
chmod 755 "$world"
collector= fake=
cleanup() {
  [ -n "$collector" ] && kill "$collector" 2>/dev/null && wait "$collector" 2>/dev/null
  [ -n "$fake" ] && kill "$fake" 2>/dev/null && wait "$fake" 2>/dev/null
  rm -rf "$world"
}
trap cleanup EXIT
private_home "$world"
mkdir -p "$HOME/.ssh" "$world/ws" "$world/out"
echo "not a key" >"$HOME/.ssh/id_rsa"
sock=$XDG_RUNTIME_DIR/gander/collector.sock

"$COLLECT" --log-level warn 2>"$world/out/collector.err" &
collector=$!
for _ in $(seq 200); do [ -S "$sock" ] && [ -s "$sock.metrics" ] && break; sleep 0.05; done
check "the collector recorded its /metrics address" test -s "$sock.metrics"
address=$(cat "$sock.metrics")

cd "$world/ws"
for _ in 1 2; do "$GANDER" run --name twice --collector connect -- /bin/true </dev/null; done
cd "$HOME"
"$GANDER" run --name peeker --collector connect -- cat .ssh/id_rsa </dev/null >/dev/null 2>&1
cd /

"$GANDER" status --json >"$world/out/status.json" 2>"$world/out/status.err"
check "status --json: exit 0" test $? -eq 0
field() {  # field EXTENSION PYTHON_EXPR(e)
  python3 -c 'import json, sys
e = next(x for x in json.load(open(sys.argv[1]))["extensions"] if x["name"] == sys.argv[2])
print(eval(sys.argv[3]))' "$world/out/status.json" "$1" "$2" 2>/dev/null
}
check "  twice: starts is the integer 2" test "$(field twice 'repr(e["starts"])')" = 2
check "  twice: a last-seen time" grep -qE '^20[0-9-]+T[0-9:]+Z$' <<<"$(field twice 'e["last_seen"]')"
check "  peeker: \${WORKSPACE}/.ssh is denied inside the workspace, not outside it" \
  test "$(field peeker 'sorted(e["denied_inside_workspace"]) == ["${WORKSPACE}/.ssh"] and not any("WORKSPACE" in k for k in e["outside_workspace"])')" = True
check "  no count is a float" test -z "$(grep -E '[0-9]\.0[,}]?$' "$world/out/status.json")"
"$GANDER" status >"$world/out/status.txt" 2>&1
check "status: a LAST SEEN column" has "$world/out/status.txt" "LAST SEEN"
check "  the workspace's .ssh under 'denied inside the workspace'" \
  has "$world/out/status.txt" 'denied inside the workspace: ${WORKSPACE}/.ssh 1;'

# Someone else's port in the recorded address: a fake /metrics claiming an extension.
python3 -c 'import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"gander_extension_starts_total{extension=\"impostor\"} 9\n"
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' >"$world/out/fake.port" &
fake=$!
for _ in $(seq 100); do [ -s "$world/out/fake.port" ] && break; sleep 0.05; done
echo "127.0.0.1:$(cat "$world/out/fake.port")" >"$sock.metrics"
"$GANDER" status >"$world/out/status-fake.txt" 2>&1
check "a recorded address on another process's port: status still exit 0" test $? -eq 0
check "  it shows this user's extensions" has "$world/out/status-fake.txt" "twice"
check "  not the impostor's" test -z "$(grep impostor "$world/out/status-fake.txt")"
check "  and says the recorded address is not its collector's" \
  has "$world/out/status-fake.txt" "is not this user's collector's"

# A collector of an older gander: no recorded address.
rm -f "$sock.metrics"
"$GANDER" status >"$world/out/status-old.txt" 2>&1
check "no recorded address (an older collector): exit 0, found by its socket" test $? -eq 0
check "  it shows this user's extensions" has "$world/out/status-old.txt" "twice"
check "  at its real address" has "$world/out/status-old.txt" "found it by its socket at $address"

kill "$collector" && wait "$collector" 2>/dev/null
collector=
"$GANDER" status >"$world/out/status-none.txt" 2>&1
check "no collector: exit 1" test $? -eq 1
check "  says no collector answers on this user's socket" \
  has "$world/out/status-none.txt" "no collector answers on this user's socket"

finish status_test "$world/out"
rerun_as_nobody status_test "$3" "$SELF" "$GANDER" "$COLLECT" NOBODY_SCRATCH
exit 0
