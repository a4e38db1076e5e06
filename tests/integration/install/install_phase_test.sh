#!/bin/sh
# The install phase is gander's, not the extension's (issue 18, break 5): the first start of
# `npx -y @modelcontextprotocol/server-everything` installs it through the install sandbox,
# with a ~/.npmrc holding a token in the home. Then:
#  - npm never reads ~/.npmrc (gander gives it a registry-only user config of its own);
#  - every event of the install sandbox is marked "phase":"install"; the extension's own
#    events hold no sensitive-file access and exactly one start;
#  - `gander policy suggest` proposes no registry host for the server;
#  - `gander audit --exercise -- npx -y ...` passes.
# Usage: install_phase_test.sh GANDER SCRATCH. Needs registry.npmjs.org (skipped with the
# reason without it, except under CI=true).
set -eu
gander=$(realpath "$1")
scratch=$(mktemp -d "$2/install-phase.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! node -e 'fetch("https://registry.npmjs.org/-/ping").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' 2>/dev/null; then
  [ "${CI:-}" = true ] && fail "registry.npmjs.org unreachable (CI=true: it must be reachable)"
  echo "SKIP: registry.npmjs.org unreachable"; exit 77
fi
mkdir -p "$scratch/home" "$scratch/ws"
printf '//registry.npmjs.org/:_authToken=npm_PLANTEDTOKEN0123456789\n' >"$scratch/home/.npmrc"
export HOME="$scratch/home"
unset XDG_STATE_HOME XDG_CONFIG_HOME XDG_DATA_HOME
log="$HOME/.local/state/gander/audit/everything.jsonl"
cat >"$scratch/in.jsonl" <<'JSON'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
JSON
cd "$scratch/ws"
: >"$scratch/out.jsonl"
# stdin stays open until the tools/list answer is out (or gander has exited).
{ cat "$scratch/in.jsonl"; while ! grep -q '"id":2' "$scratch/out.jsonl" && [ ! -e "$scratch/done" ]; do
    sleep 0.2; done; } |
  { "$gander" run --collector off --name everything -- npx -y @modelcontextprotocol/server-everything \
      >"$scratch/out.jsonl" 2>"$scratch/run.err"; touch "$scratch/done"; } || true
grep -q '"id":2' "$scratch/out.jsonl" || fail "no tools/list answer: $(tail -5 "$scratch/run.err")"
[ -s "$log" ] || fail "no audit log at $log"
grep -q '"phase":"install"' "$log" || fail "no install-phase line in the log"
grep -q '\.npmrc' "$log" && fail "~/.npmrc was read (or reported): $(grep '\.npmrc' "$log" | head -2)"
grep -v '"phase":"install"' "$log" >"$scratch/own.jsonl" || true
grep -q 'registry.npmjs.org' "$scratch/own.jsonl" && fail "the extension's own lines name the registry"
grep -q '"class":"denied"' "$scratch/own.jsonl" && fail "a sensitive-file access charged to the extension"
starts=$(grep -c '"what":"start"' "$scratch/own.jsonl" || true)
[ "$starts" = 1 ] || fail "$starts starts charged to the extension (want 1)"
"$gander" policy suggest everything --workspace "$scratch/ws" >"$scratch/suggest.yaml" 2>/dev/null ||
  fail "suggest failed"
grep -q 'registry.npmjs.org' "$scratch/suggest.yaml" && fail "suggest proposes the registry"
echo "PASS: the install phase is marked and charged to nobody"
"$gander" audit --exercise -- npx -y @modelcontextprotocol/server-everything \
  >"$scratch/audit.txt" 2>"$scratch/audit.err" || fail "gander audit: $(cat "$scratch/audit.txt" | head -30)"
echo "PASS: gander audit --exercise -- npx -y @modelcontextprotocol/server-everything"
