#include "common/exec_signals.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace gander {
namespace {

// The SigBlk and SigIgn masks of the /proc/self/status a child prints (cat reads its own),
// as "SigBlk:HEX SigIgn:HEX". Signals 32 and 33 are glibc's own (thread cancellation, setxid):
// its posix_spawn ignores them in every child, and no program can use them; they are left out.
std::string BlockedAndIgnored(bool spawn) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe";
  char cat[] = "/bin/cat", status[] = "/proc/self/status";
  char* argv[] = {cat, status, nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  if (spawn) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // a caller's own flag is kept
    ResetSignalsInSpawn(&attr);
    if (posix_spawn(&pid, cat, &actions, &attr, argv, envp) != 0) pid = -1;
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  } else if ((pid = fork()) == 0) {
    dup2(fds[1], 1);
    ResetSignalsForExec();
    execve(cat, argv, envp);
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  std::string masks;
  for (const char* key : {"SigBlk:", "SigIgn:"}) {
    size_t at = out.find(key);
    if (at == std::string::npos) return out;
    unsigned long long bits = std::stoull(out.substr(at + 7), nullptr, 16);
    bits &= ~(3ULL << 31);  // signals 32 and 33 (bit N-1 is signal N)
    masks += key + std::to_string(bits) + " ";
  }
  return masks;
}

// What gander run holds and ignores (monitor::HoldTerminationSignals, SIGPIPE) never reaches
// a program it starts, by fork + exec or by posix_spawn.
TEST(ExecSignalsTest, AChildStartsWithNothingHeldOrIgnored) {
  sigset_t held, before;
  sigemptyset(&held);
  sigaddset(&held, SIGTERM);
  sigaddset(&held, SIGURG);
  pthread_sigmask(SIG_BLOCK, &held, &before);
  struct sigaction ignore {
  }, old_pipe{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  sigaction(SIGHUP, &ignore, &old_hup);

  const std::string none = "SigBlk:0 SigIgn:0 ";
  EXPECT_EQ(BlockedAndIgnored(false), none) << "fork + ResetSignalsForExec";
  EXPECT_EQ(BlockedAndIgnored(true), none) << "posix_spawn + ResetSignalsInSpawn";

  sigaction(SIGHUP, &old_hup, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

}  // namespace
}  // namespace gander
