// `syscalls.allow` in the seccomp filter (sandbox/seccomp_filter.h): a forked child installs
// the compiled filter (no_new_privs, no privilege needed) and reports what its syscalls give.
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#include "sandbox/seccomp_filter.h"

namespace gander::sandbox {
namespace {

// Runs `probe` in a child under `program`; returns the errno it reports (0: the syscall
// worked), or -1 when the child died otherwise.
int ErrnoUnder(const SeccompProgram& program, const std::function<long()>& probe) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    struct sock_fprog prog {
      static_cast<unsigned short>(program.instructions.size()),
          const_cast<sock_filter*>(program.instructions.data())
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
      _exit(100);
    }
    int err = probe() < 0 ? errno : 0;
    (void)!write(fds[1], &err, sizeof(err));
    _exit(0);
  }
  close(fds[1]);
  int err = -1;
  if (read(fds[0], &err, sizeof(err)) != sizeof(err)) err = -1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return err;
}

// Enough for the probe child (which ends with write and _exit, implicitly allowed).
std::vector<std::string> Base() { return {"getpid", "read", "close"}; }

TEST(SyscallAllowlist, AnUnlistedSyscallFailsWithEnosysAListedOneWorks) {
  auto program = CompileSeccompFilter({.allow = Base()});
  ASSERT_TRUE(program.ok()) << program.error().Describe();
  EXPECT_TRUE(program->unlisted.contains(SYS_getppid));
  EXPECT_FALSE(program->unlisted.contains(SYS_getpid));
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_getpid); }), 0);
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_getppid); }), ENOSYS);
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_uname, nullptr); }), ENOSYS);
}

TEST(SyscallAllowlist, WithoutAListNothingChanges) {
  auto program = CompileSeccompFilter();
  ASSERT_TRUE(program.ok());
  EXPECT_TRUE(program->unlisted.empty());
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_getppid); }), 0);
}

TEST(SyscallAllowlist, TheFloorStillWinsOverAListedSyscall) {
  std::vector<std::string> allow = Base();
  allow.insert(allow.end(), {"ptrace", "unshare", "getppid"});
  auto program = CompileSeccompFilter({.allow = allow});
  ASSERT_TRUE(program.ok()) << program.error().Describe();
  // ptrace is denied outright by the floor (EPERM), listed or not.
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_ptrace, 0, 0, 0, 0); }), EPERM);
  // unshare is listed: the floor still refuses it with CLONE_NEW* (EPERM) ...
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_unshare, CLONE_NEWUSER); }), EPERM);
  // ... and lets the rest through (unshare(0) does nothing and succeeds).
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_unshare, 0); }), 0);
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_getppid); }), 0);
}

TEST(SyscallAllowlist, AnUnlistedFloorSyscallKeepsTheFloorsAnswerOrIsRefusedWhole) {
  auto program = CompileSeccompFilter({.allow = Base()});
  ASSERT_TRUE(program.ok());
  // ptrace: the floor's unconditional EPERM stands.
  EXPECT_FALSE(program->unlisted.contains(SYS_ptrace));
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_ptrace, 0, 0, 0, 0); }), EPERM);
  // clone3: still the floor's compatibility ENOSYS.
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_clone3, nullptr, 0); }), ENOSYS);
  // unshare, unlisted: refused whatever its flags.
  EXPECT_EQ(ErrnoUnder(*program, [] { return syscall(SYS_unshare, 0); }), ENOSYS);
}

TEST(SyscallAllowlist, IsIgnoredWhenLearning) {
  auto program = CompileSeccompFilter({.notify = true, .census = true, .allow = Base()});
  ASSERT_TRUE(program.ok());
  EXPECT_TRUE(program->unlisted.empty());
}

}  // namespace
}  // namespace gander::sandbox
