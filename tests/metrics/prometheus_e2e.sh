#!/usr/bin/env bash
# End to end with a real Prometheus: Debian's `prometheus` scrapes a real `gander collect`
# every second with the shipped rules loaded; a misbehaving extension under `gander run` reads
# a planted ~/.ssh key and connects to a host its policy does not name. The Prometheus HTTP
# API must then show the exact counts (equal to the audit log's events) and both alerts
# firing (GanderSensitiveFileAccess, GanderEgressDenied).
# Then the install phase (issue 18): `gander run -- npx -y TARBALL` of the evil fixture
# (tests/integration/install/fixtures/evil-package, whose postinstall reads ~/.ssh/id_rsa) and a
# run of the same extension that reads the key. /api/v1/alerts must show
# GanderSensitiveFileAccess firing once per phase, with labels extension, path, phase
# (install | run), and no install-phase alert on any other path (gander's own npm install reads
# nothing sensitive). The rule has no `for:`, so the shipped file is loaded unchanged.
#
#   tests/metrics/prometheus_e2e.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: prometheus_e2e.sh BUILD_DIR}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
for tool in prometheus curl python3 node npm; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done

tmp=$(mktemp -d /tmp/gander-prom-e2e-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; echo "--- audit log ---" >&2; cat "$audit" >&2 || true; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

export HOME=$tmp/home XDG_RUNTIME_DIR=$tmp/run XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
mkdir -p "$HOME/.ssh" "$XDG_RUNTIME_DIR" "$tmp/ws" "$tmp/prom" && chmod 700 "$XDG_RUNTIME_DIR"
echo "e2e-planted-key" >"$HOME/.ssh/id_rsa"
audit=$tmp/audit.jsonl

collect_port=$(free_port)
"$build/launcher/gander-collect" --listen "127.0.0.1:$collect_port" --log-level warn &
pids+=($!)
prom_port=$(free_port)
cat >"$tmp/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$repo/dashboards/prometheus/gander-alerts.rules.yml",
             "$repo/dashboards/prometheus/gander-recording.rules.yml"]
scrape_configs:
  - job_name: gander
    static_configs: [{targets: ["127.0.0.1:$collect_port"]}]
YAML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/prom" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
pids+=($!)

