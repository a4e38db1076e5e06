// Persistence through the home (issue 16, item 7): with the workspace = $HOME (Goose starts
// extensions from ~), an extension must not change what runs at the user's next shell, login,
// desktop session or Goose start, nor plant a gander policy, nor reach the collector's socket,
// in every mode (namespaces, --no-namespaces, --backend gvisor), as the current user and as
// uid 65534. One sandboxed shell tries every write; the assertions are on the host's files.
// The control: the same script, unsandboxed as the same user, writes every one of them.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "escape_fixture.h"

namespace {

using namespace gander::escape_suite;  // NOLINT(google-build-using-namespace)

using Mode = SandboxMode;

// Each path the extension must not create or change, relative to $HOME. The directories on the
// way exist (planted), so a refusal is the sandbox's, not a missing parent's.
const std::vector<std::string> kTargets = {".bashrc",
                                           ".bash_profile",
                                           ".bash_login",
                                           ".profile",
                                           ".zshrc",
                                           ".zshenv",
                                           ".zprofile",
                                           ".zlogin",
                                           ".config/fish/config.fish",
                                           ".config/autostart/evil.desktop",
                                           ".config/systemd/user/evil.service",
                                           ".local/bin/ls",
                                           ".ssh/authorized_keys",
                                           ".config/goose/config.yaml",
                                           ".config/gander/policies/evil.yaml",
                                           ".local/share/gander/packages/other/evil.js",
                                           ".gitconfig",
                                           ".config/git/config",
                                           "bin/ls",
                                           ".cargo/bin/ls",
                                           ".bashrc.d/evil.sh",
                                           ".local/lib/python3.11/site-packages/evil.pth",
                                           ".local/share/applications/firefox.desktop"};

class HomePersistenceTest : public SandboxTest, public ::testing::TestWithParam<ModeParam> {
 protected:
  void SetUp() override {
    auto [who, mode] = GetParam();
    if (std::string why = PrepareIn(who, mode); !why.empty()) GTEST_SKIP() << why;
    flags_ = FlagsForMode(mode);
  }

  // Plants the directories the targets live in, and an existing ~/.bashrc, under `home`.
  void Plant(const fs::path& home) {
    for (const auto& t : kTargets) fs::create_directories((home / t).parent_path());
    WriteFile(home / ".bashrc", "# the user's own\n", 0644);
    fs::create_directories(home / "proj");  // an existing directory: writable with the opt-in
    if (who_ == Who::kNobody) ChownTree(home, kNobodyId, kNobodyId);
  }

  // A shell that appends to each target and says on stderr which ones it could write.
  Argv Script(const fs::path& home) const {
    std::string s;
    for (const auto& t : kTargets) {
      std::string f = (home / t).string();
      s += "(echo 'touch /tmp/pwned' >> '" + f + "') 2>/dev/null && echo 'WROTE " + f + "' >&2;";
    }
    s += "(echo x > '" + (home / "proj/written-in-sandbox").string() +
         "') 2>/dev/null && echo 'WROTE home' >&2; exit 0";
    return {"/bin/sh", "-c", s};
  }

  void ExpectNothingChanged(const fs::path& home, const RunResult& r) {
    EXPECT_EQ(r.status, 0) << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
    for (const auto& t : kTargets) {
      std::string content = ReadFileOr(home / t, "<absent>");
      EXPECT_EQ(content, t == ".bashrc" ? "# the user's own\n" : "<absent>") << t << "\n"
                                                                             << Context(r);
    }
  }

  Argv flags_;
};

TEST_P(HomePersistenceTest, AHomeWorkspaceIsReadOnlyAndSaysSo) {
  const fs::path& home = w().home;
  Plant(home);
  RunResult r = Gander(flags_, Script(home), home);
  ExpectNothingChanged(home, r);
  EXPECT_FALSE(fs::exists(home / "proj/written-in-sandbox")) << Context(r);
  EXPECT_NE(r.err.find("is your home: shown read-only"), std::string::npos) << Context(r);
  EXPECT_NE(r.err.find("--allow-home-write"), std::string::npos) << Context(r);
  // The home is still readable: the extension sees its working directory.
  RunResult read = Gander(flags_, ProbeCommand({"read", "{HOME}/plain"}), home);
  EXPECT_EQ(read.status, 0) << Context(read);
  // Control: unsandboxed, the same user writes every target of a copy of that home.
  fs::path control = w().data / "control-home";
  Plant(control);
  RunOptions o = Opts(w().ws);
  Argv direct = AsUser(who_);
  for (const auto& a : Script(control)) direct.push_back(a);
  RunResult c = RunCommand(direct, o);
  for (const auto& t : kTargets) {
    EXPECT_NE(c.err.find("WROTE " + (control / t).string() + "\n"), std::string::npos)
        << "unsandboxed control could not write " << t << "\n"
        << c.Describe();
  }
}

TEST_P(HomePersistenceTest, WithTheOptInTheHomeIsWritableButNotWhatRuns) {
  const fs::path& home = w().home;
  Plant(home);
  Argv flags = flags_;
  flags.push_back("--allow-home-write");
  RunResult r = Gander(flags, Script(home), home);
  ExpectNothingChanged(home, r);
  EXPECT_EQ(ReadFileOr(home / "proj/written-in-sandbox", "<absent>"), "x\n") << Context(r);
  // New entries at the top of ~ cannot be created (a missing ~/.profile among them).
  EXPECT_FALSE(fs::exists(home / ".profile")) << Context(r);
  EXPECT_NE(r.err.find("stay read-only"), std::string::npos) << Context(r);
}

// The collector's socket, in the state directory (no XDG_RUNTIME_DIR) and in the runtime
// directory: a listener the test plants at each is unreachable from a $HOME workspace.
TEST_P(HomePersistenceTest, TheCollectorSocketIsUnreachable) {
  const fs::path& home = w().home;
  fs::path runtime = w().data / "run";
  std::vector<fs::path> sockets = {home / ".local/state/gander/collector.sock",
                                   runtime / "gander/collector.sock"};
  std::vector<int> fds;
  for (const auto& path : sockets) {
    fs::create_directories(path.parent_path());
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(path.string().size(), sizeof addr.sun_path);
    strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
    ASSERT_EQ(listen(fd, 8), 0);
    chmod(path.c_str(), 0777);
    fds.push_back(fd);
  }
  if (who_ == Who::kNobody) {
    ChownTree(home, kNobodyId, kNobodyId);
    ChownTree(runtime, kNobodyId, kNobodyId);
  }
  for (const auto& path : sockets) {
    for (bool with_runtime : {false, true}) {
      RunOptions o = Opts(home);
      if (with_runtime) o.env.push_back("XDG_RUNTIME_DIR=" + runtime.string());
      Argv argv = GanderArgv(flags_, ProbeCommand({"unix", path.string()}), home);
      RunResult r = RunCommand(argv, o);
      EXPECT_EQ(r.status, 1) << "connect to " << path << " did not fail (0 = it SUCCEEDED)\n"
                             << Quote(argv) << "\n"
                             << r.Describe();
    }
    RunResult c = Direct({}, {"unix", path.string()});
    EXPECT_EQ(c.status, 0) << "unsandboxed control\n" << c.Describe();
  }
  for (int fd : fds) close(fd);
}

INSTANTIATE_TEST_SUITE_P(Home, HomePersistenceTest, EveryUserAndMode(), ModeParamName);

}  // namespace
