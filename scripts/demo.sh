#!/usr/bin/env bash
# The demo: what gander gives on this machine, then a real MCP server from npm
# (@modelcontextprotocol/server-filesystem) driven by the real MCP client SDK, once bare and
# once through gander, with a file planted in $HOME to show what the sandbox keeps away; then
# what the metrics collector (started on demand by that run) counted.
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

# The metrics collector starts with the first `gander run` and stays (one per user): start it
# here, with the real $HOME, not inside the demo's throwaway one below.
"$gander" run --name demo-warmup -- /bin/true </dev/null || true

echo
echo "== the filesystem server, allowed directories: the workspace and \$HOME"
GANDER="$gander" DEMO_WS="$ws" DEMO_HOME="$home" node tests/e2e/demo.mjs

echo
echo "== what the collector counted (gander status; Prometheus scrapes http://127.0.0.1:9477/metrics)"
"$gander" status || true
echo
echo "The collector keeps running for later runs (one per user); stop it with: pkill -x gander-collect"
