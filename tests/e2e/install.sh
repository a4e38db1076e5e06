#!/bin/sh
# Installs the e2e suite's pinned npm packages (package-lock.json) into tests/e2e/node_modules
# with `npm ci`, when node_modules is missing or older than the lock file. Idempotent; the
# top-level make targets call it before the e2e tier.
#   tests/e2e/install.sh [--force]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "tests/e2e/install.sh: node and npm are required (Node >= 20)" >&2
  exit 1
fi

# npm writes node_modules/.package-lock.json after every install: it is our stamp.
stamp=node_modules/.package-lock.json
reason=""
if [ "${1:-}" = "--force" ]; then
  reason="--force"
elif [ ! -d node_modules ] || [ ! -f "$stamp" ]; then
  reason="node_modules is missing"
elif [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  reason="node_modules is older than package.json/package-lock.json"
fi

if [ -z "$reason" ]; then
  echo "tests/e2e: node_modules is up to date"
  exit 0
fi
echo "tests/e2e: $reason; running npm ci" >&2
npm ci --no-audit --no-fund
