// The file tools' path checks: the lexical gate and the kernel's (openat2 RESOLVE_BENEATH).
#include "mcp/workspace_path.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/unique_fd.h"

namespace gander::mcp {
namespace {

TEST(CheckWorkspacePath, NormalisesRelativePaths) {
  EXPECT_EQ(*CheckWorkspacePath("a//b/./c/"), "a/b/c");
  EXPECT_EQ(*CheckWorkspacePath("."), ".");
  EXPECT_EQ(*CheckWorkspacePath("./"), ".");
  EXPECT_EQ(*CheckWorkspacePath("src/main.c"), "src/main.c");
  EXPECT_EQ(*CheckWorkspacePath("..hidden/x..y"), "..hidden/x..y");  // not a ".." component
}

TEST(CheckWorkspacePath, RefusesWhatLeadsOut) {
  for (const char* bad :
       {"", "/etc/passwd", "../x", "a/../../x", "a/..", "..", "~/.ssh/id_rsa", "/"}) {
    EXPECT_FALSE(CheckWorkspacePath(bad).ok()) << bad;
  }
  EXPECT_FALSE(CheckWorkspacePath(std::string("a\0b", 3)).ok());
  EXPECT_FALSE(CheckWorkspacePath(std::string(5000, 'a')).ok());
}

class OpenBeneathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gander-wsp-XXXXXX";
    root_ = mkdtemp(pattern);
    ASSERT_EQ(mkdir((root_ + "/ws").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((root_ + "/ws/sub").c_str(), 0700), 0);
    Write(root_ + "/outside.txt");
    Write(root_ + "/ws/sub/in.txt");
    ASSERT_EQ(symlink((root_ + "/outside.txt").c_str(), (root_ + "/ws/abs_link").c_str()), 0);
    ASSERT_EQ(symlink("../outside.txt", (root_ + "/ws/rel_link").c_str()), 0);
    ASSERT_EQ(symlink("/", (root_ + "/ws/root_dir").c_str()), 0);
    ws_.Reset(open((root_ + "/ws").c_str(), O_PATH | O_DIRECTORY));
  }
  void TearDown() override { std::system(("rm -rf " + root_).c_str()); }
  static void Write(const std::string& path) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  std::string root_;
  UniqueFd ws_;
};

TEST_F(OpenBeneathTest, OpensInsideTheWorkspace) {
  auto fd = OpenBeneath(ws_.get(), "sub/in.txt", O_RDONLY);
  ASSERT_TRUE(fd.ok()) << fd.error().Describe();
  close(*fd);
}

TEST_F(OpenBeneathTest, RefusesSymlinksThatLeadOut) {
  for (const char* link : {"abs_link", "rel_link", "root_dir/etc/passwd"}) {
    auto fd = OpenBeneath(ws_.get(), link, O_RDONLY);
    EXPECT_FALSE(fd.ok()) << link;
    if (fd.ok()) close(*fd);
  }
  // Creating through a link that leads out is refused too.
  auto fd = OpenBeneath(ws_.get(), "root_dir/tmp/gander-planted", O_WRONLY | O_CREAT, 0600);
  EXPECT_FALSE(fd.ok());
  if (fd.ok()) close(*fd);
}

}  // namespace
}  // namespace gander::mcp
