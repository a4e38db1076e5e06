#!/bin/bash
# One collector per user, found by that user only, and none left behind by a removed HOME:
# root and uid 65534, at once, each with a HOME of its own, run an extension through a
# collector started on demand; each `gander status` (no --collector) shows its own extension
# and not the other's, each collector serves its own port (recorded next to its socket); then
# each HOME is removed and its collector exits.  Needs root and setpriv; under CI=true a skip
# is a failure.
#   tests/integration/collector/collector_user_test.sh GANDER SCRATCH
set -u
GANDER=$(realpath "$1")
TEST_NAME=collector_user_test
# shellcheck source=../../scripts/preamble.sh
. "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"
[ "$(id -u)" = 0 ] || skip "needs root (to run as uid 65534 too)"
command -v setpriv >/dev/null || skip "setpriv is not installed"
world=$(mktemp -d "$2/users.XXXXXX")
chmod 755 "$world"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$world"
}
trap cleanup EXIT
mkdir -p "$world/root" "$world/nobody" "$world/ws"
chown 65534:65534 "$world/nobody"
chmod 777 "$world/ws"

as() {  # as root|nobody COMMAND...: in that user's HOME and XDG directories
  local who=$1 h=$world/$1
  shift
  local env=(env -i PATH=/usr/bin:/bin HOME=$h XDG_RUNTIME_DIR=$h/run XDG_STATE_HOME=$h/state
    XDG_CONFIG_HOME=$h/config)
  if [ "$who" = nobody ]; then
    (cd "$world/ws" && setpriv --reuid=65534 --regid=65534 --clear-groups "${env[@]}" "$@")
  else
    (cd "$world/ws" && "${env[@]}" "$@")
  fi
}
for who in root nobody; do
  as $who sh -c 'mkdir -p -m 700 "$XDG_RUNTIME_DIR"'
done
# At once: both collectors start on demand, each with the default port.
as root "$GANDER" run --name only-root -- /bin/true </dev/null &
as nobody "$GANDER" run --name only-nobody -- /bin/true </dev/null &
wait
for who in root nobody; do
  as $who "$GANDER" status >"$world/$who.status" 2>&1
  other=$([ $who = root ] && echo nobody || echo root)
  if grep -q "^only-$who " "$world/$who.status" && ! grep -q "only-$other" "$world/$who.status"; then
    ok "$who's gander status shows only $who's extension"
  else
    bad "$who's gander status: $(cat "$world/$who.status")"
  fi
done
a_root=$(cat "$world/root/run/gander/collector.sock.metrics" 2>/dev/null)
a_nobody=$(cat "$world/nobody/run/gander/collector.sock.metrics" 2>/dev/null)
if [ -n "$a_root" ] && [ -n "$a_nobody" ] && [ "$a_root" != "$a_nobody" ]; then
  ok "each collector serves its own port ($a_root, $a_nobody)"
else
  bad "metrics addresses: root '$a_root', nobody '$a_nobody'"
fi

# A removed HOME takes its collector along.
for who in root nobody; do
  pid=$(pgrep -f "gander-collect --log-file $world/$who/state/gander/collector.log")
  [ -n "$pid" ] || { bad "no collector found for $who"; continue; }
  pids+=("$pid")
  rm -rf "${world:?}/$who/state" "${world:?}/$who/run"
  # Waits for the exit (the collector checks every 2 s); bounded so a failure ends.
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    bad "$who's collector (pid $pid) still runs 30 s after its state directory went"
  else
    ok "$who's collector exits when its state directory is removed"
  fi
done

[ $fails = 0 ] && echo "collector_user_test: all passed" || echo "collector_user_test: $fails failed" >&2
exit $((fails > 0))
