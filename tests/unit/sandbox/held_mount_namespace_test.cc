// The sandbox's mount namespace held past its last process (sandbox/sandbox.h,
// HeldMountNamespace): kept while held, let go in the background once released, never leaked.
// Seen through a tmpfs mounted only in that namespace: its superblock goes with the namespace's
// last reference, and inotify then reports IN_UNMOUNT on it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "common/unique_fd.h"
#include "sandbox/sandbox.h"
#include "tests/unit/temp_dir_test.h"

namespace gander::sandbox {
namespace {

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

// True when the next inotify event on `fd` is IN_UNMOUNT.
bool Unmounted(int fd) {
  alignas(inotify_event) char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf);
  return n >= static_cast<ssize_t>(sizeof(inotify_event)) &&
         (reinterpret_cast<const inotify_event*>(buf)->mask & IN_UNMOUNT) != 0;
}

// A child in its own user and mount namespaces with a tmpfs on dir_, watched from here; it
// exits when told to (Reap).
class HeldMountNamespaceTest : public unit::TempDirTest {
 protected:
  HeldMountNamespaceTest() : TempDirTest("held-mntns") {}

  void SetUp() override {
    TempDirTest::SetUp();
    if (HasFatalFailure()) return;
    int ready[2], go[2];
    ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
    UniqueFd ready_r(ready[0]), ready_w(ready[1]);
    go_w_ = UniqueFd(go[1]);
    UniqueFd go_r(go[0]);
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      char byte = unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 &&
                  mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                  mount("tmpfs", dir_.c_str(), "tmpfs", 0, nullptr) == 0;
      (void)!write(ready_w.get(), &byte, 1);
      (void)!read(go_r.get(), &byte, 1);
      _exit(0);
    }
    char mounted = 0;
    ASSERT_EQ(read(ready_r.get(), &mounted, 1), 1);
    if (!mounted) {
      Reap();
      GTEST_SKIP() << "user and mount namespaces are not available here";
    }
    watch_ = UniqueFd(inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    ASSERT_TRUE(watch_);
    const std::string in_child = "/proc/" + std::to_string(pid_) + "/root" + dir_;
    ASSERT_GE(inotify_add_watch(watch_.get(), in_child.c_str(), IN_ATTRIB), 0) << in_child;
  }
  void TearDown() override {
    Reap();
    TempDirTest::TearDown();
  }
  void Reap() {
    if (pid_ <= 0) return;
    (void)!write(go_w_.get(), "g", 1);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  pid_t pid_ = -1;
  UniqueFd go_w_, watch_;
};

TEST_F(HeldMountNamespaceTest, OutlivesItsLastProcessAndGoesOnceReleased) {
  HeldMountNamespace held = HeldMountNamespace::Of(pid_);
  if (!held) GTEST_SKIP() << "not held before Linux 6.10 (its release would not be background)";
  // The namespace's only process is gone; its exit would have unmounted the tmpfs before the
  // reap returned. Held, the tmpfs is still there.
  Reap();
  EXPECT_FALSE(Readable(watch_.get(), 0)) << "the namespace went with its last process";

  held.Release();
  EXPECT_FALSE(held);
  ASSERT_TRUE(Readable(watch_.get(), 10000)) << "the released namespace was never let go";
  EXPECT_TRUE(Unmounted(watch_.get()));
}

// Without the hold, the same exit unmounts the tmpfs before the reap returns: what the test
// above tells apart.
TEST_F(HeldMountNamespaceTest, WithoutItTheLastProcessTakesTheNamespace) {
  Reap();
  ASSERT_TRUE(Readable(watch_.get(), 0));
  EXPECT_TRUE(Unmounted(watch_.get()));
}

}  // namespace
}  // namespace gander::sandbox
