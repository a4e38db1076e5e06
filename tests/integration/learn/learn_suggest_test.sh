#!/bin/sh
# learn -> suggest -> check, with a real sandbox. Usage: learn_suggest_test.sh GANDER SCRATCH
# The scratch directory is not under /tmp (a private tmpfs in the default profile), so the
# file read outside the workspace is an `outside` one.
set -eu
gander=$1
scratch=$(mktemp -d "$2/learn.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/ws" "$scratch/data/set1"
echo hello >"$scratch/data/set1/input.txt"
log="$scratch/audit.jsonl"

fail() { echo "FAIL: $*" >&2; exit 1; }

# Two learning runs append to the same log.
for i in 1 2; do
  if ! "$gander" run --mode learn --collector off --name learner --workspace "$scratch/ws" \
      --audit-log "$log" -- /bin/sh -c "cat '$scratch/data/set1/input.txt'; echo x > out.txt" \
      </dev/null >/dev/null 2>"$scratch/run.err"; then
    if grep -qi "namespace\|landlock\|seccomp\|not permitted" "$scratch/run.err"; then
      echo "SKIP: gander run cannot sandbox here: $(head -1 "$scratch/run.err")"; exit 77
    fi
  fi
done
[ -s "$log" ] || fail "no audit log written"
grep -q "$scratch/data/set1/input.txt" "$log" || fail "the outside read is not in the audit log"

cd "$scratch/ws"
"$gander" policy suggest learner --from "$log" --workspace "$scratch/ws" >"$scratch/suggested.yaml" \
  || fail "suggest failed"
cat "$scratch/suggested.yaml"
grep -q "\"$scratch/data/set1\"" "$scratch/suggested.yaml" || fail "suggestion misses the data dir"
grep -q "2 learning runs" "$scratch/suggested.yaml" || fail "both runs should be read"
"$gander" policy check "$scratch/suggested.yaml" || fail "the suggestion does not pass policy check"

if "$gander" policy suggest --check default learner --from "$log" --workspace "$scratch/ws"; then
  fail "--check default should fail: the extension read outside it"
fi
"$gander" policy suggest --check "$scratch/suggested.yaml" learner --from "$log" \
  --workspace "$scratch/ws" || fail "--check against the suggestion should pass"

# diff: the suggestion adds the data dir to default.
"$gander" policy diff default "$scratch/suggested.yaml" >"$scratch/diff.txt" && fail "diff: no change?"
grep -q "^+ filesystem.read $scratch/data/set1" "$scratch/diff.txt" || fail "diff misses the grant"
# A name looked up and refused by the DNS stub (so never connected to) is drift too.
"$gander" run --mode learn --collector off --name learner --workspace "$scratch/ws" \
  --audit-log "$scratch/dns.jsonl" -- /usr/bin/getent hosts collect.example.net \
  </dev/null >/dev/null 2>&1 || true
if "$gander" policy suggest --check "$scratch/suggested.yaml" learner --from "$scratch/dns.jsonl" \
    >"$scratch/dns.txt" 2>/dev/null; then
  fail "--check should fail on a refused lookup"
fi
grep -q "^not covered: resolve collect.example.net" "$scratch/dns.txt" || fail "$(cat "$scratch/dns.txt")"

# Secrets: the names and deliveries a run was given are suggested (never a value); the read of
# a file secret is counted; --check reports a secret used but not in POLICY.
cat >"$scratch/secrets.yaml" <<'YAML'
version: 1
extends: default
secrets:
  LEARN_TOKEN: {from: env}
  LEARN_KEY: {from: env, as: file}
YAML
LEARN_TOKEN=tok-7f3a LEARN_KEY=key-9c2e "$gander" run --mode learn --collector off --name learner \
  --policy "$scratch/secrets.yaml" --workspace "$scratch/ws" --audit-log "$scratch/secrets.jsonl" \
  -- /bin/sh -c 'cat "$LEARN_KEY_FILE" >/dev/null' </dev/null >/dev/null 2>"$scratch/run.err" ||
  fail "the secrets run failed: $(cat "$scratch/run.err")"
grep -q 'tok-7f3a\|key-9c2e' "$scratch/secrets.jsonl" && fail "a secret's value is in the audit log"
"$gander" policy suggest learner --from "$scratch/secrets.jsonl" --workspace "$scratch/ws" \
  >"$scratch/secrets-suggested.yaml" || fail "suggest (secrets) failed"
cat "$scratch/secrets-suggested.yaml"
grep -q '^  LEARN_KEY: {from: env, as: file}  # delivered to 1 run (.*); file read 1x; tools: ' \
  "$scratch/secrets-suggested.yaml" || fail "LEARN_KEY: no secrets entry with its read"
grep -q '^  LEARN_TOKEN: {from: env}  # delivered to 1 run (.*); reads of an environment' \
  "$scratch/secrets-suggested.yaml" || fail "LEARN_TOKEN: no secrets entry"
grep -q 'tok-7f3a\|key-9c2e' "$scratch/secrets-suggested.yaml" && fail "a value in the suggestion"
grep -q '/run/secrets' "$scratch/secrets-suggested.yaml" && fail "the secret file granted as a path"
if "$gander" policy suggest --check default learner --from "$scratch/secrets.jsonl" \
    --workspace "$scratch/ws" >"$scratch/secrets-check.txt" 2>/dev/null; then
  fail "--check default should fail: the secrets are not in it"
fi
grep -q "^not covered: secret LEARN_KEY as file" "$scratch/secrets-check.txt" &&
  grep -q "^not covered: secret LEARN_TOKEN as env" "$scratch/secrets-check.txt" ||
  fail "$(cat "$scratch/secrets-check.txt")"
"$gander" policy suggest --check "$scratch/secrets-suggested.yaml" learner \
  --from "$scratch/secrets.jsonl" --workspace "$scratch/ws" ||
  fail "--check against the suggestion (secrets) should pass"
echo PASS
# Again as uid 65534 when run as root: the same without root's privileges.
if [ "$(id -u)" = 0 ] && [ -z "${GANDER_AS_NOBODY:-}" ] && command -v setpriv >/dev/null; then
  nobody=$(mktemp -d "$2/nobody.XXXXXX")
  mkdir "$nobody/home" "$nobody/scratch"
  chmod 777 "$nobody" "$nobody/home" "$nobody/scratch"
  cd /
  GANDER_AS_NOBODY=1 setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nobody/home" \
    "$0" "$gander" "$nobody/scratch" || { rm -rf "$nobody"; fail "as uid 65534"; }
  rm -rf "$nobody"
  echo "PASS (uid 65534 too)"
fi
