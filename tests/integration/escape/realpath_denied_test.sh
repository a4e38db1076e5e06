#!/usr/bin/env bash
# A path probe of a denied path is seen at the default `--files opens` (issue 18): a sandboxed
# `fs.realpathSync(~/.ssh/id_rsa)` (node) and `os.path.realpath` (python3) make no open, only
# lstat and readlink, and stat is watched only at `--files all`. With namespaces each denied
# path in the private home is a placeholder symlink (sandbox/filesystem_plan.h,
# DeniedPlaceholders), so resolving it takes a readlink, which is watched by default: the audit
# log has a file event on ~/.ssh, class denied, access stat, from the runtime's own process;
# the key stays unread. As root and as uid 65534.
#
#   tests/integration/escape/realpath_denied_test.sh GANDER [SCRATCH]
set -uo pipefail
TEST_NAME=realpath_denied_test
. "$(dirname "$(realpath "$0")")/../../scripts/preamble.sh"
gander=$(realpath "${1:?usage: realpath_denied_test.sh GANDER [SCRATCH]}")
scratch=${2:-${TMPDIR:-/tmp}}
for tool in node python3; do command -v "$tool" >/dev/null || skip "$tool is not installed"; done

scratch_world "$scratch/gander-realpath-XXXXXX"
chmod 755 "$world"
private_home "$world"
mkdir -p "$HOME/.ssh" "$world/ws" "$world/out"
echo "planted key: never read" >"$HOME/.ssh/id_rsa"

# probe NAME CMD...: CMD under gander with its own audit log; ok when a denied ~/.ssh file event
# from the readlink family is in the log.
probe() {
  local name=$1 log=$world/out/$1.jsonl
  shift
  (cd "$world/ws" && "$gander" run --name "$name" --audit-log "$log" -- "$@" \
     </dev/null >"$world/out/$name.stdout" 2>"$world/out/$name.stderr")
  check "$name: the key was not read" bash -c "! grep -q 'planted key' '$world/out/$name.stdout'"
  check "$name: a denied file event on ~/.ssh at --files opens" python3 - "$log" "$HOME" <<'PY'
import json, sys
log, home = sys.argv[1], sys.argv[2]
events = [json.loads(l) for l in open(log) if l.strip()]
hits = [e for e in events if e.get("kind") == "file"
        and e["file"].get("syscall") in ("readlink", "readlinkat")
        and e["file"].get("raw_path", "").startswith(home + "/.ssh")
        and e["file"].get("class") == "denied" and e["file"].get("result") == "denied"
        and e["file"].get("access") == "stat" and e.get("path_label", e["file"].get("path_label")) in (None, "~/.ssh")]
if not hits:
    print("no readlink event on ~/.ssh; file events:", file=sys.stderr)
    for e in events:
        if e.get("kind") == "file": print(json.dumps(e), file=sys.stderr)
sys.exit(0 if hits else 1)
PY
}
# Nothing but the resolution: neither probe opens what it resolved.
probe node-realpath node -e 'const fs = require("fs"), os = require("os");
try { console.error("realpath:", fs.realpathSync(os.homedir() + "/.ssh/id_rsa")); }
catch (e) { console.error("realpath:", e.code); }'
probe python-realpath python3 -c 'import os, sys
print("realpath:", os.path.realpath(os.path.expanduser("~/.ssh/id_rsa")), file=sys.stderr)'

finish "$TEST_NAME" "$world/out"
again_as_nobody "$scratch" "$gander"
