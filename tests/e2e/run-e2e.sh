#!/bin/sh
# CTest entry point of the e2e tier: runs the node test file, or exits 77 (CTest's
# SKIP_RETURN_CODE) when the npm packages are not installed.
#   GANDER_BIN=/path/to/gander tests/e2e/run-e2e.sh [TEST_FILE.mjs ...]
# (default: e2e.test.mjs attribution.test.mjs)
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

skip() {
  echo "" >&2
  echo "########################################################################" >&2
  echo "##  E2E SUITE SKIPPED: $1" >&2
  echo "##  run tests/e2e/install.sh (npm ci) to install the pinned MCP servers" >&2
  echo "##  and client SDK, then run the tests again." >&2
  echo "########################################################################" >&2
  exit 77
}

[ -d node_modules ] || skip "tests/e2e/node_modules is missing"
for p in @modelcontextprotocol/sdk @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything @modelcontextprotocol/server-memory; do
  [ -f "node_modules/$p/package.json" ] || skip "node_modules has no $p"
done
if [ "${GANDER_BACKEND:-native}" = gvisor ] && ! command -v runsc >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "tests/e2e: runsc is not installed (Debian package runsc); CI=true makes that a failure" >&2
    exit 1
  fi
  skip "runsc (gVisor) is not installed: apt-get install runsc"
fi
if [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "tests/e2e: WARNING: node_modules is older than package-lock.json; run tests/e2e/install.sh" >&2
fi
if [ -z "${GANDER_BIN:-}" ]; then
  echo "tests/e2e: GANDER_BIN is not set (the path of the gander binary)" >&2
  exit 1
fi
# Test files: the arguments, else GANDER_E2E_FILES (the gVisor run: e2e.test.mjs with
# GANDER_BACKEND=gvisor), else the default pair.
[ $# -gt 0 ] || set -- ${GANDER_E2E_FILES:-e2e.test.mjs attribution.test.mjs}
exec node --test --test-concurrency=1 --test-reporter=spec "$@"
