#!/bin/bash
# `make demo`'s script (scripts/demo.sh) in a private HOME and XDG dirs, checked on what it
# says: the closing summary (the planted key's read blocked, the tool calls allowed), the
# filesystem run listed by `gander status`, doctor's KVM probe not tried on the default path,
# and the only process the demo leaves is this user's collector, the pid it names (killed here
# by that pid). Needs tests/e2e/node_modules (a printed skip otherwise, a failure under CI).
#   tests/packaging/demo_test.sh GANDER SOURCE_DIR SCRATCH
set -u
GANDER=$(realpath "$1")
SRC=$(realpath "$2")
. "$(dirname "$(realpath "$0")")/../scripts/preamble.sh"
[ -d "$SRC/tests/e2e/node_modules/@modelcontextprotocol/server-filesystem" ] ||
  skip_test demo_test "tests/e2e/node_modules is missing (tests/e2e/install.sh)"

world=$(mktemp -d "$(realpath "$3")/demo.XXXXXX")
collector=
cleanup() {
  if [ -n "$collector" ] && kill "$collector" 2>/dev/null; then
    # Not our child: wait for it to be gone (it saves its state on the way out).
    while [ "$(cat "/proc/$collector/comm" 2>/dev/null)" = gander-collect ]; do sleep 0.05; done
  fi
  rm -rf "$world"
}
trap cleanup EXIT
private_home "$world"

setsid --wait bash -c 'echo $$ >"$1"; exec "$2" "$3"' _ "$world/demo.sid" "$SRC/scripts/demo.sh" \
  "$GANDER" >"$world/demo.out" 2>&1
check "scripts/demo.sh: exit 0" test $? -eq 0
demo_sid=$(cat "$world/demo.sid")
out=$world/demo.out
collector=$(sed -n 's/^Left running: this user.s collector (pid \([0-9]*\)).*/\1/p' "$out")

check "doctor: the KVM probe is not tried on the default path" has "$out" "not tried (gander doctor --kvm tries it"
check "through gander, the planted key is not readable" \
  grep -q "read_text_file ~/.ssh/id_ed25519 -> ERROR" <(sed -n '/through gander/,$p' "$out")
check "bare, it is (the contrast the demo shows)" \
  grep -q "read_text_file ~/.ssh/id_ed25519 -> -----BEGIN OPENSSH PRIVATE KEY" <(sed -n '/-- bare/,/through gander/p' "$out")
check "status lists the filesystem run: stopped, one start" \
  grep -qE '^filesystem +stopped +[a-z]+ +enforce +1( |$)' "$out"
check "summary: blocked is exactly the key's read by read_text_file" \
  grep -qx "blocked: read of ~/.ssh/id_ed25519 by read_text_file (denied)" "$out"
check "summary: allowed lists the four tool calls" \
  grep -qx "allowed: write_file (ok); read_text_file (ok); read_text_file (tool_error); list_directory (ok)" "$out"
check "it names the collector it leaves running and how to stop it" \
  grep -qx "stop it with: kill $collector" "$out"
check "  that pid is this user's gander-collect" \
  test -n "$collector" -a "$(cat "/proc/$collector/comm" 2>/dev/null)" = gander-collect
# Nothing else of the demo: it ran as a session of its own; no process of that session is left
# (the collector, started on demand, has a session of its own and is the one named above).
left=
for stat in /proc/[0-9]*/stat; do
  read -r rest <"$stat" 2>/dev/null || continue
  rest=${rest##*) }
  set -- $rest
  if [ "${4:-}" = "$demo_sid" ]; then pid=${stat#/proc/}; left+=" ${pid%/stat}"; fi
done
check "nothing but the collector is left of the demo${left:+ (left:$left)}" test -z "$left"

[ "$fails" -ne 0 ] && cat "$out" >&2
finish demo_test "$world/nothing"
