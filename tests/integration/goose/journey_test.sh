#!/bin/bash
# The Goose user's journey, end to end (issue 18): a realistic Goose config (npx
# server-filesystem with a project directory outside the working directory, npx server-memory,
# npx server-everything with non-secret envs, npx server-sequential-thinking, a python3
# server), `gander goose wrap`, then each wrapped entry started exactly as Goose starts it
# (cmd + args, this environment plus envs, working directory $HOME) and driven with tool calls
# that must succeed: write and read a file in the project directory, create an entity and read
# it back after a restart, echo a message holding the envs values unredacted, think once, echo
# through python3 (a pyenv shim when PATH has one first, as the login shell's PATH has here);
# `gander goose doctor` green. `npx -y` installs through gander's install phase from a local
# registry serving tests/e2e/node_modules (local_registry.mjs): no network needed. As root it
# runs itself again as uid 65534. Under CI=true a skip is a failure.
# Then the wrapped memory entry learns twice (`--mode learn` added to its args, tool calls each
# time), `gander policy suggest` writes a policy from both runs, and the entry runs enforced
# under that policy and still reads its graph back. MODE (default namespaces) is the sandbox
# every wrapped entry runs in: namespaces, no-namespaces (`--no-namespaces` added after `run`)
# or gvisor (`--backend gvisor`); each is its own ctest entry, so a failure names the mode.
#   tests/integration/goose/journey_test.sh GANDER GANDER_COLLECT E2E_DIR SCRATCH [MODE]
set -u
GANDER=$(realpath "$1")
COLLECT=$(realpath "$2")
E2E=$(realpath "$3")
MODE=${5:-namespaces}
SELF=$(realpath "$0")
HERE=$(dirname "$SELF")
CLIENT=$HERE/goose_stdio_client.py
TEST_NAME=journey_test
# shellcheck source=../../scripts/preamble.sh
. "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"

for p in server-filesystem server-memory server-everything server-sequential-thinking; do
  [ -f "$E2E/node_modules/@modelcontextprotocol/$p/package.json" ] ||
    skip "tests/e2e/node_modules has no $p (tests/e2e/install.sh)"
done
command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm are required"
sandbox_mode_flags "$MODE"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"

# The user's login-shell PATH (version managers' shims first where the machine has them).
if [ -z "${GANDER_AS_NOBODY:-}" ]; then
  login_path=$(env -i HOME="${HOME:-/root}" bash -lc 'printf %s "$PATH"' 2>/dev/null)
  export PATH="${login_path:-$PATH}:/usr/local/bin:/usr/bin:/bin"
fi
first_python=$(command -v python3)

