#!/bin/sh
# learn -> OCI seccomp profile -> the profile loaded for real (libseccomp, as runc/crun do).
# Usage: oci_seccomp_test.sh GANDER OCI_SECCOMP_EXEC SCRATCH
set -eu
gander=$1
loader=$2
scratch=$(mktemp -d "$3/oci.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/ws"
log="$scratch/audit.jsonl"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

# What is learned: a shell listing a directory, and `unshare -U`, whose user namespace the
# floor refuses (so `unshare` is seen, but only without CLONE_NEW* may it be allowed).
script="echo learned; ls / >/dev/null; unshare -U true 2>/dev/null || echo refused"
for i in 1 2; do
  if ! "$gander" run --mode learn --collector off --name oci --workspace "$scratch/ws" \
      --audit-log "$log" -- /bin/sh -c "$script" </dev/null >"$scratch/learn.out" \
      2>"$scratch/run.err"; then
    if grep -qi "namespace\|landlock\|seccomp\|not permitted" "$scratch/run.err"; then
      echo "SKIP: gander run cannot sandbox here: $(head -1 "$scratch/run.err")"; exit 77
    fi
    cat "$scratch/run.err" >&2; fail "learning run $i failed"
  fi
done
grep -q '"action":"counted"' "$log" || fail "no census in the audit log"

"$gander" policy suggest oci --from "$log" --format oci-seccomp >"$scratch/profile.json" \
  2>"$scratch/suggest.err" || { cat "$scratch/suggest.err" >&2; fail "suggest failed"; }
head -c 600 "$scratch/profile.json"; echo " ..."
cat "$scratch/suggest.err"

# The standard shape, and nothing of the floor allowed.
jq -e '.defaultAction == "SCMP_ACT_ERRNO" and .defaultErrnoRet == 1
       and (.architectures | length) == 1
       and ([.syscalls[] | select(.action == "SCMP_ACT_ALLOW" and (.args | not)) | .names[]]
            | index("execve") != null and index("unshare") == null and index("clone") == null)
       and ([.syscalls[] | select(.names == ["clone3"])][0].errnoRet == 38)' \
  "$scratch/profile.json" >/dev/null || fail "the profile's shape"
for name in ptrace mount bpf keyctl io_uring_setup; do
  jq -e --arg n "$name" '[.syscalls[] | select(.action == "SCMP_ACT_ALLOW") | .names[]]
                          | index($n) == null' "$scratch/profile.json" >/dev/null \
    || fail "the profile allows $name"
done
jq -e '[.syscalls[] | select(.names == ["unshare"]) | .args[0]]
       | length > 0 and all(.op == "SCMP_CMP_MASKED_EQ")' "$scratch/profile.json" >/dev/null \
  || fail "unshare should be allowed only under argument conditions"

# Loaded for real: what was learned runs the same under it.
"$loader" "$scratch/profile.json" /bin/sh -c "$script" >"$scratch/enforced.out" \
  || fail "the learned program fails under its own profile"
cmp "$scratch/learn.out" "$scratch/enforced.out" || fail "different output under the profile"
grep -qx refused "$scratch/enforced.out" || fail "unshare -U succeeded under the profile"
# A syscall never learned (mkdir) is refused with EPERM; nothing is created.
if "$loader" "$scratch/profile.json" /bin/mkdir "$scratch/new" 2>"$scratch/mkdir.err"; then
  fail "mkdir was not learned but is allowed"
fi
grep -q "Operation not permitted" "$scratch/mkdir.err" || fail "mkdir: $(cat "$scratch/mkdir.err")"
[ ! -e "$scratch/new" ] || fail "the directory was created"
# Without the census (an enforce-mode log) there is nothing to export.
"$gander" run --collector off --name plain --workspace "$scratch/ws" --audit-log "$scratch/plain.jsonl" \
  -- /bin/true </dev/null >/dev/null 2>&1 || true
if "$gander" policy suggest plain --from "$scratch/plain.jsonl" --format oci-seccomp \
    >/dev/null 2>"$scratch/none.err"; then
  fail "an export without a census should fail"
fi
grep -q "no syscall census" "$scratch/none.err" || fail "no reason given: $(cat "$scratch/none.err")"
echo PASS
# Again as uid 65534 when run as root: the same without root's privileges.
if [ "$(id -u)" = 0 ] && [ -z "${GANDER_AS_NOBODY:-}" ] && command -v setpriv >/dev/null; then
  nobody=$(mktemp -d "$3/nobody.XXXXXX")
  mkdir "$nobody/home" "$nobody/scratch"
  chmod 777 "$nobody" "$nobody/home" "$nobody/scratch"
  cd /
  GANDER_AS_NOBODY=1 setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nobody/home" \
    "$0" "$gander" "$loader" "$nobody/scratch" || { rm -rf "$nobody"; fail "as uid 65534"; }
  rm -rf "$nobody"
  echo "PASS (uid 65534 too)"
fi
