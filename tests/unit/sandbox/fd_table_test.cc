// PresizeFdTable (sandbox/fd_table.h): the extension's descriptor table is grown before its
// execve, with nothing left open, and within RLIMIT_NOFILE.
#include "sandbox/fd_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace gander::sandbox {
namespace {

// FDSize of /proc/self/status: the slots of the calling process's descriptor table.
int TableSlots() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("FDSize:", 0) == 0) return std::stoi(line.substr(7));
  }
  return -1;
}

bool AnyOpenFrom(int first, int last) {
  for (int fd = first; fd <= last; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0) return true;
  }
  return false;
}

// Runs `body` in a forked child (its own table and limits) with only 0, 1 and 2 open, as the
// extension has them; its return value is the exit code.
template <typename Body>
int InChild(Body body) {
  pid_t pid = fork();
  if (pid == 0) {
    close_range(3, ~0U, 0);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

TEST(PresizeFdTable, GrowsTheTableAndLeavesNothingOpen) {
  EXPECT_EQ(InChild([] {
              PresizeFdTable();
              if (TableSlots() < kPresizedFds) return 1;
              return AnyOpenFrom(3, kPresizedFds + 64) ? 2 : 0;
            }),
            0);
}

TEST(PresizeFdTable, StaysWithinALowOpenFilesLimit) {
  EXPECT_EQ(InChild([] {
              struct rlimit low {
                100, 100
              };
              if (setrlimit(RLIMIT_NOFILE, &low) != 0) return 3;
              PresizeFdTable();
              if (TableSlots() < 100) return 1;
              return AnyOpenFrom(3, 99) ? 2 : 0;
            }),
            0);
}

}  // namespace
}  // namespace gander::sandbox
