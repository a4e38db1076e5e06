// Command resolution: PATH lookup, shebang interpreters and install prefixes.
#include "launcher/command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "launcher/shims.h"
#include "tests/unit/temp_dir_test.h"

namespace gander::launcher {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class CommandTest : public unit::TempDirTest {
 protected:
  CommandTest() : TempDirTest("command-test") {}
  std::string Write(const std::string& rel, const std::string& text, mode_t mode) {
    std::string path = dir_ + "/" + rel;
    (void)!system(("mkdir -p $(dirname " + path + ")").c_str());
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
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

// Issue 18, break 8: a pyenv shim (a script that needs ~/.pyenv, private in the sandbox) is
// replaced by the program `pyenv which` names, whose prefix is granted; the shims are not.
// The manager here is a stand-in script answering `which NAME` as pyenv does.
TEST_F(CommandTest, VersionManagerShimsResolveToTheRealProgram) {
  std::string home = dir_ + "/home";
  std::string real = Write("home/.pyenv/versions/3.11.7/bin/python3.11", "", 0755);
  Write("home/.pyenv/libexec/pyenv",
        "#!/bin/sh\n[ \"$1\" = which ] && [ \"$2\" = python3 ] && [ -n \"$PYENV_ROOT\" ] || "
        "exit 1\necho \"$PYENV_ROOT/versions/3.11.7/bin/python3.11\"\n",
        0755);
  std::string shim = Write("home/.pyenv/shims/python3",
                           "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n", 0755);
  auto r = ResolveCommand({"python3", "-u", "server.py"}, home + "/.pyenv/shims:/usr/bin:/bin", "/",
                          home, {{"PATH", "/usr/bin:/bin"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exec_path, real);
  EXPECT_TRUE(Contains(r->readable, home + "/.pyenv/versions/3.11.7"));
  EXPECT_FALSE(Contains(r->readable, home + "/.pyenv/shims"));
  EXPECT_FALSE(Contains(r->path_dirs, home + "/.pyenv/shims"));
  EXPECT_TRUE(Contains(r->path_dirs, home + "/.pyenv/versions/3.11.7/bin"));
  // A shebang through env that finds the shim gets the real interpreter too.
  std::string script = Write("app/server", "#!/usr/bin/env python3\n", 0755);
  r = ResolveCommand({script}, home + "/.pyenv/shims:/usr/bin:/bin", "/", home, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(Contains(r->readable, home + "/.pyenv/versions/3.11.7"));
  (void)shim;
}

TEST_F(CommandTest, ShimManagersAreKnownByTheirLayout) {
  Write("h/.rbenv/libexec/rbenv", "#!/bin/sh\n", 0755);
  Write("h/.volta/bin/volta", "#!/bin/sh\n", 0755);
  std::string h = dir_ + "/h";
  auto rbenv = ShimManagerOf(h + "/.rbenv/shims/ruby", h);
  ASSERT_TRUE(rbenv.has_value());
  EXPECT_EQ(rbenv->env_root, (std::pair<std::string, std::string>{"RBENV_ROOT", h + "/.rbenv"}));
  ASSERT_TRUE(ShimManagerOf(h + "/.volta/bin/node", h).has_value());
  EXPECT_FALSE(ShimManagerOf(h + "/.volta/bin/volta", h).has_value());
  EXPECT_FALSE(ShimManagerOf("/usr/bin/python3", h).has_value());
  EXPECT_FALSE(ShimManagerOf(h + "/.pyenv/shims/python3", h).has_value());  // no pyenv there
}

TEST_F(CommandTest, LocalBinGrantsTheToolNotAllOfDotLocal) {
  std::string home = dir_ + "/home";
  std::string tool = Write("home/.local/bin/mcp-tool", "", 0755);
  Write("home/.local/lib/python3.11/site-packages/x.py", "", 0644);
  auto r = ResolveCommand({tool}, "", "/", home);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(Contains(r->readable, home + "/.local"));
  EXPECT_TRUE(Contains(r->readable, home + "/.local/lib"));
  EXPECT_TRUE(Contains(r->readable, tool));
}

}  // namespace
}  // namespace gander::launcher
