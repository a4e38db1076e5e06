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

# No fixed sleeps: every step waits for what it needs (lines in the audit log, the launcher's
# connection as the collector sees it); `until_true` polls, and its 60 s only bounds a hang.
until_true() {  # until_true WHAT COMMAND...
  local what=$1
  shift
  for _ in $(seq 600); do
    "$@" && return
    sleep 0.1
  done
  fail "timed out waiting for $what"
}
logged() { grep -c '"kind":"file".*"path_label":"~/.ssh"' "$audit" 2>/dev/null || echo 0; }
logged_at_least() { (($(logged) >= $1)); }
# The collector's view of the launcher: 1 while its connection is up (the hello said running),
# 0 once the collector has read the connection to its end.
running() {
  curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null |
    awk '/^gander_extension_running\{extension="killed"\}/ {print $2; found=1} END {if (!found) print -1}'
}
running_is() { [[ $(running) == "$1" ]]; }
collector_up() { curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && [[ -S $socket ]]; }

start_collector() {
  "$build/launcher/gander-collect" --listen "127.0.0.1:$port" --log-level warn &
  collector=$!
  until_true "the collector to come up" collector_up
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
until_true "the launcher to report to the collector" running_is 1
until_true "100 reads in the audit log" logged_at_least 100
kill -9 "$collector"; wait "$collector" 2>/dev/null || true
# Events pile up in the launcher's backlog meanwhile: wait for 100 more reads.
until_true "reads while the collector is down" logged_at_least $(($(logged) + 100))
start_collector
until_true "the launcher to reconnect" running_is 1
until_true "reads after the restart" logged_at_least $(($(logged) + 100))
kill -9 "$launcher"; wait "$launcher" 2>/dev/null || true
launcher=
# The collector has applied everything the killed launcher had handed over once it has read
# that connection to its end (running drops to 0 then): compare only after that.
until_true "the collector to see the launcher gone" running_is 0

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