query() {  # prints the value of a one-series instant query, or nothing
  curl -fsS --get "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
wait_for() {  # wait_for QUERY EXPECTED [SECONDS]
  local got=""
  for _ in $(seq $((${3:-30} * 2))); do
    got=$(query "$1" 2>/dev/null || true)
    [[ $got == "$2" ]] && return 0
    sleep 0.5
  done
  fail "$1: expected $2, got '${got:-nothing}'"
}
wait_for 'up{job="gander"}' 1 60

# The extension's series exist at 0 before it misbehaves (a first scrape sees them).
(cd "$tmp/ws" && "$build/launcher/gander" run --collector connect --name e2e-bad \
   --audit-log "$audit" -- /bin/true </dev/null)
wait_for 'gander_extension_starts_total{extension="e2e-bad"}' 1
(cd "$tmp/ws" && "$build/launcher/gander" run --collector connect --name e2e-bad \
   --audit-log "$audit" -- /bin/sh -c "cat $HOME/.ssh/id_rsa; curl -s -m 2 http://192.0.2.1/; true" \
   </dev/null >"$tmp/stdout" 2>"$tmp/stderr") || true
grep -q e2e-planted-key "$tmp/stdout" && fail "the planted key was read"

# Exact counts, equal to the audit log.
key_events=$(grep -c '"kind":"file".*"path_label":"~/.ssh".*"result":"denied"' "$audit" || true)
net_events=$(grep -c '"kind":"network".*"ip":"192.0.2.1".*"result":"denied"' "$audit" || true)
[[ $key_events -ge 1 && $net_events -ge 1 ]] || fail "audit log: $key_events key events, $net_events network events"
wait_for 'sum(gander_file_access_outside_workspace_total{extension="e2e-bad",path="~/.ssh",result="denied"})' "$key_events"
wait_for 'sum(gander_egress_connections_total{extension="e2e-bad",destination="192.0.2.1",result="denied"})' "$net_events"
wait_for 'sum(gander_extension_starts_total{extension="e2e-bad"})' 2
wait_for 'count(ALERTS{alertname="GanderSensitiveFileAccess",alertstate="firing",extension="e2e-bad",path="~/.ssh"})' 1
wait_for 'count(ALERTS{alertname="GanderEgressDenied",alertstate="firing",extension="e2e-bad",destination="192.0.2.1"})' 1
echo "prometheus e2e: $key_events key read(s) and $net_events denied connect(s) counted exactly; both alerts firing"

# --- the install phase, through Prometheus's alerts API ---------------------------------------
(cd "$repo/tests/integration/install/fixtures/evil-package" &&
   npm pack --silent --pack-destination "$tmp" >/dev/null)
tarball=$tmp/gander-evil-fixture-1.0.0.tgz
audit=$tmp/install-audit.jsonl
(cd "$tmp/ws" && "$build/launcher/gander" run --collector connect --name e2e-install \
   --osv-endpoint off --audit-log "$audit" -- npx -y "$tarball" </dev/null >/dev/null 2>"$tmp/stderr") ||
  fail "the install of the fixture failed: $(cat "$tmp/stderr")"
(cd "$tmp/ws" && "$build/launcher/gander" run --collector connect --name e2e-install \
   --audit-log "$audit" -- /bin/sh -c "cat $HOME/.ssh/id_rsa; true" </dev/null >"$tmp/stdout" 2>/dev/null) || true
grep -q e2e-planted-key "$tmp/stdout" && fail "the planted key was read at run time"
key_lines=$(grep '"kind":"file".*"path_label":"~/.ssh".*"result":"denied"' "$audit" || true)
install_keys=$(grep -c '"phase":"install"' <<<"$key_lines" || true)
run_keys=$(grep -vc '"phase":"install"' <<<"$key_lines" || true)
[[ $install_keys -ge 1 && $run_keys -ge 1 ]] || fail "audit log: $install_keys install-phase and $run_keys run-phase key events"
# Each phase's events under its own phase label, exactly (the install not charged to the run).
wait_for 'sum(gander_file_access_outside_workspace_total{extension="e2e-install",path="~/.ssh",result="denied",phase="install"})' "$install_keys"
wait_for 'sum(gander_file_access_outside_workspace_total{extension="e2e-install",path="~/.ssh",result="denied",phase="run"})' "$run_keys"

# alerts PHASE: the GanderSensitiveFileAccess alerts of e2e-install in PHASE, one line each
# ("STATE PATH PATH_CLASS RESULT").
alerts() {
  curl -fsS "http://127.0.0.1:$prom_port/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    if l.get("alertname") == "GanderSensitiveFileAccess" and l.get("extension") == "e2e-install" \
       and l.get("phase") == sys.argv[1]:
        print(a["state"], l.get("path"), l.get("path_class"), l.get("result"), l.get("severity"))
' "$1"
}
wait_alert() {  # wait_alert PHASE: until a firing ~/.ssh alert of PHASE is listed (bounded)
  local got=""
  for _ in $(seq 120); do
    got=$(alerts "$1" 2>/dev/null || true)
    grep -q '^firing ~/.ssh denied denied critical$' <<<"$got" && return 0
    sleep 0.5
  done
  fail "no firing GanderSensitiveFileAccess{extension=e2e-install,phase=$1,path=~/.ssh}: got '${got:-nothing}'"
}
wait_alert install
wait_alert run
others=$(alerts install | grep -v ' ~/.ssh ' || true)
[[ -z $others ]] || fail "gander's own install raised alerts on other paths: $others"
echo "prometheus e2e: GanderSensitiveFileAccess firing for e2e-install in phase=install and phase=run (path ~/.ssh)"
