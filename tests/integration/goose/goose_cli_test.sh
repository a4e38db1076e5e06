#!/bin/bash
# `gander goose wrap / unwrap / doctor`, the real binary on a sample Goose config in a private
# HOME and XDG dirs, then the wrapped extensions started the way Goose starts them (real MCP
# servers from tests/e2e's node_modules, initialize + tools/list) through a private collector.
# As root it runs itself again as uid 65534. Under CI=true a skip is a failure.
#   tests/integration/goose/goose_cli_test.sh GANDER GANDER_COLLECT E2E_DIR SCRATCH
set -u
GANDER=$(realpath "$1")
COLLECT=$(realpath "$2")
E2E=$(realpath "$3")
SELF=$(realpath "$0")
CLIENT=$(dirname "$SELF")/goose_stdio_client.py
TEST_NAME=goose_cli_test
# shellcheck source=../../scripts/preamble.sh
. "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"

MEMORY_BIN=$E2E/node_modules/.bin/mcp-server-memory
FS_JS=$E2E/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
[ -x "$MEMORY_BIN" ] && [ -f "$FS_JS" ] || skip "tests/e2e/node_modules is missing (tests/e2e/install.sh)"
command -v node >/dev/null || skip "node is not installed"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"

scratch_world "$4/goose.XXXXXX"
chmod 755 "$world"
export HOME=$world/home XDG_CONFIG_HOME=$world/home/.config XDG_STATE_HOME=$world/home/.local/state
export XDG_DATA_HOME=$world/home/.local/share XDG_RUNTIME_DIR=$world/run
unset XDG_CACHE_HOME
mkdir -p "$HOME/.config/goose" "$HOME/.config/gander/policies" "$world/ws" "$world/out"
mkdir -m 700 "$XDG_RUNTIME_DIR"
config=$HOME/.config/goose/config.yaml
policies=$HOME/.config/gander/policies

# Goose's own layout for `memory` (serde_yaml), hand-written flow lists for the others; a
# disabled entry, a builtin and a remote one that must stay as they are; comments kept.
cat >"$config" <<EOF
# my goose config
GOOSE_PROVIDER: openai   # provider
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  memory:
    args: []
    bundled: null
    cmd: $MEMORY_BIN   # from the e2e corpus
    description: null
    enabled: true
    env_keys: []
    envs: {}
    name: memory
    timeout: 300
    type: stdio
  files:
    type: stdio
    cmd: node
    args: ["$FS_JS", "$world/ws"]
    enabled: true
    envs: {FILES_TOKEN: tok-123}
    env_keys: [FILES_KEY]
    timeout: 60
  notes:
    type: stdio
    cmd: node
    args: ["$FS_JS", "$world/ws"]
    enabled: true
    env_keys: [NOTES_KEY]
  off:
    type: stdio
    cmd: npx
    args: [-y, "@modelcontextprotocol/server-everything"]
    enabled: false
  remote:
    type: streamable_http
    uri: https://example.com/mcp
    enabled: true
# trailing comment
EOF
cp "$config" "$world/original.yaml"
# A policy the user already wrote for `notes`: wrap must not overwrite it.
printf 'version: 1\nextends: default\nsecrets:\n  NOTES_KEY: {from: env}\n# mine\n' \
  >"$policies/goose-notes.yaml"
cp "$policies/goose-notes.yaml" "$world/notes-policy.yaml"

# --- doctor before wrapping: unwrapped extensions are problems --------------------------------
"$GANDER" goose doctor >"$world/out/doctor0" 2>&1
check "doctor, unwrapped: exit 1" test $? -eq 1
check "  says 'wrapped           no'" has "$world/out/doctor0" "  wrapped           no"
check "  the remote extension is left alone" has "$world/out/doctor0" "not a stdio extension"
check "  says the developer shell runs outside any sandbox" has "$world/out/doctor0" \
  "the developer shell runs every command as you, outside any sandbox"
check "  says how to add gander mcp" has "$world/out/doctor0" "add \`gander mcp\` (cmd: gander, args: [mcp])"

