#!/bin/bash
# gander's command-line conventions, on the real binary: --version, `help [COMMAND]`, unknown
# commands and options (exit 2, the bad word named, "did you mean", a pointer to the command's
# --help), --json on status/doctor/goose doctor, GANDER_LOG_LEVEL.
#   tests/packaging/cli_test.sh GANDER GANDER_COLLECT SCRATCH
set -u
GANDER=$(realpath "$1")
COLLECT=$(realpath "$2")
TEST_NAME=cli_test
# shellcheck source=../scripts/preamble.sh
. "$(dirname "$(realpath "$0")")/../scripts/preamble.sh"
# expect DESCRIPTION STATUS STDOUT-TEXT STDERR-TEXT -- ARGS... (empty text: not checked)
expect() {
  local what=$1 status=$2 out=$3 err=$4
  shift 5
  "$GANDER" "$@" >"$world/out" 2>"$world/err"
  local rc=$?
  if [ -n "$status" ] && [ "$rc" != "$status" ]; then
    bad "$what: exit $rc, expected $status ($(head -c 300 "$world/err"))"
  elif [ -n "$out" ] && ! grep -qF -- "$out" "$world/out"; then
    bad "$what: stdout lacks '$out': $(head -c 300 "$world/out")"
  elif [ -n "$err" ] && ! grep -qF -- "$err" "$world/err"; then
    bad "$what: stderr lacks '$err': $(head -c 300 "$world/err")"
  else
    ok "$what"
  fi
}
json_ok() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2])' "$@" 2>/dev/null; }

scratch_world "$3/cli.XXXXXX"
export HOME=$world/home XDG_CONFIG_HOME=$world/home/.config XDG_STATE_HOME=$world/home/.local/state
export XDG_RUNTIME_DIR=$world/run
unset GANDER_LOG_LEVEL
mkdir -p "$HOME/.config/goose" "$world/ws"
mkdir -m 700 "$XDG_RUNTIME_DIR"

version=$("$GANDER" version)
expect "--version prints the version" 0 "$version" "" -- --version
expect "help lists the commands" 0 "status" "" -- help
expect "help COMMAND is COMMAND's help" 0 "--policy" "" -- help run
expect "help of a subcommand" 0 "--dry-run" "" -- help goose wrap
expect "help of an unknown command: exit 2, did you mean" 2 "" "unknown command 'stauts'" -- help stauts
expect "unknown command: exit 2, named, did you mean" 2 "" "unknown command 'stauts' (did you mean 'status'?)" -- stauts
expect "unknown command: pointer to --help" 2 "" "see \`gander --help\`" -- frobnicate
expect "unknown subcommand names its command" 2 "" "unknown command 'wrp' for \`gander goose\` (did you mean 'wrap'?)" -- goose wrp
expect "unknown flag of run: named, not '-- --frobnicate'" 2 "" "unknown option '--frobnicate' for \`gander run\`; see \`gander run --help\`" -- run --frobnicate -- /bin/true
if grep -qF -- "-- --frobnicate" "$world/err"; then bad "the message quotes '-- --frobnicate'"; else ok "no '-- --frobnicate' in the message"; fi
expect "a close flag gets a did you mean" 2 "" "(did you mean '--policy'?)" -- run --polcy x -- /bin/true
expect "unknown top-level flag" 2 "" "unknown option '--verison' (did you mean '--version'?)" -- --verison
expect "flag of another command" 2 "" "unknown option '--json' for \`gander policy check\`" -- policy check --json x.yaml
expect "an extension's own flags are not gander's" 0 "" "" -- run --collector off --no-namespaces -- /bin/sh -c 'exit 0' --frobnicate

"$GANDER" doctor --json >"$world/doctor.json" 2>/dev/null
if json_ok "$world/doctor.json" 'assert d["isolation_level"] in ("full","landlock","seccomp","basic") and "kernel" in d and "apparmor_userns_restricted" in d'; then
  ok "doctor --json is JSON with the isolation level"
else
  bad "doctor --json: $(head -c 300 "$world/doctor.json")"
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
"$GANDER" goose doctor --json >"$world/goose.json" 2>"$world/err"
if json_ok "$world/goose.json" 'e=d["extensions"][0]; assert e["key"]=="memory" and e["wrapped"] is False and d["problems"]>=1 and "reachable" in d["collector"]'; then
  ok "goose doctor --json lists the extension, unwrapped"
else
  bad "goose doctor --json: $(head -c 300 "$world/goose.json")"
fi

# status --json against a private collector that has seen one run.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$COLLECT" --listen "127.0.0.1:$port" --socket "$XDG_RUNTIME_DIR/gander/collector.sock" \
  --state "$world/state.json" 2>"$world/collector.err" &
collector=$!
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/gander/collector.sock" ] && break; sleep 0.1; done
(cd "$world/ws" && "$GANDER" run --collector connect --name cli-json -- /bin/true </dev/null)
"$GANDER" status --collector "127.0.0.1:$port" --json >"$world/status.json" 2>"$world/err"
if json_ok "$world/status.json" 'e=[x for x in d["extensions"] if x["name"]=="cli-json"][0]; assert e["starts"]==1 and e["exits"].get("clean")==1, e'; then
  ok "status --json shows the run with its exit"
else
  bad "status --json: $(head -c 400 "$world/status.json") $(cat "$world/err") collector: $(tail -3 "$world/collector.err")"
fi

# `gander -- CMD` is `gander run -- CMD` (after the status check: a run's default collector
# use would start one in this world's runtime directory, where the private one must be first).
expect "gander -- CMD is gander run -- CMD" 3 "" "" -- -- /bin/sh -c 'exit 3'
expect "gander -- with no command: exit 2" 2 "" "" -- --

# GANDER_LOG_LEVEL is --log-level's environment form; the option wins.
GANDER_LOG_LEVEL=debug "$GANDER" run --collector off -- /bin/true 2>"$world/err" >/dev/null
if grep -q "debug" "$world/err"; then ok "GANDER_LOG_LEVEL=debug logs debug lines"; else bad "GANDER_LOG_LEVEL=debug: no debug line"; fi
GANDER_LOG_LEVEL=debug "$GANDER" --log-level error run --collector off -- /bin/true 2>"$world/err" >/dev/null
if grep -q "debug" "$world/err"; then bad "--log-level error did not win over GANDER_LOG_LEVEL"; else ok "--log-level wins over GANDER_LOG_LEVEL"; fi
GANDER_LOG_LEVEL=loud "$GANDER" version >/dev/null 2>"$world/err"
rc=$?
if [ $rc = 2 ] && grep -q "GANDER_LOG_LEVEL\|log-level" "$world/err"; then ok "a bad GANDER_LOG_LEVEL is exit 2, named"; else bad "GANDER_LOG_LEVEL=loud: exit $rc: $(cat "$world/err")"; fi

[ $fails = 0 ] && echo "cli_test: all passed" || echo "cli_test: $fails failed" >&2
exit $((fails > 0))
