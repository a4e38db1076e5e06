// What the probe's files share (probe.cc: the files, environment, process and audit-log
// attempts and main; probe_network.cc; probe_syscalls.cc): the exit statuses, the syscall
// numbers old headers lack, how a try is reported, and the attempts main() dispatches to in the
// other two files.
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace gander::probe {

inline constexpr int kSucceeded = 0;
inline constexpr int kFailed = 1;
inline constexpr int kUsage = 2;

// Syscall numbers (x86_64) that Debian 12's headers may lack.
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
inline constexpr long kX32SyscallBit = 0x40000000L;
inline constexpr unsigned kOpenTreeClone = 1;  // OPEN_TREE_CLONE
inline constexpr int kI386Getpid = 20;

// The clone3 argument block (CLONE_ARGS_SIZE_VER0 part is enough for flags + exit_signal).
struct CloneArgs {
  uint64_t flags;
  uint64_t pidfd;
  uint64_t child_tid;
  uint64_t parent_tid;
  uint64_t exit_signal;
  uint64_t stack;
  uint64_t stack_size;
  uint64_t tls;
};

inline void Report(const char* what, bool ok, int err) {
  if (ok) {
    fprintf(stderr, "probe: %s: ok\n", what);
  } else {
    fprintf(stderr, "probe: %s: %s (errno %d)\n", what, strerror(err), err);
  }
}

// Reports the outcome of a libc call that returns -1 on failure; returns whether it succeeded.
inline bool Check(const char* what, long rc) {
  int err = errno;
  Report(what, rc >= 0, err);
  return rc >= 0;
}

inline std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string Fmt(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// Runs fn in a forked child and returns true when the child exited 0. Attempts that change the
// calling process irreversibly (namespaces, ptrace relations, chroot) run this way.
template <typename Fn>
inline bool InChild(const char* what, Fn fn) {
  pid_t pid = fork();
  if (pid < 0) {
    return Check(what, -1);
  }
  if (pid == 0) {
    _exit(fn() ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "probe: %s: child killed by signal %d\n", what, WTERMSIG(status));
    return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

inline int Result(bool ok) { return ok ? kSucceeded : kFailed; }

// probe_network.cc: sockets, the broker's races, DNS, a copy run from memory.
int DoTcp(const char* host, const char* port);
int DoUdp(const char* host, const char* port);
int DoPacket();
int DoVsockHighBits();
int DoUnixHighBits(const char* path);
int DoMptcpHighBits();
int DoFamilyRace(const char* ip, const char* port, const char* tries_arg);
int DoMemfdExec();
int DoListenAutobind();
int DoBindAny();
int DoNetlink();
int DoDnsExfil(const char* server);
int DoUnix(const char* path);
int DoAbstract(const char* name);

// probe_syscalls.cc: syscalls a sandbox denies.
int DoMount(const char* dir);
int DoUmount(const char* dir);
int DoChroot(const char* dir);
int DoBpf();
int DoIoUring();
int DoKeyctl();
int DoPerf();
int DoOpenByHandle(const char* path);
int DoTiocsti();
int DoX32();
int DoInt80();

}  // namespace gander::probe
