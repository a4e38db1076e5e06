#!/bin/bash
# A refusal is never silent (launcher/denial_notice.cc), and a tool call's connects are counted
# for it, with the real binary and a real MCP server (py_echo_server.py) started as Goose starts
# it, in one sandbox mode (namespaces, no-namespaces or gvisor), as root and as uid 65534:
# - a tool call that fails after gander refused a read in it: one stderr line naming the
#   extension, the tool, what was refused and the policy change that allows it; a tool call
#   that succeeds: no such line;
# - an extension that exits with an error after a refusal: one line with its status and the
#   count; one that exits 0 after a refusal: none;
# - a tool call making 3 refused connects: its `tool` audit line says network 3 and denials 3,
#   and each of the 3 network events names that call; nothing but MCP on stdout.
# Under CI=true a skip is a failure.
#   tests/integration/goose/notice_test.sh GANDER SCRATCH MODE
set -u
GANDER=$(realpath "$1")
MODE=$3
SELF=$(realpath "$0")
HERE=$(dirname "$SELF")
SERVER=$HERE/py_echo_server.py
CLIENT=$HERE/goose_stdio_client.py
. "$HERE/../../scripts/preamble.sh"
skip() { skip_test "notice_test ($MODE)" "$1"; }
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
sandbox_mode_flags "$MODE"
flags=("${mode_flags[@]}")

world=$(mktemp -d "$(realpath "$2")/notice.XXXXXX")
chmod 755 "$world"
trap 'rm -rf "$world"' EXIT
private_home "$world"
mkdir -p "$HOME/.ssh" "$HOME/.config/goose" "$world/ws" "$world/out"
echo "not a real key" >"$HOME/.ssh/id_rsa"
audit=$world/audit.jsonl
args=run
for f in "${flags[@]}"; do args+=", $f"; done
cat >"$HOME/.config/goose/config.yaml" <<CFG
extensions:
  probe:
    type: stdio
    cmd: $GANDER
    args: [$args, --name, probe, --collector, "off", --audit-log, $audit, --, python3, $SERVER]
    enabled: true
CFG
# A port nothing listens on: the default policy has no network, so each connect is refused.
calls() { printf '%s' "$2" >"$world/$1.json"; echo "$world/$1.json"; }
start() {  # start NAME CALLS
  (cd "$world/ws" && python3 "$CLIENT" "$HOME/.config/goose/config.yaml" probe "$2") \
    >"$world/out/$1.out" 2>"$world/out/$1.err"
}

start failed "$(calls failed "[{\"tool\": \"read\", \"arguments\": {\"path\": \"$HOME/.ssh/id_rsa\"}, \"is_error\": true, \"expect\": \"\"}]")"
check "a tool call that reads ~/.ssh/id_rsa fails (isError), the session goes on" test $? -eq 0
check "  stderr: one line naming the extension, the tool and the refused read" \
  test "$(grep -c "probe: tool call read failed: gander refused openat $HOME/.ssh/id_rsa (read)" "$world/out/failed.err")" = 1
check "  with what would allow it" grep -q "to allow it: .*filesystem.deny" "$world/out/failed.err"
check "  nothing but the tool names on the client's stdout (MCP only on the server's)" \
  test "$(cat "$world/out/failed.out")" = "$(printf 'echo\nread\nconnect')"

start fine "$(calls fine '[{"tool": "echo", "arguments": {"text": "hi"}, "expect": "hi"}]')"
check "a tool call that succeeds: exit 0" test $? -eq 0
check "  no refusal line" test -z "$(grep 'gander refused' "$world/out/fine.err")"

# Exits: the same server by hand, stdin closed at once, exit status forced by a wrapper.
run_exit() {  # run_exit NAME STATUS: reads ~/.ssh/id_rsa, then exits STATUS
  (cd "$world/ws" && "$GANDER" run "${flags[@]}" --name probe --collector off --audit-log "$audit" \
    -- python3 -c "import sys
try: open('$HOME/.ssh/id_rsa')
except OSError: pass
sys.exit($2)" </dev/null >"$world/out/$1.out" 2>"$world/out/$1.err")
}
run_exit exit3 3
check "an extension that exits 3 after a refusal: gander exits 3" test $? -eq 3
check "  stderr: one line with the status and the count" \
  test "$(grep -c "probe: exited with status 3 after 1 refusal(s): gander refused openat $HOME/.ssh/id_rsa" "$world/out/exit3.err")" = 1
run_exit exit0 0
check "an extension that exits 0 after a refusal: exit 0" test $? -eq 0
check "  no refusal line" test -z "$(grep 'gander refused' "$world/out/exit0.err")"

# Connects counted per tool call.
before=$(grep -c '' "$audit")
start connect "$(calls connect '[{"tool": "connect", "arguments": {"host": "192.0.2.1", "port": 9, "count": 3}, "expect": "0 connected"}]')"
check "a tool call making 3 connects, all refused: the call answers" test $? -eq 0
tail -n +"$((before + 1))" "$audit" >"$world/out/connect.jsonl"
python3 - "$world/out/connect.jsonl" >"$world/out/connect.counts" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
tool = [e["tool"] for e in events if e.get("kind") == "tool" and e["tool"].get("name") == "connect"]
net = [e for e in events if e.get("kind") == "network" and e["network"].get("transport", "tcp") == "tcp"]
named = [e for e in net if e.get("tool_call", {}).get("state") == "one"
         and e["tool_call"].get("tool") == "connect"]
print(len(tool), tool[0]["network"] if tool else -1, tool[0]["denials"] if tool else -1,
      len(net), len(named))
PY
check "  its tool line: network 3, denials 3; 3 tcp network events, each naming the call" \
  test "$(cat "$world/out/connect.counts")" = "1 3 3 3 3"

finish "notice_test ($MODE)" "$world/out"
rerun_as_nobody "notice_test ($MODE)" "$2" "$SELF" "$GANDER" NOBODY_SCRATCH "$MODE"
exit 0
