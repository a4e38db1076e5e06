#!/usr/bin/env bash
# Regenerates dashboards/golden/metrics.txt from a real run: a private `gander collect`, a few
# `gander run`s that leave every kind of series the dashboards and rules match on (a denied
# read of a planted ~/.ssh key, a denied syscall, learn and monitor modes, a crash), then one
# scrape of /metrics. check-drift.py then holds the dashboards and rules to what the collector
# really exposes.
#
#   dashboards/golden/regenerate.sh BUILD_DIR [OUT]   (OUT defaults to dashboards/golden/metrics.txt)
set -euo pipefail
build=$(cd "${1:?usage: regenerate.sh BUILD_DIR [OUT]}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$repo/dashboards/golden/metrics.txt}
gander=$build/launcher/gander
collect=$build/launcher/gander-collect

tmp=$(mktemp -d /tmp/gander-golden-XXXXXX)
collector_pid=
cleanup() {
  [[ -n $collector_pid ]] && kill "$collector_pid" 2>/dev/null && wait "$collector_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export HOME=$tmp/home XDG_RUNTIME_DIR=$tmp/run XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
mkdir -p "$HOME/.ssh" "$XDG_RUNTIME_DIR" "$tmp/ws" && chmod 700 "$XDG_RUNTIME_DIR"
echo "golden-key" >"$HOME/.ssh/id_rsa"
"$collect" --listen "127.0.0.1:$port" --log-level warn &
collector_pid=$!
for _ in $(seq 50); do [[ -S $XDG_RUNTIME_DIR/gander/collector.sock ]] && break; sleep 0.1; done

run() { (cd "$tmp/ws" && "$gander" --log-level error run --collector connect "$@" </dev/null >/dev/null 2>&1) || true; }
run --name golden-enforce -- /bin/cat "$HOME/.ssh/id_rsa"
run --name golden-enforce -- /bin/sh -c 'exit 3'
run --name golden-enforce -- /bin/sh -c 'kill -9 $$'
run --name golden-learn --mode learn -- /bin/cat /etc/hostname
run --name golden-monitor --mode monitor -- /bin/cat /etc/hostname
# A denied syscall: unshare(CLONE_NEWUSER) inside the sandbox.
run --name golden-enforce -- /usr/bin/unshare -U /bin/true
# Network and secrets: an allowed host and a secret start their series at 0; a connect to a
# host the policy does not name and a DNS query the stub refuses are denied.
cat >"$tmp/net.yaml" <<'YAML'
version: 1
extends: default
network:
  allow:
    - {host: api.example.com, ports: [443]}
secrets:
  GOLDEN_TOKEN: {from: env}
YAML
GOLDEN_TOKEN=golden-secret-value run --name golden-net --policy "$tmp/net.yaml" -- \
  /bin/sh -c 'curl -s -m 2 http://192.0.2.1/; getent hosts not-allowed.example.org; echo golden-secret-value'
# A tool call through the relay: one JSON-RPC request answered by a shell "server".
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}' |
  (cd "$tmp/ws" && "$gander" --log-level error run --collector connect --name golden-tools -- \
    /bin/sh -c 'read -r line; echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}"' \
    >/dev/null 2>&1) || true
sleep 0.5

curl -fsS "http://127.0.0.1:$port/metrics" | grep -v '^exposer_\|^# \(HELP\|TYPE\) exposer_' >"$out"
echo "wrote $out ($(grep -vc '^#' "$out") series)" >&2
