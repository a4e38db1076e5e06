/* seccomp_fd_exec: give bubblewrap a seccomp filter comparable to gander's.
 *
 *   seccomp_fd_exec FD PROGRAM [ARGS...]   compile the filter, put the BPF on fd FD, exec PROGRAM
 *   seccomp_fd_exec --dump FILE            write the BPF to FILE and list the denied syscalls
 *
 * bwrap only accepts a filter as compiled classic BPF on a file descriptor (`--seccomp FD`).
 * hyperfine runs commands without a shell (-N), so nothing can open that descriptor for it;
 * this helper does, then execs bwrap.  It compiles the filter with libseccomp at every start,
 * as gander does, so the bwrap column pays the same compile cost as gander's; the extra execve
 * it adds is measured on its own in the benchmark (row "seccomp_fd_exec → /bin/true").
 *
 * The rules mirror gander's filter (sandbox/seccomp_filter.cc over policies/denied_syscalls.cc,
 * whose list of names this file includes):
 *   - default ALLOW;
 *   - a foreign ABI (i386 int 0x80, x32) kills the process (only the native arch is in the filter);
 *   - ~55 syscalls no MCP server needs -> EPERM;
 *   - clone3 -> ENOSYS (libc falls back to clone, whose flags a filter can read);
 *   - clone / unshare with any namespace flag -> EPERM.
 * Like gander's filter it does not set no_new_privs itself: bwrap always sets it.
 *
 * Built by bench/startup.sh with `cc -O2 -static ... -lseccomp` (static: one less dynamic link
 * on every start); no CMake target needed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* gander's own list (policies/denied_syscalls.cc includes the same file). */
static const char *const kDenied[] = {
#include "../policies/denied_syscall_names.inc"
};

static const unsigned long kNamespaceFlags[] = {
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
    CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP,
};

static void die(const char *what, int rc) {
  fprintf(stderr, "seccomp_fd_exec: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
  exit(125);
}

/* Returns the filter context; *denied gets the number of syscalls answered EPERM. */
static scmp_filter_ctx build(int *denied, FILE *names) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) die("seccomp_init", ENOMEM);
  int rc;
  if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
    die("set bad-arch action", rc);
  if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0) die("set nnp attribute", rc);

  *denied = 0;
  for (size_t i = 0; i < sizeof kDenied / sizeof kDenied[0]; i++) {
    int nr = seccomp_syscall_resolve_name(kDenied[i]);
    if (nr == __NR_SCMP_ERROR) continue; /* unknown here: cannot be called here either */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0)) < 0) die(kDenied[i], rc);
    ++*denied;
    if (names) fprintf(names, "%s\n", kDenied[i]);
  }
  if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
    die("clone3", rc);
  if (names) fprintf(names, "clone3 (ENOSYS)\n");

  /* "any namespace flag set": one masked-equality rule per flag (rule arguments are ANDed). */
  const int nrs[] = {SCMP_SYS(clone), SCMP_SYS(unshare)};
  for (size_t s = 0; s < 2; s++) {
    for (size_t f = 0; f < sizeof kNamespaceFlags / sizeof kNamespaceFlags[0]; f++) {
      if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nrs[s], 1,
                                 SCMP_A0(SCMP_CMP_MASKED_EQ, kNamespaceFlags[f],
                                         kNamespaceFlags[f]))) < 0)
        die("clone/unshare namespace flags", rc);
    }
  }
  if (names) fprintf(names, "clone, unshare with CLONE_NEW* flags (EPERM)\n");
  return ctx;
}

int main(int argc, char **argv) {
  int denied = 0;
  if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
    scmp_filter_ctx ctx = build(&denied, stdout);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die(argv[2], errno);
    int rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0) die("seccomp_export_bpf", rc);
    off_t size = lseek(fd, 0, SEEK_END);
    printf("# %d syscalls -> EPERM, clone3 -> ENOSYS, clone/unshare namespace flags -> EPERM, "
           "foreign ABI -> KILL_PROCESS; %lld BPF instructions\n",
           denied, (long long)size / 8);
    close(fd);
    seccomp_release(ctx);
    return 0;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s FD PROGRAM [ARGS...] | %s --dump FILE\n", argv[0], argv[0]);
    return 125;
  }
  char *end = NULL;
  long target = strtol(argv[1], &end, 10);
  if (!end || *end || target < 3 || target > 1000) die("bad FD (3..1000)", EINVAL);

  scmp_filter_ctx ctx = build(&denied, NULL);
  int fd = memfd_create("gander-bench-seccomp", 0);
  if (fd < 0) die("memfd_create", errno);
  int rc = seccomp_export_bpf(ctx, fd);
  if (rc < 0) die("seccomp_export_bpf", rc);
  seccomp_release(ctx);
  if (lseek(fd, 0, SEEK_SET) < 0) die("lseek", errno);
  if (fd != target) {
    if (dup2(fd, (int)target) < 0) die("dup2", errno);
    close(fd);
  }
  execvp(argv[2], argv + 2);
  die(argv[2], errno);
  return 125;
}
