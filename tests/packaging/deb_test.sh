#!/bin/bash
# The Debian package, end to end, as root: CPack builds gander_VERSION_ARCH.deb from the build
# tree, lintian reports no error, dpkg installs it (its dependencies declared and present),
# /usr/bin/gander passes a smoke test (doctor, a run of /bin/true, goose wrap writing
# /usr/bin/gander into a Goose config, then the Goose CLI test with the installed binaries when
# tests/e2e is installed), and dpkg -r / -P leave none of its files behind.
# Under CI=true a skip is a failure.
#   tests/packaging/deb_test.sh BUILD_DIR SOURCE_DIR SCRATCH
set -u
BUILD=$(realpath "$1")
SRC=$(realpath "$2")
TEST_NAME=deb_test
# shellcheck source=../scripts/preamble.sh
. "$(dirname "$(realpath "$0")")/../scripts/preamble.sh"
[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i)"
for tool in cpack dpkg lintian; do command -v $tool >/dev/null || skip "$tool is not installed"; done
if dpkg-query -W -f='${Status}' gander 2>/dev/null | grep -q "ok installed"; then
  skip "a gander package is already installed here; not touching it"
fi
world=$(mktemp -d "$3/deb.XXXXXX")
chmod 755 "$world"
installed=
cleanup() {
  [ -n "$installed" ] && dpkg -P gander >/dev/null 2>&1
  rm -rf "$world"
}
trap cleanup EXIT

if ! (cd "$world" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$world/pkg" >"$world/cpack.log" 2>&1); then
  bad "cpack: $(tail -5 "$world/cpack.log")"
  exit 1
fi
deb=$(ls "$world"/pkg/gander_*_*.deb 2>/dev/null | head -1)
version=$(sed -n 's/^project(gander VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
arch=$(dpkg --print-architecture)
if [ "$(basename "$deb")" = "gander_${version}_${arch}.deb" ]; then ok "built $(basename "$deb")"; else bad "package file: '$deb'"; exit 1; fi

lintian --tag-display-limit 0 "$deb" >"$world/lintian.txt" 2>&1
echo "--- lintian $(basename "$deb")"; cat "$world/lintian.txt"; echo "---"
if grep -q '^E: ' "$world/lintian.txt"; then bad "lintian reports errors"; else ok "lintian: no errors"; fi

depends=$(dpkg-deb -f "$deb" Depends)
if echo "$depends" | grep -q libc6 && echo "$depends" | grep -q prometheus-cpp; then
  ok "dependencies declared: $depends"
else
  bad "Depends: '$depends'"
fi
if dpkg -i "$deb" >"$world/dpkg.log" 2>&1; then
  installed=1
  ok "dpkg -i"
else
  bad "dpkg -i: $(tail -5 "$world/dpkg.log")"
  exit 1
fi
dpkg-query -L gander | LC_ALL=C sort >"$world/files.txt"

# Smoke test against /usr/bin/gander, in a private HOME.
export HOME=$world/home XDG_CONFIG_HOME=$world/home/.config XDG_STATE_HOME=$world/home/.local/state
export XDG_RUNTIME_DIR=$world/run
mkdir -p "$HOME/.config/goose" "$world/ws" && mkdir -m 700 "$XDG_RUNTIME_DIR"
/usr/bin/gander doctor >"$world/doctor.txt" 2>&1
rc=$?
if [ $rc -le 1 ] && grep -q "isolation level" "$world/doctor.txt"; then ok "gander doctor (exit $rc)"; else bad "gander doctor: exit $rc"; fi
if (cd "$world/ws" && /usr/bin/gander run --collector off -- /bin/true </dev/null); then ok "gander run -- /bin/true"; else bad "gander run -- /bin/true"; fi
(cd "$world/ws" && /usr/bin/gander run -- /bin/true </dev/null)
# The collector this run started on demand: this HOME's, found by its log file's path.
collector=$(pgrep -f "^/usr/libexec/gander/gander-collect --log-file $XDG_STATE_HOME/gander/collector.log")
if [ -n "$collector" ]; then
  ok "a run started the installed collector, /usr/libexec/gander/gander-collect"
  kill $collector
else
  bad "no collector from /usr/libexec/gander after a run"
fi
cat >"$HOME/.config/goose/config.yaml" <<'YAML'
extensions:
  memory:
    type: stdio
    name: memory
    cmd: npx
    args: [-y, "@modelcontextprotocol/server-memory"]
    enabled: true
YAML
if /usr/bin/gander goose wrap >/dev/null 2>&1 && grep -q "cmd: /usr/bin/gander" "$HOME/.config/goose/config.yaml"; then
  ok "goose wrap writes cmd: /usr/bin/gander"
else
  bad "goose wrap: $(grep cmd "$HOME/.config/goose/config.yaml")"
fi
if [ -f /etc/apparmor.d/gander ] && grep -q "^profile gander /usr/bin/gander " /etc/apparmor.d/gander; then
  ok "/etc/apparmor.d/gander grants userns to /usr/bin/gander"
else
  bad "/etc/apparmor.d/gander"
fi
if command -v apparmor_parser >/dev/null && [ -f /etc/apparmor.d/abi/4.0 ]; then
  apparmor_parser -Q -K /etc/apparmor.d/gander && ok "apparmor_parser accepts the profile" || bad "apparmor_parser -Q"
fi
if [ -x "$SRC/tests/e2e/node_modules/.bin/mcp-server-memory" ]; then
  CI=${CI:-} "$SRC/tests/integration/goose/goose_cli_test.sh" /usr/bin/gander /usr/libexec/gander/gander-collect \
    "$SRC/tests/e2e" "$world" >"$world/goose.log" 2>&1
  rc=$?
  if [ $rc = 0 ]; then ok "the Goose CLI test passes with /usr/bin/gander"; else bad "goose_cli_test with /usr/bin/gander (exit $rc): $(grep FAIL "$world/goose.log" | head -5)"; fi
fi

if dpkg -r gander >"$world/dpkg.log" 2>&1; then ok "dpkg -r"; else bad "dpkg -r: $(tail -3 "$world/dpkg.log")"; fi
left=$(while read -r f; do [ -f "$f" ] && echo "$f"; done <"$world/files.txt" | grep -v '^/etc/')
if [ -z "$left" ]; then ok "dpkg -r removes every file but the conffile"; else bad "left after dpkg -r: $left"; fi
if dpkg -P gander >"$world/dpkg.log" 2>&1; then installed=; ok "dpkg -P"; else bad "dpkg -P: $(tail -3 "$world/dpkg.log")"; fi
left=$(while read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done <"$world/files.txt")
if [ -z "$left" ] && ! dpkg-query -W gander >/dev/null 2>&1; then ok "dpkg -P leaves nothing"; else bad "left after dpkg -P: $left"; fi

[ $fails = 0 ] && echo "deb_test: all passed" || echo "deb_test: $fails failed" >&2
exit $((fails > 0))
