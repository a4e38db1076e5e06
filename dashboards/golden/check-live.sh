#!/usr/bin/env bash
# The drift check against a dump taken now from a real collector fed by real `gander run`s
# (regenerate.sh), not only against the committed one: dashboards and rules stay in step with
# what the code exposes today.   check-live.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
dump=$(mktemp /tmp/gander-live-dump-XXXXXX)
trap 'rm -f "$dump"' EXIT
"$here/regenerate.sh" "$1" "$dump"
python3 "$here/../check-drift.py" --dump "$dump"
