// rm -rf by descriptors (common/remove_tree.h): deep and read-only trees go, and no link's
// target.
#include "common/remove_tree.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/unique_fd.h"
#include "tests/unit/temp_dir_test.h"

namespace gander {
namespace {

class RemoveTreeTest : public unit::TempDirTest {
 protected:
  RemoveTreeTest() : TempDirTest("remove-tree") {}
};

TEST_F(RemoveTreeTest, TakesDeepAndReadOnlyTreesAndNoLinkTarget) {
  for (const char* d : {"/ws", "/ws/d", "/out"}) ASSERT_EQ(mkdir((dir_ + d).c_str(), 0755), 0);
  UniqueFd at(open((dir_ + "/ws/d").c_str(), O_RDONLY | O_DIRECTORY));
  for (int i = 0; i < 300; ++i) {  // deeper than RemoveTree holds fds for
    ASSERT_EQ(mkdirat(at.get(), "n", 0755), 0);
    at.Reset(openat(at.get(), "n", O_RDONLY | O_DIRECTORY));
  }
  ASSERT_EQ(mkdirat(at.get(), "ro", 0755), 0);
  ASSERT_EQ(close(openat(at.get(), "ro/f", O_WRONLY | O_CREAT, 0644)), 0);
  ASSERT_EQ(fchmodat(at.get(), "ro", 0500, 0), 0);
  at.Reset();
  ASSERT_EQ(symlink((dir_ + "/out").c_str(), (dir_ + "/ws/d/out-link").c_str()), 0);
  std::ofstream(dir_ + "/out/keep") << "kept\n";
  RemoveTree(dir_ + "/ws");
  struct stat st;
  EXPECT_NE(lstat((dir_ + "/ws").c_str(), &st), 0);
  EXPECT_EQ(stat((dir_ + "/out/keep").c_str(), &st), 0) << "a link's target was removed";
}

// A link given as the path goes itself; what it points to stays.
TEST_F(RemoveTreeTest, ALinkGivenGoesAndNotItsTarget) {
  ASSERT_EQ(mkdir((dir_ + "/target").c_str(), 0755), 0);
  std::ofstream(dir_ + "/target/keep") << "kept\n";
  ASSERT_EQ(symlink((dir_ + "/target").c_str(), (dir_ + "/link").c_str()), 0);
  RemoveTree(dir_ + "/link");
  struct stat st;
  EXPECT_NE(lstat((dir_ + "/link").c_str(), &st), 0);
  EXPECT_EQ(stat((dir_ + "/target/keep").c_str(), &st), 0);
}

}  // namespace
}  // namespace gander
