#!/bin/sh
# CTest entry point of `gander audit`'s end-to-end tests: exits 77 (skip) when the npm corpus is
# not installed (tests/e2e/install.sh) or gander cannot build a sandbox here.
#   GANDER_BIN=/path/to/gander tests/integration/vet/run-audit-tests.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
e2e="$here/../../e2e"
skip() { echo "SKIP: $1" >&2; exit 77; }
[ -n "${GANDER_BIN:-}" ] || { echo "GANDER_BIN is not set" >&2; exit 1; }
for p in @modelcontextprotocol/sdk @modelcontextprotocol/server-memory \
    @modelcontextprotocol/server-sequential-thinking; do
  [ -f "$e2e/node_modules/$p/package.json" ] || skip "tests/e2e/node_modules has no $p (run tests/e2e/install.sh)"
done
# The report needs the monitor (seccomp user notification) and the egress broker (namespaces).
probe=$(mktemp -d "${TMPDIR:-/tmp}/gander-audit-probe.XXXXXX")
trap 'rm -rf "$probe"' EXIT
if ! "$GANDER_BIN" run --collector off --require full --name probe --audit-log "$probe/log" \
    -- /bin/true </dev/null >/dev/null 2>"$probe/err"; then
  skip "gander cannot build a full sandbox here: $(head -1 "$probe/err")"
fi
collectors_before=$(pgrep -x gander-collect | sort)
cd "$here"
node --test --test-concurrency=1 --test-reporter=spec audit.test.mjs
status=$?
# The audit runs `gander run --collector off`: no collector may appear because of it.
collectors_after=$(pgrep -x gander-collect | sort)
if [ "$collectors_after" != "$collectors_before" ]; then
  echo "FAIL: gander-collect processes changed during the audit tests: $collectors_after" >&2
  status=1
fi
exit $status
