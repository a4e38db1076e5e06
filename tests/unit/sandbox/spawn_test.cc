// Exec vectors built before fork (sandbox/spawn.h): the child execs without allocating.
#include "sandbox/spawn.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <new>
#include <string>

namespace {
// Set in a forked child only: any operator new there aborts the child (SIGABRT).
std::atomic<bool> g_no_allocation{false};
}  // namespace

void* operator new(std::size_t n) {
  if (g_no_allocation.load(std::memory_order_relaxed)) std::abort();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// Every form that pairs with the deletes below comes from malloc too: the library's nothrow
// new (std::stable_sort's buffer) freed by this sized delete is otherwise a mismatch to ASan.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_no_allocation.load(std::memory_order_relaxed)) std::abort();
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace gander::sandbox {
namespace {

// Forks, forbids allocation in the child, runs the spec; the child's wait status.
int RunForbiddingAllocation(const ExecSpec& spec) {
  pid_t pid = fork();
  if (pid == 0) {
    g_no_allocation = true;
    int err = spec.Exec();
    _exit(err == ENOENT ? 127 : 126);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

TEST(ExecSpecTest, ExecsThroughPathWithoutAllocatingInTheChild) {
  ExecSpec spec({"sh", "-c", "test \"$GANDER_SPAWN\" = yes"}, {"GANDER_SPAWN=yes", "PATH=/bin"});
  EXPECT_EQ(spec.path().front(), '/') << spec.path();
  int status = RunForbiddingAllocation(spec);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child did not get the environment given";
}

TEST(ExecSpecTest, MissingProgramIsEnoent) {
  ExecSpec spec({"gander-no-such-program-xyz"});
  int status = RunForbiddingAllocation(spec);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 127);
}

TEST(ExecSpecTest, PathWithASlashIsTakenAsIs) {
  ExecSpec spec({"/bin/true"});
  EXPECT_EQ(spec.path(), "/bin/true");
  int status = RunForbiddingAllocation(spec);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace gander::sandbox
