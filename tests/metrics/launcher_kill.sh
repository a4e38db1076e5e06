#!/usr/bin/env bash
# Fault test: a real `gander run` streams events to a real collector; the collector is
# SIGKILLed and restarted during the run, then the launcher itself is SIGKILLed. Afterwards the
# collector's totals equal the events in the audit log it wrote: nothing counted twice, nothing
# counted that the log lacks (what the killed launcher had not yet handed over is in neither).
#
#   tests/metrics/launcher_kill.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: launcher_kill.sh BUILD_DIR}" && pwd)
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d /tmp/gander-kill-XXXXXX)
collector=
launcher=
cleanup() {
  [[ -n $launcher ]] && kill -9 "$launcher" 2>/dev/null || true
  [[ -n $collector ]] && kill "$collector" 2>/dev/null && wait "$collector" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

export HOME=$tmp/home XDG_RUNTIME_DIR=$tmp/run XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
mkdir -p "$HOME/.ssh" "$XDG_RUNTIME_DIR" "$tmp/ws" && chmod 700 "$XDG_RUNTIME_DIR"
echo key >"$HOME/.ssh/id_rsa"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
audit=$tmp/audit.jsonl
socket=$XDG_RUNTIME_DIR/gander/collector.sock

start_collector() {
  "$build/launcher/gander-collect" --listen "127.0.0.1:$port" --log-level warn &
  collector=$!
  for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && [[ -S $socket ]] && return
    sleep 0.1
  done
  fail "the collector did not come up"
}
start_collector

# The extension reads the denied key over and over: one file event per read. Its stdin stays
# open (a FIFO we hold), as Goose's does: at EOF gander would end the extension.
mkfifo "$tmp/stdin"
exec 3<>"$tmp/stdin"
(cd "$tmp/ws" && exec "$build/launcher/gander" run --collector connect --name killed \
   --audit-log "$audit" -- /bin/sh -c "while :; do cat $HOME/.ssh/id_rsa 2>/dev/null; done" \
   <&3 >/dev/null 2>&1) &
launcher=$!
sleep 1.5
kill -9 "$collector"; wait "$collector" 2>/dev/null || true
sleep 0.5  # events pile up in the launcher's backlog meanwhile
start_collector
sleep 1.5
kill -9 "$launcher"; wait "$launcher" 2>/dev/null || true
launcher=
sleep 1  # the collector persists and flushes the audit log within its interval

metric=$(curl -fsS "http://127.0.0.1:$port/metrics" |
  python3 -c 'import sys
total = 0
for line in sys.stdin:
    if line.startswith("gander_file_access_outside_workspace_total{") and "extension=\"killed\"" in line and "path=\"~/.ssh\"" in line:
        total += float(line.rsplit(" ", 1)[1])
print(int(total))')
logged=$(grep -c '"kind":"file".*"path_label":"~/.ssh"' "$audit" || true)
echo "launcher kill: metric $metric, audit log $logged"
[[ $logged -gt 100 ]] || fail "too few events to tell ($logged)"
[[ $metric == "$logged" ]] || fail "the metric ($metric) differs from the audit log ($logged)"
