// Descriptors closed by a kernel worker (common/background_close.h): gone from the process at
// once, and closed for good soon after, however many there are.
#include "common/background_close.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <vector>

#include "common/fd_passing.h"

namespace gander {
namespace {

TEST(CloseInBackgroundTest, EveryDescriptorGoesAndIsClosedForGood) {
  std::vector<UniqueFd> readers, writers;
  std::vector<int> numbers;
  for (int i = 0; i < 3 * kMaxPassedFds + 1; ++i) {  // more than one message carries
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    readers.emplace_back(p[0]);
    writers.emplace_back(p[1]);
    numbers.push_back(p[1]);
  }
  writers.emplace_back();  // an empty one is skipped
  CloseInBackground(writers);
  for (const UniqueFd& w : writers) EXPECT_FALSE(w) << "left open in the caller's vector";
  for (int n : numbers) EXPECT_EQ(fcntl(n, F_GETFD), -1) << "fd " << n << " is still ours";
  // The write ends' files close (here, or from the kernel's worker): each read end sees EOF.
  for (const UniqueFd& r : readers) {
    pollfd p{r.get(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 10000), 1) << "a write end was never closed";  // a hang guard
    char byte;
    EXPECT_EQ(read(r.get(), &byte, 1), 0);
  }
}

}  // namespace
}  // namespace gander
