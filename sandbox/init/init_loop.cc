// See init_loop.h. No libc here (not even a string function): gander-init has none.
#include "sandbox/init/init_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

namespace gander::init {
namespace {

constexpr unsigned long kAllSignals = ~0UL;  // the kernel's 64-bit sigset_t
constexpr long kSigsetBytes = sizeof(kAllSignals);

long Wait(long pid, int* status, long options) {
  return Sys(SYS_wait4, pid, reinterpret_cast<long>(status), options, 0);
}

void Kill(long pid, long sig) { Sys(SYS_kill, pid, sig); }

[[noreturn]] void Exit(int code) {
  for (;;) Sys(SYS_exit_group, code);
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 125;
}

// Without a pid namespace the extension's descendants are not confined to a namespace that
// dies with the init; as child subreaper the init inherits every orphan among them. One round
// SIGKILLs each pid listed in `path` (/proc's children list, or a cgroup.procs; read whole: a
// fork bomb lists more than a page), but the init itself.
void KillListedPids(const char* path, long self) {
  long fd = Sys(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  long pid = -1;  // the number being read, carried across reads; -1: none
  for (;;) {
    long n = Sys(SYS_read, fd, reinterpret_cast<long>(buf), sizeof(buf));
    if (n == -EINTR) continue;
    if (n <= 0) break;
    for (long i = 0; i < n; ++i) {
      char c = buf[i];
      if (c >= '0' && c <= '9') {
        pid = (pid < 0 ? 0 : pid) * 10 + (c - '0');
        if (pid > 0x7fffffff) pid = 0;  // not a pid: never kill(-1) by overflow
        continue;
      }
      if (pid > 0 && pid != self) Kill(pid, SIGKILL);
      pid = -1;
    }
  }
  if (pid > 0 && pid != self) Kill(pid, SIGKILL);
  Sys(SYS_close, fd);
}

// "/proc/self/task/<pid>/children"
void ChildrenPath(long self, char (&out)[64]) {
  const char head[] = "/proc/self/task/";
  const char tail[] = "/children";
  int len = 0;
  for (const char* p = head; *p;) out[len++] = *p++;
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + self % 10);
    self /= 10;
  } while (self > 0);
  while (count > 0) out[len++] = digits[--count];
  for (const char* p = tail; *p;) out[len++] = *p++;
  out[len] = '\0';
}

// Kills the whole tree and reaps it, returning only when the init has no child left. Why this
// terminates with nothing alive: every descendant has an ancestor chain up to the init whose
// first link is one of the init's children (an orphan is reparented to the nearest subreaper,
// the init or a descendant of it, before its old parent becomes reapable). Each round SIGKILLs
// every current child before blocking in wait, so the wait always ends (a killed child dies);
// its orphans are then the init's children and are listed in the next round. ECHILD
// therefore means no descendant is left.
void KillAndReapEverything(const char* cgroup_procs) {
  const long self = Sys(SYS_getpid);
  char children[64];
  ChildrenPath(self, children);
  for (;;) {
    KillListedPids(children, self);
    // The run's cgroup holds every descendant, also one whose reparenting is under way.
    if (cgroup_procs) KillListedPids(cgroup_procs, self);
    if (Wait(-1, nullptr, __WALL) == -ECHILD) return;
  }
}

// Everything else is gone: tells gander the exit code now, so that its end of the run
// overlaps the kernel's teardown of the init (its mounts, its namespaces). SIGPIPE, if gander
// is gone, stays blocked.
void ReportExit(const InitArgs& args, int code) {
  if (args.report_fd < 0) return;
  const int fields[3] = {kExitReportStep, 0, code};
  Sys(SYS_write, args.report_fd, reinterpret_cast<long>(fields), sizeof(fields));
}

[[noreturn]] void KillTreeAndExit(const InitArgs& args, int code) {
  if (args.namespaces) {
    Kill(-1, SIGKILL);
    for (long r; (r = Wait(-1, nullptr, __WALL)) > 0 || r == -EINTR;) {
    }
  } else {
    if (args.extension > 0) Kill(-args.extension, SIGKILL);
    KillAndReapEverything(args.cgroup_procs);
  }
  ReportExit(args, code);
  Exit(code);
}

// Reaps what has exited; true (and its status) once the extension is among them.
bool ReapExtension(const InitArgs& args, int* status) {
  for (long pid; (pid = Wait(-1, status, WNOHANG)) > 0;) {
    if (pid == args.extension) return true;
  }
  return false;
}

}  // namespace

void RunInit(const InitArgs& args) {
  unsigned long all = kAllSignals;
  Sys(SYS_rt_sigprocmask, SIG_BLOCK, reinterpret_cast<long>(&all), 0, kSigsetBytes);
  // Reap before each wait: a SIGCHLD taken before this loop (or across an execve) is then
  // never missed.
  for (int status = 0;;) {
    if (ReapExtension(args, &status)) KillTreeAndExit(args, ExitCodeOf(status));
    int info[32];  // siginfo_t: si_signo first
    long sig = Sys(SYS_rt_sigtimedwait, reinterpret_cast<long>(&all), reinterpret_cast<long>(info),
                   0, kSigsetBytes);
    if (sig <= 0) continue;
    if (sig == args.death_signal) KillTreeAndExit(args, 137);
    if (sig != SIGCHLD) Kill(args.namespaces ? -1 : -args.extension, sig);
  }
}

}  // namespace gander::init
