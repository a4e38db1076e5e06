#!/usr/bin/env python3
"""A tiny MCP server over stdio, standard library only (PyPI is not needed): `echo` returns its
text followed by the interpreter that ran it (sys.executable), so a test sees which python a
shim resolved to. One JSON-RPC message a line."""
import json
import sys


def answer(request):
    method = request.get("method")
    if method == "initialize":
        return {"protocolVersion": request.get("params", {}).get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "py-echo", "version": "1"}}
    if method == "tools/list":
        return {"tools": [{"name": "echo", "description": "Echoes its text.",
                           "inputSchema": {"type": "object",
                                           "properties": {"text": {"type": "string"}}}}]}
    if method == "tools/call":
        text = request.get("params", {}).get("arguments", {}).get("text", "")
        return {"content": [{"type": "text", "text": f"{text} (python {sys.executable})"}]}
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
