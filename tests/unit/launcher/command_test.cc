// Command resolution: PATH lookup, shebang interpreters and install prefixes.
#include "launcher/command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace gander::launcher {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class CommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gander-command-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { (void)!system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& rel, const std::string& text, mode_t mode) {
    std::string path = dir_ + "/" + rel;
    (void)!system(("mkdir -p $(dirname " + path + ")").c_str());
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST(InstallPrefix, RecognisesLayouts) {
  EXPECT_EQ(InstallPrefix("/home/u/.nvm/versions/node/v20/bin/node"),
            "/home/u/.nvm/versions/node/v20");
  EXPECT_EQ(InstallPrefix("/srv/app/node_modules/@scope/pkg/dist/index.js"),
            "/srv/app/node_modules");
  EXPECT_EQ(InstallPrefix("/opt/tool/tool"), "/opt/tool");
  EXPECT_EQ(InstallPrefix("/bin/true"), "/bin") << "never / itself";
}

TEST_F(CommandTest, FindsByPathAndReportsNotFoundOrNotExecutable) {
  Write("bin/tool", "#!/bin/sh\n", 0755);
  Write("bin/data", "x", 0644);
  auto found = FindExecutable("tool", "/nonexistent:" + dir_ + "/bin", "/");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, dir_ + "/bin/tool");
  EXPECT_EQ(FindExecutable("missing", dir_ + "/bin", "/").error().code, ENOENT);
  EXPECT_EQ(FindExecutable("data", dir_ + "/bin", "/").error().code, EACCES);
}

TEST_F(CommandTest, FollowsEnvShebangToTheInterpreter) {
  std::string interp = Write("runtime/bin/mylang", "#!/bin/sh\n", 0755);
  std::string script = Write("pkg/node_modules/srv/index.js", "#!/usr/bin/env mylang\n", 0755);
  auto r = ResolveCommand({script}, dir_ + "/runtime/bin:/usr/bin:/bin", "/", "/home/nobody");
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->exec_path, script);
  EXPECT_TRUE(Contains(r->readable, dir_ + "/pkg/node_modules"));
  EXPECT_TRUE(Contains(r->readable, dir_ + "/runtime"));
  EXPECT_TRUE(Contains(r->path_dirs, dir_ + "/runtime/bin"));
}

TEST_F(CommandTest, InterpreterScriptArgumentComesAlong) {
  std::string node = Write("node/bin/node", "", 0755);
  std::string script = Write("app/server.js", "", 0644);
  auto r = ResolveCommand({node, "--inspect=0", script}, "/usr/bin", "/", "/home/nobody");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(Contains(r->readable, dir_ + "/app"));
}

TEST_F(CommandTest, NeverGrantsTheHomeDirectoryAsAPrefix) {
  std::string tool = Write("home/bin/tool", "", 0755);
  auto r = ResolveCommand({tool}, "", "/", dir_ + "/home");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(Contains(r->readable, dir_ + "/home"));
  EXPECT_TRUE(Contains(r->readable, dir_ + "/home/bin"));
}

}  // namespace
}  // namespace gander::launcher
