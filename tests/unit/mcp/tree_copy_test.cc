// Copies in and out of workspaces never follow a link the sandbox could have planted.
#include "mcp/tree_copy.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/remove_tree.h"
#include "common/unique_fd.h"
#include "mcp/sandbox_pool.h"

namespace gander::mcp {
namespace {

class TreeCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gander-copy-XXXXXX";
    root_ = mkdtemp(pattern);
    for (const char* d : {"/ws", "/ws/src", "/out"}) mkdir((root_ + d).c_str(), 0755);
    std::ofstream(root_ + "/secret") << "host secret\n";
    std::ofstream(root_ + "/ws/src/main.c") << "int main;\n";
    chmod((root_ + "/ws/src/main.c").c_str(), 0750);
    symlink((root_ + "/secret").c_str(), (root_ + "/ws/src/leak").c_str());
    symlink("/", (root_ + "/ws/rootlink").c_str());
  }
  void TearDown() override { RemoveTree(root_); }
  int Dir(const std::string& d) { return open((root_ + d).c_str(), O_RDONLY | O_DIRECTORY); }
  std::string root_;
};

TEST_F(TreeCopyTest, ExportSkipsSymlinksAndKeepsModes) {
  UniqueFd ws(Dir("/ws")), out(Dir("/out"));
  CopyStats stats;
  ASSERT_TRUE(CopyTree(ws.get(), "src", out.get(), "src", {.keep_symlinks = false}, stats).ok());
  EXPECT_EQ(stats.files, 1u);
  EXPECT_EQ(stats.skipped, 1u);
  struct stat st;
  ASSERT_EQ(stat((root_ + "/out/src/main.c").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);
  EXPECT_NE(lstat((root_ + "/out/src/leak").c_str(), &st), 0);  // not copied, not followed
}

TEST_F(TreeCopyTest, ForkCopiesSymlinksAsLinksNotTheirTargets) {
  UniqueFd ws(Dir("/ws")), out(Dir("/out"));
  CopyStats stats;
  ASSERT_TRUE(CopyTree(ws.get(), "src", out.get(), "copy", {}, stats).ok());
  struct stat st;
  ASSERT_EQ(lstat((root_ + "/out/copy/leak").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(stats.bytes, 10u);  // main.c only: the secret's bytes were never read
}

TEST_F(TreeCopyTest, KeyStoresInsideADirectoryCopiedInAreLeftOut) {
  // A home copied in (Goose started from ~, files: ["."]) keeps its notes, never its keys.
  for (const char* d :
       {"/home", "/home/.ssh", "/home/.aws", "/home/.config", "/home/.config/goose", "/home/.local",
        "/home/.local/state", "/home/.local/state/gander", "/home/proj"}) {
    mkdir((root_ + d).c_str(), 0755);
  }
  for (const char* f : {"/home/.ssh/id_rsa", "/home/.aws/credentials", "/home/.netrc",
                        "/home/.config/goose/config.yaml", "/home/.local/state/gander/x.jsonl",
                        "/home/proj/notes.txt"}) {
    std::ofstream(root_ + f) << "x\n";
  }
  UniqueFd out(Dir("/out"));
  CopyStats stats;
  ASSERT_TRUE(CopyTree(AT_FDCWD, root_ + "/home", out.get(), "home",
                       {.follow_top = true, .skip = IsSecretName}, stats)
                  .ok());
  struct stat st;
  EXPECT_EQ(stat((root_ + "/out/home/proj/notes.txt").c_str(), &st), 0);
  for (const char* gone : {"/out/home/.ssh", "/out/home/.aws", "/out/home/.netrc",
                           "/out/home/.config/goose", "/out/home/.local/state/gander"}) {
    EXPECT_NE(lstat((root_ + gone).c_str(), &st), 0) << gone;
  }
  EXPECT_EQ(stats.skipped, 5u);
}

TEST_F(TreeCopyTest, ATopLevelSymlinkIsNotFollowedUnlessAsked) {
  UniqueFd ws(Dir("/ws")), out(Dir("/out"));
  CopyStats stats;
  ASSERT_TRUE(CopyTree(ws.get(), "rootlink", out.get(), "r", {.keep_symlinks = false}, stats).ok());
  struct stat st;
  EXPECT_NE(lstat((root_ + "/out/r").c_str(), &st), 0);
}

TEST_F(TreeCopyTest, ASparseFileStaysSparseAndTheBoundIsOnItsBytes) {
  // 1 GiB long, 8 KiB of data at each end: a copy that writes the hole would hold 1 GiB.
  {
    UniqueFd f(open((root_ + "/ws/sparse").c_str(), O_WRONLY | O_CREAT, 0644));
    std::string data(8192, 'd');
    ASSERT_EQ(pwrite(f.get(), data.data(), data.size(), 0), 8192);
    ASSERT_EQ(pwrite(f.get(), data.data(), data.size(), (1ll << 30) - 8192), 8192);
  }
  std::ofstream(root_ + "/ws/big") << std::string(300000, 'b');
  UniqueFd ws(Dir("/ws")), out(Dir("/out"));
  CopyStats stats;
  ASSERT_TRUE(CopyTree(ws.get(), ".", out.get(), ".",
                       {.keep_symlinks = false, .max_file_bytes = 200000}, stats)
                  .ok());
  struct stat st;
  ASSERT_EQ(stat((root_ + "/out/sparse").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1ll << 30);
  EXPECT_LT(st.st_blocks * 512, 1ll << 20) << "the hole was written out";
  std::ifstream in(root_ + "/out/sparse");
  in.seekg((1ll << 30) - 1);
  EXPECT_EQ(in.get(), 'd');
  EXPECT_NE(stat((root_ + "/out/big").c_str(), &st), 0) << "past the per-file bound";
  EXPECT_EQ(stats.too_large, 1u);
}

}  // namespace
}  // namespace gander::mcp
