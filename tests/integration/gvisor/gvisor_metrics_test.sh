#!/bin/bash
# The metrics pipeline under gVisor: `gander run --backend gvisor` sends its events to a private
# `gander collect` (private HOME and XDG dirs, its own port), whose /metrics must show the
# extension's info metric with backend="gvisor" and the syscall accounting in force, and the
# file events gVisor's strace reported (a read of the planted ~/.ssh key, a write outside the
# workspace). The collector is killed at the end. As root it runs itself again as uid 65534.
# Under CI=true a skip is a failure.
#   tests/integration/gvisor/gvisor_metrics_test.sh GANDER GANDER_COLLECT SCRATCH
set -u
GANDER=$(realpath "$1")
COLLECT=$(realpath "$2")
SELF=$(realpath "$0")
TEST_NAME=gvisor_metrics_test
# shellcheck source=../../scripts/preamble.sh
. "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"

command -v runsc >/dev/null 2>&1 || skip "runsc is not installed (apt-get install runsc)"
for tool in curl python3; do command -v $tool >/dev/null || skip "$tool is not installed"; done

# Not under /tmp: the sandbox's /tmp is a private tmpfs, so "outside" must be elsewhere.
scratch_world /var/tmp/gander-gvisor-metrics-XXXXXX
chmod 755 "$world"
export HOME=$world/home XDG_RUNTIME_DIR=$world/run XDG_STATE_HOME=$world/state
export XDG_CONFIG_HOME=$world/config XDG_DATA_HOME=$world/data
mkdir -p "$HOME/.ssh" "$world/ws" "$world/outside"
mkdir -m 700 "$XDG_RUNTIME_DIR"
echo "PLANTED-KEY-$$" >"$HOME/.ssh/id_rsa"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
socket=$XDG_RUNTIME_DIR/gander/collector.sock

"$COLLECT" --listen "127.0.0.1:$port" --log-level warn &
collector=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && [ -S "$socket" ] && break
  sleep 0.1
done
[ -S "$socket" ] || { bad "the private collector did not come up"; exit 1; }

cd "$world/ws"
"$GANDER" run --collector connect --backend gvisor --name gvm -- /bin/sh -c \
  "cat '$HOME/.ssh/id_rsa'; echo x > '$world/outside/w.txt'; echo done" \
  </dev/null >"$world/stdout" 2>"$world/stderr"
status=$?
if grep -qi "runsc.*\(not permitted\|cannot\)\|rootless" "$world/stderr" && [ $status -ne 0 ] &&
  ! grep -q done "$world/stdout"; then
  skip "runsc does not run here: $(head -1 "$world/stderr")"
fi
check "the run under gVisor ends (exit 0)" test $status -eq 0
check "  its stdout is only the extension's" test "$(cat "$world/stdout")" = done

# The collector acknowledges within its persist interval; the launcher waited for that at exit.
curl -fsS "http://127.0.0.1:$port/metrics" >"$world/metrics" || bad "GET /metrics"
series() { grep -E "^$1\\{" "$world/metrics" | grep -F 'extension="gvm"'; }
info=$(series gander_extension_info)
check "gander_extension_info for the extension" test -n "$info"
check "  backend=\"gvisor\"" grep -qF 'backend="gvisor"' <<<"$info"
check "  syscall_accounting=\"gvisor-strace\" (+broker with seccomp user notification)" \
  grep -qE 'syscall_accounting="gvisor-strace(\+broker)?"' <<<"$info"
check "  isolation=\"gvisor\"" grep -qF 'isolation="gvisor"' <<<"$info"
files=$(series gander_file_access_outside_workspace_total)
check "the ~/.ssh read reached the metrics: denied, once" \
  grep -qF 'path="~/.ssh",path_class="denied",access="read",result="denied",phase="run"} 1' <<<"$files"
check "the write outside the workspace reached the metrics: denied, once" \
  grep -qE 'path_class="outside",access="create",result="denied",phase="run"\} 1$' <<<"$files"
check "  both counted as file denials" \
  grep -qE 'domain="file",mechanism="seccomp",mode="enforce",phase="run"\} 2$' <<<"$(series gander_denials_total)"
check "one start and one clean exit" test "$(series gander_extension_starts_total)" = \
  'gander_extension_starts_total{extension="gvm"} 1' -a \
  -n "$(series gander_extension_exits_total | grep -F 'reason="clean"} 1')"
cd /
kill "$collector" && wait "$collector" 2>/dev/null
collector=
check "the private collector is gone" flock -n "$socket.lock" true

if [ "$fails" -ne 0 ]; then
  echo "gvisor_metrics_test: $fails check(s) failed (uid $(id -u))" >&2
  echo "== stderr" >&2; cat "$world/stderr" >&2
  echo "== metrics (gvm)" >&2; grep -F 'extension="gvm"' "$world/metrics" >&2
  exit 1
fi
echo "gvisor_metrics_test: all checks passed (uid $(id -u))"

again_as_nobody "$3" "$GANDER" "$COLLECT"
exit 0
