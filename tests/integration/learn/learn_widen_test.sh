#!/bin/sh
# `--mode learn` widens the sandbox (issue 9): a fixture that reads a file of a fake HOME
# outside the workspace and connects to a host-loopback listener (127.0.0.2) succeeds at both
# while learning, both are recorded as would_deny, the suggestion allows the host and flags
# the home file for review, and enforced under `default` both are refused (the connect with an
# event). A listener inside the sandbox still answers on the sandbox's own loopback.
# Usage: learn_widen_test.sh GANDER SCRATCH. The scratch directory is not under /tmp.
set -eu
gander=$1
scratch=$(mktemp -d "$2/widen.XXXXXX")
listener=
cleanup() {
  [ -n "$listener" ] && kill "$listener" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
  [ "${CI:-}" = true ] && fail "would skip under CI: $*"
  echo "SKIP: $*"; exit 77
}
command -v node >/dev/null || skip "node is not installed"
command -v curl >/dev/null || skip "curl is not installed"

home="$scratch/home"
ws="$scratch/ws"
mkdir -p "$home" "$ws"
echo "home-notes-42" >"$home/notes.txt"

# The "test host": an HTTP listener on host loopback 127.0.0.2, port chosen by the kernel.
node -e '
  const s = require("http").createServer((q, r) => r.end("hello-from-host\n"));
  s.listen(0, "127.0.0.2", () => require("fs").writeFileSync(process.argv[1], String(s.address().port)));
' "$scratch/port" &
listener=$!
while [ ! -s "$scratch/port" ]; do
  kill -0 "$listener" 2>/dev/null || skip "cannot listen on 127.0.0.2"
  sleep 0.05
done
port=$(cat "$scratch/port")

fixture="cat '$home/notes.txt'; curl -sS --max-time 20 http://127.0.0.2:$port/"
# gander's own policies stay out of reach, even with the real home writable.
plant="mkdir -p '$home/.config/gander/policies' && echo 'version: 1' >'$home/.config/gander/policies/default.yaml' || echo own-dirs-refused"

# One gander run; stdin stays open until the fixture ends (gander stops an extension 1 s after
# its client's EOF). Usage: run MODE LOG OUT ARGS... -- COMMAND...
run() {
  mode=$1 log=$2 out=$3
  shift 3
  rm -f "$scratch/stdin"
  mkfifo "$scratch/stdin"
  HOME="$home" "$gander" run --mode "$mode" --collector off --name widen --workspace "$ws" \
    --audit-log "$log" "$@" <"$scratch/stdin" >"$out" 2>"$out.err" &
  pid=$!
  exec 3>"$scratch/stdin"
  status=0
  wait "$pid" || status=$?
  exec 3>&-
  return "$status"
}

# 1. Learning: both succeed.
log="$scratch/learn.jsonl"
if ! run learn "$log" "$scratch/learn.out" -- /bin/sh -c "$fixture; $plant"; then
  if grep -qi "namespace\|landlock\|seccomp\|not permitted" "$scratch/learn.out.err"; then
    skip "gander run cannot sandbox here: $(head -1 "$scratch/learn.out.err")"
  fi
  fail "learn run failed: $(cat "$scratch/learn.out.err")"
fi
grep -q "home-notes-42" "$scratch/learn.out" || fail "learning: the home file was not readable"
grep -q "hello-from-host" "$scratch/learn.out" || fail "learning: 127.0.0.2:$port not reached"
grep -q "own-dirs-refused" "$scratch/learn.out" || fail "a policy could be planted in ~/.config/gander"
[ -e "$home/.config/gander/policies/default.yaml" ] && fail "a policy was planted"
grep -q "mode learn exposes your files and network" "$scratch/learn.out.err" ||
  fail "no warning on stderr: $(cat "$scratch/learn.out.err")"
grep '"kind":"file"' "$log" | grep "$home/notes.txt" | grep -q '"result":"would_deny"' ||
  fail "the home read is not recorded as would_deny"
net=$(grep '"kind":"network"' "$log" | grep '"ip":"127.0.0.2"' | grep "\"port\":$port,") ||
  fail "the connect is not recorded"
echo "$net" | grep -q '"result":"would_deny"' || fail "the connect is not would_deny: $net"
echo "$net" | grep -q '"bytes_in":0,' && fail "no bytes recorded: $net"

# 2. The suggestion: the host as an allow rule, the home file for review only.
cd "$ws"
HOME="$home" "$gander" policy suggest widen --from "$log" >"$scratch/suggested.yaml" ||
  fail "suggest failed"
cat "$scratch/suggested.yaml"
grep -q "^    - {host: \"127.0.0.2\", ports: \\[$port\\]}" "$scratch/suggested.yaml" ||
  fail "the host is not an allow rule"
review=$(sed -n '/^# REVIEW:/,$p' "$scratch/suggested.yaml")
echo "$review" | grep -q "file read $home/notes.txt: the user's own, hidden by the base's private home" ||
  fail "the home file is not flagged for review"
sed '/^# REVIEW:/,$d' "$scratch/suggested.yaml" | grep -q "notes.txt" && fail "the home file is granted"
HOME="$home" "$gander" policy check "$scratch/suggested.yaml" >/dev/null || fail "policy check"
HOME="$home" "$gander" policy suggest --check default widen --from "$log" >"$scratch/check.txt" &&
  fail "--check default should fail"
grep -q "^not covered: read $home/notes.txt" "$scratch/check.txt" || fail "$(cat "$scratch/check.txt")"
grep -q "^not covered: connect 127.0.0.2:$port" "$scratch/check.txt" || fail "$(cat "$scratch/check.txt")"

# 3. Enforced under default: both refused, the connect reported (nothing listens inside).
log="$scratch/enforce.jsonl"
run enforce "$log" "$scratch/enforce.out" --profile default -- /bin/sh -c "$fixture" || true
grep -q "home-notes-42" "$scratch/enforce.out" && fail "enforce: the home file was readable"
grep -q "hello-from-host" "$scratch/enforce.out" && fail "enforce: 127.0.0.2 was reached"
grep '"kind":"network"' "$log" | grep "\"port\":$port," | grep -q '"result":"denied"' ||
  fail "enforce: the refused loopback connect has no event"

# 4. Learning keeps the sandbox's own loopback: a listener inside answers, not the host's.
inner="node -e 'const s = require(\"http\").createServer((q, r) => r.end(\"hello-from-inside\\n\"));
  s.listen($port, \"127.0.0.2\", () => require(\"fs\").writeFileSync(\"inner.port\", \"up\"))' &
  while [ ! -s inner.port ]; do sleep 0.05; done; curl -sS --max-time 20 http://127.0.0.2:$port/;
  kill \$!"
run learn "$scratch/inner.jsonl" "$scratch/inner.out" -- /bin/sh -c "$inner" ||
  fail "inner run: $(cat "$scratch/inner.out.err")"
grep -q "hello-from-inside" "$scratch/inner.out" || fail "the listener inside was not reached"
echo PASS

# Again as uid 65534 when run as root.
if [ "$(id -u)" = 0 ] && [ -z "${GANDER_AS_NOBODY:-}" ] && command -v setpriv >/dev/null; then
  nobody=$(mktemp -d "$2/nobody.XXXXXX")
  chmod 777 "$nobody"
  cd /
  GANDER_AS_NOBODY=1 setpriv --reuid=65534 --regid=65534 --clear-groups \
    env HOME="$nobody" "$0" "$gander" "$nobody" || { rm -rf "$nobody"; fail "as uid 65534"; }
  rm -rf "$nobody"
  echo "PASS (uid 65534 too)"
fi
