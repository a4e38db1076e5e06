#!/usr/bin/env bash
# The demo: what gander gives on this machine, then a real MCP server from npm
# (@modelcontextprotocol/server-filesystem) driven by the real MCP client SDK, once bare and
# once through gander, with a file planted in $HOME to show what the sandbox keeps away; then
# what this user's collector (started on demand by the first run, the only process the demo
# leaves) recorded, and a plain-language summary from the audit log it wrote.
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

# One collector: this user's (its socket and state under the real XDG directories), also for
# the run below whose HOME is the demo's throwaway one: gander itself is told where the user's
# collector and audit logs are; the extension gets an empty environment anyway.
export XDG_STATE_HOME=${XDG_STATE_HOME:-$HOME/.local/state}
audit_log=$XDG_STATE_HOME/gander/audit/filesystem.jsonl
since=$(date -u +%Y-%m-%dT%H:%M:%S)
"$gander" run --name demo-warmup -- /bin/true </dev/null || true

echo
echo "== the filesystem server, allowed directories: the workspace and \$HOME"
GANDER="$gander" DEMO_WS="$ws" DEMO_HOME="$home" DEMO_XDG_STATE_HOME="$XDG_STATE_HOME" \
  DEMO_XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-}" node tests/e2e/demo.mjs

echo
socket_dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/gander}
metrics=$(cat "${socket_dir:-$XDG_STATE_HOME/gander}/collector.sock.metrics" 2>/dev/null || echo "127.0.0.1:9477")
echo "== what the collector counted (gander status; Prometheus scrapes http://$metrics/metrics)"
"$gander" status || true

echo
echo "== what happened under gander (from the audit log the collector wrote: $audit_log)"
python3 - "$audit_log" "$since" "$home" "$ws" <<'PY' || true
import json, sys
log, since, home, ws = sys.argv[1:5]
blocked, allowed = [], []
def short(p):
    return p.replace(home, "~").replace(ws, "workspace") if p else "?"
for line in open(log, encoding="utf-8", errors="replace"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("time", "") < since:
        continue
    tool = (e.get("tool_call") or {}).get("tool") or "start-up"
    if e.get("kind") == "file":
        f = e["file"]
        if f.get("result") != "allowed" or (f.get("errno") and ".ssh" in (f.get("path") or "")):
            why = f.get("errno_name") or f.get("result")
            blocked.append(f"{f.get('access')} of {short(f.get('path'))} by {tool} ({why})")
    elif e.get("kind") in ("network", "syscall") and (e.get(e["kind"]) or {}).get("result", (e.get(e["kind"]) or {}).get("action")) in ("denied",):
        d = e[e["kind"]]
        blocked.append(f"{e['kind']} {d.get('host') or d.get('name')} by {tool}")
    elif e.get("kind") == "tool":
        t = e["tool"]
        allowed.append(f"{t['name']} ({t['outcome']})")
seen = lambda xs: list(dict.fromkeys(xs))
print("blocked: " + ("; ".join(seen(blocked)) if blocked else "nothing"))
print("allowed: " + ("; ".join(seen(allowed)) if allowed else "nothing"))
PY

# This user's collector: the process holding its socket's lock (not any gander-collect).
lock=${socket_dir:-$XDG_STATE_HOME/gander}/collector.sock.lock
collector=
for fd in /proc/[0-9]*/fd/*; do
  if [ "$(readlink "$fd" 2>/dev/null)" = "$lock" ]; then
    collector=${fd#/proc/}
    collector=${collector%%/*}
    break
  fi
done
echo
if [ -n "$collector" ]; then
  echo "Left running: this user's collector (pid $collector), for later runs and for Prometheus;"
  echo "stop it with: kill $collector"
fi
