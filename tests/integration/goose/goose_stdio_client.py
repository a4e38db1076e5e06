#!/usr/bin/env python3
"""Starts one extension of a Goose config the way Goose does (its `cmd` and `args`, `envs` added
to the environment, stdin/stdout as the MCP stdio transport) and completes initialize and
tools/list. Prints the tool names, one a line; exits 1 on any protocol error or on stdout that is
not a JSON-RPC message. With CALLS (a JSON file: a list of {"tool", "arguments", "expect"}), it
then calls each tool and fails unless the call succeeds (no JSON-RPC error, no isError) and its
text content contains `expect` (with "is_error": true, unless the call fails with isError).
  goose_stdio_client.py CONFIG EXTENSION [CALLS]"""
import json
import os
import subprocess
import sys

import yaml


def main():
    config, key = sys.argv[1], sys.argv[2]
    with open(config, encoding="utf-8") as f:
        ext = yaml.safe_load(f)["extensions"][key]
    env = dict(os.environ)
    env.update({k: str(v) for k, v in (ext.get("envs") or {}).items()})
    argv = [ext["cmd"], *[str(a) for a in ext.get("args") or []]]
    print("starting: " + " ".join(argv), file=sys.stderr)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def reply(want_id):
        while True:
            line = proc.stdout.readline()
            if not line:
                sys.exit(f"FAIL: stdout closed before the reply to request {want_id}")
            msg = json.loads(line)  # anything but JSON on stdout fails here
            if msg.get("jsonrpc") != "2.0":
                sys.exit(f"FAIL: not a JSON-RPC message on stdout: {line!r}")
            if msg.get("id") == want_id:
                if "error" in msg:
                    sys.exit(f"FAIL: error reply: {msg['error']}")
                return msg["result"]

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                     "clientInfo": {"name": "goose-like", "version": "0"}}})
    init = reply(1)
    print("server: " + init["serverInfo"]["name"], file=sys.stderr)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    for tool in reply(2)["tools"]:
        print(tool["name"])
    calls = []
    if len(sys.argv) > 3:
        with open(sys.argv[3], encoding="utf-8") as f:
            calls = json.load(f)
    for n, call in enumerate(calls, start=3):
        send({"jsonrpc": "2.0", "id": n, "method": "tools/call",
              "params": {"name": call["tool"], "arguments": call.get("arguments", {})}})
        result = reply(n)
        text = "".join(c.get("text", "") for c in result.get("content", []))
        if bool(result.get("isError")) != bool(call.get("is_error", False)):
            sys.exit(f"FAIL: {call['tool']}: isError is {result.get('isError')}: {text}")
        if call.get("expect", "") not in text:
            sys.exit(f"FAIL: {call['tool']}: {call.get('expect')!r} not in {text!r}")
        print(f"call {call['tool']}: ok", file=sys.stderr)
    proc.stdin.close()
    rest = proc.stdout.read()
    if rest.strip():
        for line in rest.splitlines():
            json.loads(line)
    status = proc.wait()
    print(f"exit status {status}", file=sys.stderr)


if __name__ == "__main__":
    main()