world=$(mktemp -d "$(realpath "$4")/journey.XXXXXX")
chmod 755 "$world"
registry_pid= collector=
cleanup() {
  [ -n "$collector" ] && kill "$collector" 2>/dev/null && wait "$collector" 2>/dev/null
  [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null && wait "$registry_pid" 2>/dev/null
  rm -rf "$world"
}
trap cleanup EXIT
export HOME=$world/home XDG_CONFIG_HOME=$world/home/.config XDG_STATE_HOME=$world/home/.local/state
export XDG_DATA_HOME=$world/home/.local/share XDG_RUNTIME_DIR=$world/run
unset XDG_CACHE_HOME
mkdir -p "$HOME/.config/goose" "$world/projects" "$world/out"
mkdir -m 700 "$XDG_RUNTIME_DIR"
config=$HOME/.config/goose/config.yaml

# The local registry; OSV is not reachable offline: off.
mkfifo "$world/registry.in"
node "$HERE/local_registry.mjs" "$E2E/node_modules" <"$world/registry.in" >"$world/registry.url" &
registry_pid=$!
exec 9>"$world/registry.in"
for _ in $(seq 100); do [ -s "$world/registry.url" ] && break; sleep 0.1; done
export npm_config_registry=$(cat "$world/registry.url") GANDER_OSV_ENDPOINT=off
[ -n "$npm_config_registry" ] || skip "the local registry did not start"

cat >"$config" <<CFG
GOOSE_PROVIDER: openai
extensions:
  filesystem:
    args:
    - -y
    - '@modelcontextprotocol/server-filesystem'
    - $world/projects
    bundled: null
    cmd: npx
    description: null
    enabled: true
    env_keys: []
    envs: {}
    name: filesystem
    timeout: 300
    type: stdio
  memory:
    args: [-y, '@modelcontextprotocol/server-memory']
    cmd: npx
    enabled: true
    envs: {}
    name: memory
    timeout: 300
    type: stdio
  everything:
    args: [-y, '@modelcontextprotocol/server-everything']
    cmd: npx
    enabled: true
    envs: {LOG_LEVEL: debug, FEATURE_FLAG: "true"}
    name: everything
    timeout: 300
    type: stdio
  sequential-thinking:
    args: [-y, '@modelcontextprotocol/server-sequential-thinking']
    cmd: npx
    enabled: true
    name: sequential-thinking
    timeout: 300
    type: stdio
  pyecho:
    args: ["$HERE/py_echo_server.py"]
    cmd: python3
    enabled: true
    name: pyecho
    timeout: 300
    type: stdio
CFG

"$GANDER" goose wrap >"$world/out/wrap" 2>&1
check "wrap: exit 0" test $? -eq 0
fs_policy=$XDG_CONFIG_HOME/gander/policies/goose-filesystem.yaml
check "  the filesystem policy grants the project directory read-write" \
  grep -qx -- "    - $world/projects" "$fs_policy"
ev_policy=$XDG_CONFIG_HOME/gander/policies/goose-everything.yaml
check "  everything's envs are plain variables, not secrets" has "$ev_policy" "pass: [FEATURE_FLAG, LOG_LEVEL]"
check "  and nothing of them is a secret" test -z "$(grep secrets: "$ev_policy")"

# edit_entry KEY FLAG...: FLAGs added right after `run` in the wrapped entry's args, as a user
# edits Goose's config (`--profile P` given as `--policy FILE` replaces the profile).
edit_entry() {
  python3 - "$config" "$@" <<'PY'
import sys, yaml
path, key, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(path, encoding="utf-8") as f:
    doc = yaml.safe_load(f)
args = doc["extensions"][key]["args"]
assert args[0] == "run", args
if "--policy" in flags and "--profile" in args[: args.index("--")]:
    i = args.index("--profile")
    del args[i : i + 2]
args[1:1] = flags
with open(path, "w", encoding="utf-8") as f:
    yaml.safe_dump(doc, f, sort_keys=False)
PY
}
if [ ${#mode_flags[@]} -gt 0 ]; then
  for key in filesystem memory everything sequential-thinking pyecho; do edit_entry "$key" "${mode_flags[@]}"; done
  check "every wrapped entry runs with ${mode_flags[*]}" \
    test "$(grep -c -- "${mode_flags[0]}" "$config")" -ge 5
fi

# A private collector, as goose_cli_test does (no daemon started on demand).
"$COLLECT" --listen none --log-level warn &
collector=$!
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/gander/collector.sock" ] && break; sleep 0.1; done

denials() {  # denials < AUDIT_LINES: how many refusals of the extension's own (not the install's)
  python3 -c 'import json, sys
n = 0
for line in sys.stdin:
    e = json.loads(line)
    if e.get("phase") == "install": continue
    body = e.get(e.get("kind"), {})
    if isinstance(body, dict) and "denied" in (body.get("result"), body.get("action")): n += 1
print(n)'
}
calls() { printf '%s' "$2" >"$world/$1.calls"; echo "$world/$1.calls"; }
goose_start() {  # goose_start KEY CALLS_FILE: as Goose: cwd $HOME, this environment plus envs
  (cd "$HOME" && python3 "$CLIENT" "$config" "$1" "$2") >"$world/out/$1.$3.out" 2>"$world/out/$1.$3.err"
}

note=$world/projects/journey-note.txt
goose_start filesystem "$(calls fs "[{\"tool\": \"write_file\", \"arguments\": {\"path\": \"$note\", \"content\": \"written through gander\"}, \"expect\": \"\"},
  {\"tool\": \"read_text_file\", \"arguments\": {\"path\": \"$note\"}, \"expect\": \"written through gander\"}]")" 1
check "filesystem (npx, project dir outside the cwd): write_file + read_text_file" test $? -eq 0
check "  the file is in the project directory on the host" test "$(cat "$note" 2>/dev/null)" = "written through gander"

goose_start memory "$(calls mem1 '[{"tool": "create_entities", "arguments": {"entities": [{"name": "journey-entity", "entityType": "test", "observations": ["made by the journey test"]}]}, "expect": "journey-entity"}]')" 1
check "memory (npx): create_entities" test $? -eq 0
goose_start memory "$(calls mem2 '[{"tool": "read_graph", "arguments": {}, "expect": "made by the journey test"}]')" 2
check "memory, restarted: read_graph finds the entity" test $? -eq 0
check "  the graph is in the extension's data directory" \
  has "$XDG_DATA_HOME/gander/data/memory/memory.jsonl" "journey-entity"

goose_start everything "$(calls ev '[{"tool": "echo", "arguments": {"message": "for debugging: true"}, "expect": "for debugging: true"}]')" 1
check "everything (envs LOG_LEVEL=debug, FEATURE_FLAG=true): echo unredacted" test $? -eq 0
check "  nothing was redacted" test -z "$(grep -l 'gander:redacted' "$world"/out/everything.* 2>/dev/null)"

goose_start sequential-thinking "$(calls st '[{"tool": "sequentialthinking", "arguments": {"thought": "one", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}, "expect": "thoughtNumber"}]')" 1
check "sequential-thinking (npx): one thought" test $? -eq 0

# With a pyenv shim first on PATH the server must run under pyenv's real interpreter.
py_expect="hello from python"
case "$first_python" in */.pyenv/shims/*) py_expect="hello from python (python $(dirname "$first_python")/../versions/" ;; esac
py_expect=${py_expect//\/shims\/..\//\/}
goose_start pyecho "$(calls py "[{\"tool\": \"echo\", \"arguments\": {\"text\": \"hello from python\"}, \"expect\": \"$py_expect\"}]")" 1
check "python3 server (python3 on PATH: $first_python): echo, expecting '$py_expect'" test $? -eq 0

(cd "$HOME" && "$GANDER" goose doctor) >"$world/out/doctor" 2>&1
check "goose doctor (starts each entry by default): green (exit 0)" test $? -eq 0
check "  every extension answered tools/list" test "$(grep -c "starts as Goose   yes" "$world/out/doctor")" = 5
check "  nothing refused" test -z "$(grep 'refused by gander' "$world/out/doctor")"

# --- learn twice, suggest, enforce: on the wrapped memory entry (npx, install phase) -----------
cp "$config" "$world/wrapped.yaml"
edit_entry memory --mode learn
goose_start memory "$(calls learn1 '[{"tool": "create_entities", "arguments": {"entities": [{"name": "learned-one", "entityType": "test", "observations": ["first learning run"]}]}, "expect": "learned-one"}]')" learn1
check "memory --mode learn, first run: create_entities" test $? -eq 0
goose_start memory "$(calls learn2 '[{"tool": "read_graph", "arguments": {}, "expect": "first learning run"}]')" learn2
check "memory --mode learn, second run: read_graph finds the first run's entity" test $? -eq 0
audit=$XDG_STATE_HOME/gander/audit/memory.jsonl
(cd "$HOME" && "$GANDER" policy suggest memory --base memory --workspace "$HOME") >"$world/out/memory-suggested.yaml" 2>"$world/out/suggest.err"
check "policy suggest memory: exit 0" test $? -eq 0
check "  it read both learning runs" has "$world/out/memory-suggested.yaml" "2 learning runs"
check "  it proposes no registry (install phase not charged)" \
  test -z "$(grep -i -e registry -e "${npm_config_registry#http://}" "$world/out/memory-suggested.yaml")"
check "  the suggestion is a valid policy" "$GANDER" policy check "$world/out/memory-suggested.yaml"
cp "$world/wrapped.yaml" "$config"
edit_entry memory --policy "$world/out/memory-suggested.yaml"
before=$(grep -c '' "$audit")
goose_start memory "$(calls enforce '[{"tool": "read_graph", "arguments": {}, "expect": "learned-one"}]')" enforce
check "memory enforced under the suggested policy: read_graph" test $? -eq 0
tail -n +"$((before + 1))" "$audit" | grep -e '"denied"' -e '"would_deny"' | grep -v '"phase":"install"' \
  >"$world/out/memory.enforce.denials"
check "  the enforced run refused nothing (its audit lines, install phase aside)" \
  test "$(tail -n +"$((before + 1))" "$audit" | denials)" = 0

# gander audit of an npx server with OSV off (offline here): the skipped malware check is said
# on stderr, not only in the audit log. Once, in the namespaces entry.
if [ "$MODE" = namespaces ]; then
  (cd "$world" && "$GANDER" audit -- npx -y @modelcontextprotocol/server-sequential-thinking) \
    >"$world/out/audit.out" 2>"$world/out/audit.err"
  check "gander audit -- npx …: exit 0" test $? -eq 0
  check "  stderr says the package was not checked for malware (OSV off)" \
    grep -q "gander: audit: not checked for malware (OSV): .*server-sequential-thinking" "$world/out/audit.err"
fi

if [ "$fails" -ne 0 ]; then
  echo "journey_test: $fails check(s) failed (uid $(id -u), $MODE); outputs:" >&2
  for f in "$world"/out/* "$XDG_CONFIG_HOME"/gander/policies/*; do echo "== $f" >&2; tail -40 "$f" >&2; done
  exit 1
fi
echo "journey_test: all checks passed (uid $(id -u), $MODE)"

rerun_as_nobody journey_test "$4" "$SELF" "$GANDER" "$COLLECT" "$E2E" NOBODY_SCRATCH "$MODE"
exit 0