# --- --dry-run: a diff, nothing written -------------------------------------------------------
"$GANDER" goose wrap --dry-run >"$world/out/dry" 2>"$world/out/dry.err"
check "wrap --dry-run: exit 0" test $? -eq 0
check "  prints a unified diff" has "$world/out/dry" "+++ $config"
check "  the diff rewrites memory's cmd" has "$world/out/dry" "+    cmd: $GANDER   # from the e2e corpus"
check "  says nothing was written" has "$world/out/dry" "(dry run: nothing written)"
check "  the config is unchanged" cmp -s "$config" "$world/original.yaml"
check "  no backup" test ! -e "$config.gander-backup"
check "  no policy file written" test "$(ls "$policies")" = goose-notes.yaml

# --- wrap: backup, policy files (existing ones kept), idempotent -------------------------------
"$GANDER" goose wrap >"$world/out/wrap1" 2>&1
check "wrap: exit 0" test $? -eq 0
check "  backup written, byte for byte the original" cmp -s "$config.gander-backup" "$world/original.yaml"
check "  no gander mcp entry: one line says how to add it (no prompt)" \
  test "$(grep -c "add \`gander mcp\` to Goose (extensions: {gander: {type: stdio, cmd: $GANDER, args: \[mcp\]" "$world/out/wrap1")" = 1
check "  policy for 'files' created" test -f "$policies/goose-files.yaml"
check "  it carries envs and env_keys as named secrets" \
  test "$(grep -c -e '  FILES_TOKEN: {from: env}' -e '  FILES_KEY: {from: env}' "$policies/goose-files.yaml")" = 2
check "  the existing policy for 'notes' is left as it is" cmp -s "$policies/goose-notes.yaml" "$world/notes-policy.yaml"
check "  and wrap says so" has "$world/out/wrap1" "policy: $policies/goose-notes.yaml exists; left as it is"
check "  comments and other entries kept" \
  test "$(grep -c -e '^# my goose config$' -e '^# trailing comment$' -e 'uri: https://example.com/mcp' "$config")" = 3
check "  the disabled entry is not wrapped" has "$config" 'args: [-y, "@modelcontextprotocol/server-everything"]'
check "  memory goes through gander with --name memory --profile memory" \
  has "$config" "args: [run, --name, memory, --profile, memory, --, $MEMORY_BIN]"
cp "$config" "$world/wrapped.yaml"
cp "$policies/goose-files.yaml" "$world/files-policy.yaml"

"$GANDER" goose wrap >"$world/out/wrap2" 2>&1
check "wrap again: exit 0, nothing to wrap" has "$world/out/wrap2" "$config: nothing to wrap"
check "  the config is unchanged" cmp -s "$config" "$world/wrapped.yaml"
check "  the policy files are unchanged" cmp -s "$policies/goose-files.yaml" "$world/files-policy.yaml"
check "  the backup is still the original" cmp -s "$config.gander-backup" "$world/original.yaml"

# --- doctor on the wrapped config -------------------------------------------------------------
# --no-start: the config only (a start now would bring up a collector on demand).
"$GANDER" goose doctor --no-start >"$world/out/doctor1" 2>&1
check "doctor --no-start, wrapped: exit 0" test $? -eq 0
check "  starts nothing" test -z "$(grep 'starts as Goose' "$world/out/doctor1")"
check "  memory: profile memory valid" has "$world/out/doctor1" "  policy            profile memory: valid"
check "  files: its policy file valid" has "$world/out/doctor1" "  policy            $policies/goose-files.yaml: valid"
check "  no extension unwrapped but the disabled one" \
  test "$(grep -c '  wrapped           no' "$world/out/doctor1")" = 1
check "  the collector is not running yet" has "$world/out/doctor1" "collector         not running"

# A broken policy: doctor names the file, line and column, and fails.
printf 'version: 1\nextends: default\nsecrets:\n  NOTES_KEY: {from: nowhere}\n' \
  >"$policies/goose-notes.yaml"
"$GANDER" goose doctor --no-start >"$world/out/doctor2" 2>&1
check "doctor, broken policy: exit 1" test $? -eq 1
check "  names the policy file with line:col" grep -q "policy            $policies/goose-notes.yaml: $policies/goose-notes.yaml:4:[0-9]" "$world/out/doctor2"
cp "$world/notes-policy.yaml" "$policies/goose-notes.yaml"

# --- use what wrap produced: start the wrapped commands as Goose would --------------------------
# The wrapped commands use the default `--collector auto`: a collector of our own in the private
# XDG_RUNTIME_DIR, so that no daemon is started on demand, and it is killed at the end.
"$COLLECT" --listen none --log-level warn &
collector=$!
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/gander/collector.sock" ] && break; sleep 0.1; done
# doctor's default: each wrapped, enabled extension started as Goose would, the secrets its
# env_keys name taken from this environment (Goose's keyring); from the extensions' directory.
(cd "$world/ws" && FILES_KEY=key-456 NOTES_KEY=key-789 "$GANDER" goose doctor) >"$world/out/doctor3" 2>&1
check "doctor (starts by default): exit 0" test $? -eq 0
check "  the private collector is reachable" has "$world/out/doctor3" "collector         reachable at $XDG_RUNTIME_DIR/gander/collector.sock"
check "  memory, files and notes each answered initialize + tools/list" \
  test "$(grep -c 'starts as Goose   yes, initialize + tools/list' "$world/out/doctor3")" = 3
check "  nothing refused" test -z "$(grep 'refused by gander' "$world/out/doctor3")"
(cd "$world/ws" && "$GANDER" goose doctor --json) >"$world/out/doctor3.json" 2>"$world/out/doctor3.json.err"
check "doctor --json without the env_keys secrets: memory started, files and notes not tried" \
  test "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(e["key"]+"="+e.get("started","-") for e in d["extensions"]))' "$world/out/doctor3.json")" \
  = "developer=- memory=ok files=not tried notes=not tried off=- remote=-"

cd "$world/ws"
python3 "$CLIENT" "$config" memory >"$world/out/memory.tools" 2>"$world/out/memory.err"
check "wrapped memory: initialize + tools/list through gander" test $? -eq 0
check "  lists create_entities and read_graph" test "$(grep -c -x -e create_entities -e read_graph "$world/out/memory.tools")" = 2
check "  the server exited 0 on stdin EOF" has "$world/out/memory.err" "exit status 0"
FILES_KEY=key-456 python3 "$CLIENT" "$config" files >"$world/out/files.tools" 2>"$world/out/files.err"
check "wrapped files (server-filesystem, secrets from envs/env_keys): tools/list" test $? -eq 0
check "  lists read_text_file" grep -qx read_text_file "$world/out/files.tools"
python3 "$CLIENT" "$config" files >/dev/null 2>"$world/out/files-nokey.err"
check "  without FILES_KEY set (env_keys) it refuses to start" test $? -ne 0
check "  and says which secret" has "$world/out/files-nokey.err" "secret FILES_KEY"
cd /
kill "$collector" && wait "$collector" 2>/dev/null
collector=
check "the private collector wrote both audit logs" \
  test -s "$XDG_STATE_HOME/gander/audit/memory.jsonl" -a -s "$XDG_STATE_HOME/gander/audit/files.jsonl"
# A collector started on demand would hold the lock next to the private socket.
check "no gander-collect left behind (none started on demand)" \
  flock -n "$XDG_RUNTIME_DIR/gander/collector.sock.lock" true

# --- unwrap: byte for byte ----------------------------------------------------------------------
"$GANDER" goose unwrap >"$world/out/unwrap" 2>&1
check "unwrap: exit 0" test $? -eq 0
check "  restores the original byte for byte" cmp -s "$config" "$world/original.yaml"
check "  the backup is kept" cmp -s "$config.gander-backup" "$world/original.yaml"
"$GANDER" goose unwrap >"$world/out/unwrap2" 2>&1
check "unwrap again: nothing to unwrap" has "$world/out/unwrap2" "$config: nothing to unwrap"
"$GANDER" goose doctor >"$world/out/doctor4" 2>&1
check "doctor after unwrap: exit 1 (unwrapped)" test $? -eq 1

# The backup is never overwritten: edit, wrap again, the backup is still the first original.
echo "# edited after unwrapping" >>"$config"
"$GANDER" goose wrap >"$world/out/wrap3" 2>&1
check "wrap of an edited config: exit 0" test $? -eq 0
check "  the existing backup is not overwritten" cmp -s "$config.gander-backup" "$world/original.yaml"
check "  no new 'backup:' line" test -z "$(grep '^backup:' "$world/out/wrap3")"

if [ "$fails" -ne 0 ]; then
  echo "goose_cli_test: $fails check(s) failed (uid $(id -u)); outputs:" >&2
  for f in "$world"/out/*; do echo "== $f" >&2; cat "$f" >&2; done
  exit 1
fi
echo "goose_cli_test: all checks passed (uid $(id -u))"

again_as_nobody "$4" "$GANDER" "$COLLECT" "$E2E"
exit 0
