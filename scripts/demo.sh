#!/usr/bin/env bash
# The demo: what gander gives on this machine, then a real MCP server from npm
# (@modelcontextprotocol/server-filesystem) driven by the real MCP client SDK, once bare and
# once through gander, with a file planted in $HOME to show what the sandbox keeps away.
set -euo pipefail
cd "$(dirname "$0")/.."
gander=$(realpath "${1:-build/launcher/gander}")

echo "== gander doctor"
"$gander" doctor || true

ws=$(mktemp -d /tmp/gander-demo-ws.XXXXXX)
home=$(mktemp -d /tmp/gander-demo-home.XXXXXX)
trap 'rm -rf "$ws" "$home"' EXIT
mkdir -p "$home/.ssh"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (demo)" >"$home/.ssh/id_ed25519"
echo "notes from the workspace" >"$ws/notes.txt"

echo
echo "== the filesystem server, allowed directories: the workspace and \$HOME"
GANDER="$gander" DEMO_WS="$ws" DEMO_HOME="$home" node tests/e2e/demo.mjs
