#!/usr/bin/env python3
"""A tiny MCP server over stdio, standard library only (PyPI is not needed): `echo` returns its
text followed by the interpreter that ran it (sys.executable), so a test sees which python a
shim resolved to. `read` returns a file's text, or isError when it cannot be opened; `connect`
makes `count` TCP connects to host:port and says how many got through. One JSON-RPC message a
line."""
import json
import socket
import sys


def call(name, args):
    if name == "read":
        try:
            with open(args.get("path", ""), encoding="utf-8") as f:
                return {"content": [{"type": "text", "text": f.read()}]}
        except OSError as e:
            return {"content": [{"type": "text", "text": str(e)}], "isError": True}
    if name == "connect":
        through = 0
        for _ in range(int(args.get("count", 1))):
            try:
                with socket.create_connection((args["host"], int(args["port"])), timeout=10):
                    through += 1
            except OSError:
                pass
        return {"content": [{"type": "text", "text": f"{through} connected"}]}
    text = args.get("text", "")
    return {"content": [{"type": "text", "text": f"{text} (python {sys.executable})"}]}


def answer(request):
    method = request.get("method")
    if method == "initialize":
        return {"protocolVersion": request.get("params", {}).get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "py-echo", "version": "1"}}
    if method == "tools/list":
        return {"tools": [{"name": name, "description": f"{name} (a test server)",
                           "inputSchema": {"type": "object"}}
                          for name in ("echo", "read", "connect")]}
    if method == "tools/call":
        params = request.get("params", {})
        return call(params.get("name", "echo"), params.get("arguments", {}))
    if method == "ping":
        return {}
    return None


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if "id" not in request:
        continue
    result = answer(request)
    reply = ({"jsonrpc": "2.0", "id": request["id"], "result": result} if result is not None else
             {"jsonrpc": "2.0", "id": request["id"],
              "error": {"code": -32601, "message": "method not found"}})
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
