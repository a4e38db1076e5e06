// The workspace's git and direnv files (issue 16, the attacker review's open finding): an
// extension must not leave a command that runs on the host, outside any sandbox, at the user's
// next `git status`, `git commit` or `cd` (core.fsmonitor in .git/config, a hook, .envrc, a
// .git made where there was none, a `.git` file pointed at a repository of its own), in every
// mode (namespaces and gVisor: refused by a read-only bind; --no-namespaces: undone at the
// end), as the current user and as uid 65534. Meanwhile a legitimate `git commit` inside the
// sandbox still works. The assertions are real `git` on the host after the run; the control
// runs the same planting unsandboxed and sees the planted command run.
#include <sys/stat.h>
#include <unistd.h>

#include "escape_fixture.h"

namespace {

using namespace gander::escape_suite;  // NOLINT(google-build-using-namespace)

using Mode = SandboxMode;

const char* kGit = "git -c user.email=t@example.org -c user.name=t -c init.defaultBranch=main";

class WorkspaceGitTest : public SandboxTest, public ::testing::TestWithParam<ModeParam> {
 protected:
  void SetUp() override {
    auto [who, mode] = GetParam();
    if (std::string why = PrepareIn(who, mode); !why.empty()) GTEST_SKIP() << why;
    if (system("command -v git >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
    mode_ = mode;
    flags_ = FlagsForMode(mode);
    marker_ = w().data / "planted-command-ran";
    audit_ = w().data / "audit.log";
  }

  // A shell command as the run's user on the host, in `dir`; its result.
  RunResult Host(const std::string& script, const fs::path& dir) {
    Argv argv = AsUser(who_);
    for (const char* a : {"/bin/sh", "-c"}) argv.push_back(a);
    argv.push_back(script);
    return RunCommand(argv, Opts(dir));
  }

  // A workspace `name` under data/ with a repository of one commit and an .envrc, owned by
  // the run's user.
  fs::path Repository(const std::string& name) {
    fs::path ws = w().data / name;
    fs::create_directories(ws);
    WriteFile(ws / ".envrc", "export PROJECT=1\n", 0644);
    WriteFile(ws / "README", "readme\n", 0644);
    if (who_ == Who::kNobody) ChownTree(ws, kNobodyId, kNobodyId);
    RunResult r = Host(std::string(kGit) + " init -q . && " + kGit + " add README && " + kGit +
                           " commit -q -m first",
                       ws);
    EXPECT_EQ(r.status, 0) << r.Describe();
    return ws;
  }

  // Plants the command in the repository's config (fsmonitor, pager), a pre-commit hook and
  // .envrc; then a legitimate commit. Says on stderr what it could write.
  std::string PlantAndCommit() const {
    const std::string cmd = "touch " + marker_.string();
    return "git config core.fsmonitor '" + cmd + "' && echo 'WROTE config' >&2;" +
           "(printf '#!/bin/sh\\n" + cmd + "\\n' > .git/hooks/pre-commit && " +
           "chmod +x .git/hooks/pre-commit) 2>/dev/null && echo 'WROTE hook' >&2;" + "(echo '" +
           cmd + "' >> .envrc) 2>/dev/null && echo 'WROTE envrc' >&2;" +
           "echo change > work.txt && " + kGit + " add work.txt && " + kGit +
           " -c core.fsmonitor=false -c core.hooksPath=/nonexistent commit -q -m in-sandbox" +
           " && echo COMMITTED >&2; exit 0";
  }

  RunResult Sandboxed(const std::string& script, const fs::path& ws, const fs::path& audit) {
    Argv flags = flags_;
    flags.push_back("--audit-log");
    flags.push_back(audit.string());
    fs::remove(audit);
    return Gander(flags, {"/bin/sh", "-c", script}, ws, -1, false, true);
  }

  // The user's next git commands on the host: does the planted command run?
  bool PlantedCommandRuns(const fs::path& ws) {
    fs::remove(marker_);
    Host(std::string(kGit) + " status >/dev/null 2>&1; " + kGit +
             " commit -q --allow-empty -m on-host >/dev/null 2>&1; true",
         ws);
    return fs::exists(marker_);
  }

  // The user's `git log` in a terminal (its pager): does the planted command run?
  bool PagerRuns(const fs::path& ws) {
    fs::remove(marker_);
    Host("script -qc 'git log' /dev/null >/dev/null 2>&1 </dev/null; true", ws);
    return fs::exists(marker_);
  }

  // The user follows `git status`'s advice, `git rebase --continue`: does the command run?
  bool ContinueRuns(const fs::path& ws) {
    fs::remove(marker_);
    Host(std::string(kGit) + " rebase --continue >/dev/null 2>&1 </dev/null; true", ws);
    return fs::exists(marker_);
  }

  // Each entry undone is a refused file write in the audit log.
  static size_t GuardEvents(const fs::path& audit) {
    std::string log = ReadFileOr(audit, "");
    size_t n = 0;
    for (size_t at = log.find("\"workspace_guard\""); at != std::string::npos;
         at = log.find("\"workspace_guard\"", at + 1)) {
      ++n;
    }
    return n;
  }

  // Runs `script` sandboxed in `ws`: the run ends well, `file` is as it was, and the user's
  // next git commands on the host run nothing planted.
  RunResult ExpectHarmless(const std::string& script, const fs::path& ws, const fs::path& file) {
    const std::string was = ReadFileOr(file, "<absent>");
    RunResult r = Sandboxed(script, ws, audit_);
    EXPECT_EQ(r.status, 0) << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
    EXPECT_EQ(ReadFileOr(file, "<absent>"), was) << file << "\n" << Context(r);
    EXPECT_FALSE(PlantedCommandRuns(ws)) << Context(r);
    return r;
  }

  // Without namespaces the sandbox wrote (`wrote` on its stderr) and gander undid `undone`
  // entries; with a mount view the write was refused and nothing needed undoing.
  void ExpectUndoneOrRefused(const RunResult& r, const fs::path& audit, const std::string& wrote,
                             size_t undone) {
    const bool written = r.err.find(wrote) != std::string::npos;
    EXPECT_EQ(written, mode_ == Mode::kNoNamespaces) << wrote << "\n" << Context(r);
    EXPECT_EQ(GuardEvents(audit), mode_ == Mode::kNoNamespaces ? undone : 0u)
        << ReadFileOr(audit, "") << Context(r);
  }

  Mode mode_ = Mode::kNamespaces;
  Argv flags_;
  fs::path marker_;
  fs::path audit_;
};

TEST_P(WorkspaceGitTest, PlantedConfigHookAndEnvrcDoNotRunOnTheHost) {
  fs::path ws = Repository("repo");
  RunResult r = ExpectHarmless(PlantAndCommit(), ws, ws / ".git/config");
  EXPECT_NE(r.err.find("COMMITTED"), std::string::npos) << "git commit in the sandbox\n"
                                                        << Context(r);
  EXPECT_FALSE(fs::exists(ws / ".git/hooks/pre-commit")) << Context(r);
  EXPECT_EQ(ReadFileOr(ws / ".envrc", ""), "export PROJECT=1\n") << Context(r);
  RunResult log = Host(std::string(kGit) + " log --format=%s", ws);
  EXPECT_NE(log.out.find("in-sandbox"), std::string::npos) << log.Describe() << Context(r);
  ExpectUndoneOrRefused(r, audit_, "WROTE", 3);
  if (mode_ == Mode::kNoNamespaces) {
    // Written, then undone: said on stderr, counted, and what was planted kept aside.
    EXPECT_NE(r.err.find(".git/config, which git or direnv would run commands from"),
              std::string::npos)
        << Context(r);
    EXPECT_NE(r.err.find("the original is back"), std::string::npos) << Context(r);
    bool kept = false;
    for (const auto& e : fs::directory_iterator(ws / ".git/hooks")) {
      kept |= e.path().filename().string().rfind("pre-commit.gander-quarantine-", 0) == 0;
    }
    EXPECT_TRUE(kept) << Context(r);
  }
  // Control: the same planting unsandboxed, and the next `git status` runs it.
  fs::path control = Repository("control");
  Host(PlantAndCommit(), control);
  EXPECT_TRUE(PlantedCommandRuns(control)) << "unsandboxed control";
}

// A workspace with no repository: the extension's `git init` and commits stay, what in its
// .git runs commands does not.
TEST_P(WorkspaceGitTest, ARepositoryMadeInTheSandboxIsDisarmed) {
  fs::path ws = w().data / "fresh";
  fs::create_directories(ws);
  if (who_ == Who::kNobody) ChownTree(ws, kNobodyId, kNobodyId);
  const std::string script = std::string(kGit) + " init -q . && " + PlantAndCommit();
  RunResult r = ExpectHarmless(script, ws, ws / ".git/config");  // absent before and after
  EXPECT_NE(r.err.find("COMMITTED"), std::string::npos) << Context(r);
  EXPECT_FALSE(fs::exists(ws / ".git/hooks")) << Context(r);
  EXPECT_FALSE(fs::exists(ws / ".envrc")) << Context(r);
  RunResult log = Host(std::string(kGit) + " log --format=%s", ws);
  EXPECT_NE(log.out.find("in-sandbox"), std::string::npos) << log.Describe() << Context(r);
  EXPECT_NE(r.err.find("the extension created " + (ws / ".git/config").string()), std::string::npos)
      << Context(r);
  EXPECT_GE(GuardEvents(audit_), 3u) << Context(r);
  fs::path control = w().data / "control-fresh";
  fs::create_directories(control);
  if (who_ == Who::kNobody) ChownTree(control, kNobodyId, kNobodyId);
  Host(script, control);
  EXPECT_TRUE(PlantedCommandRuns(control)) << "unsandboxed control";
}

// `.git` is a file (a linked worktree, a submodule, --separate-git-dir) naming a repository
// outside the workspace; the extension points it at one of its own with a planted config.
TEST_P(WorkspaceGitTest, ARewrittenGitFileIsPutBack) {
  fs::path ws = w().data / "linked";
  fs::create_directories(ws);
  WriteFile(ws / "README", "readme\n", 0644);
  if (who_ == Who::kNobody) ChownTree(w().data, kNobodyId, kNobodyId);
  const std::string real = (w().data / "real.git").string();
  RunResult init = Host(std::string(kGit) + " init -q --separate-git-dir=" + real + " .", ws);
  ASSERT_EQ(init.status, 0) << init.Describe();
  const std::string pointer = ReadFileOr(ws / ".git", "<absent>");
  ASSERT_EQ(pointer.rfind("gitdir: ", 0), 0u) << pointer;
  const std::string script = "mkdir evil && " + std::string(kGit) + " -C evil init -q && " + kGit +
                             " -C evil config core.fsmonitor 'touch " + marker_.string() +
                             "' && (echo \"gitdir: $PWD/evil/.git\" > .git) 2>/dev/null && "
                             "echo 'WROTE pointer' >&2; exit 0";
  RunResult r = ExpectHarmless(script, ws, ws / ".git");
  // The pointer put back, and the repository it was pointed at (inside the workspace, made
  // during the run) moved aside.
  ExpectUndoneOrRefused(r, audit_, "WROTE pointer", 2);
  if (mode_ == Mode::kNoNamespaces) {
    EXPECT_FALSE(fs::exists(ws / "evil/.git")) << Context(r);
  }
  fs::path control = w().data / "control-linked";
  fs::create_directories(control);
  WriteFile(control / ".git", pointer, 0644);
  if (who_ == Who::kNobody) ChownTree(control, kNobodyId, kNobodyId);
  Host(script, control);
  EXPECT_TRUE(PlantedCommandRuns(control)) << "unsandboxed control";
}

// Behind the read-only binds: the repository moved aside, copied back and its copy's config
// written. With a mount view `.git` is a mount point (the move fails); without, the config is
// put back at the end.
TEST_P(WorkspaceGitTest, ARepositoryMovedAsideAndRebuiltIsUndone) {
  fs::path ws = Repository("moved");
  const std::string script =
      "mv .git .git-old 2>/dev/null && echo 'WROTE moved' >&2 && "
      "cp -a .git-old .git && git config core.fsmonitor 'touch " +
      marker_.string() + "'; exit 0";
  RunResult r = ExpectHarmless(script, ws, ws / ".git/config");
  ExpectUndoneOrRefused(r, audit_, "WROTE moved", 1);
  fs::path control = Repository("control-moved");
  Host(script, control);
  EXPECT_TRUE(PlantedCommandRuns(control)) << "unsandboxed control";
}

// The user's repository keeps its hooks in the work tree (core.hooksPath, as husky sets it):
// the extension rewrites one of them.
TEST_P(WorkspaceGitTest, AHookInTheConfiguredHooksPathDoesNotRunOnTheHost) {
  auto with_hooks_path = [&](const std::string& name) {
    fs::path ws = Repository(name);
    fs::create_directories(ws / ".githooks");
    WriteFile(ws / ".githooks/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
    if (who_ == Who::kNobody) ChownTree(ws, kNobodyId, kNobodyId);
    EXPECT_EQ(Host("git config core.hooksPath .githooks", ws).status, 0);
    return ws;
  };
  fs::path ws = with_hooks_path("hooks-path");
  const std::string script = "(printf '#!/bin/sh\\ntouch " + marker_.string() +
                             "\\n' > .githooks/pre-commit) 2>/dev/null && echo 'WROTE hook' >&2;"
                             " exit 0";
  RunResult r = ExpectHarmless(script, ws, ws / ".githooks/pre-commit");
  ExpectUndoneOrRefused(r, audit_, "WROTE hook", 1);
  fs::path control = with_hooks_path("control-hooks-path");
  Host(script, control);
  EXPECT_TRUE(PlantedCommandRuns(control)) << "unsandboxed control";
}

// The workspace top turned into a bare repository: `.git` made invalid (its HEAD removed), a
// HEAD, objects/ and refs/ at the top and a `config` there whose pager runs at the user's next
// `git log` (a terminal's). The top's HEAD is moved aside; .git's HEAD is put back.
TEST_P(WorkspaceGitTest, TheWorkspaceTopMadeABareRepositoryIsDisarmed) {
  fs::path ws = Repository("bare-top");
  const std::string script =
      "cp -r .git/objects .git/refs . && echo 'ref: refs/heads/main' > HEAD && printf "
      "'[core]\\n\\tpager = \"touch " +
      marker_.string() + "; cat\"\\n' > config && rm -f .git/HEAD; exit 0";
  RunResult r = ExpectHarmless(script, ws, ws / ".git/HEAD");
  EXPECT_FALSE(PagerRuns(ws)) << Context(r);
  EXPECT_FALSE(fs::exists(ws / "HEAD")) << Context(r);
  EXPECT_TRUE(fs::exists(ws / "config")) << "a top-level config stays the extension's";
  EXPECT_NE(r.err.find((ws / "HEAD").string()), std::string::npos) << Context(r);
  // No repository at all: the same top.
  fs::path plain = w().data / "plain";
  fs::create_directories(plain / "src");
  if (who_ == Who::kNobody) ChownTree(plain, kNobodyId, kNobodyId);
  const std::string bare =
      "mkdir -p objects refs/heads && echo 'ref: refs/heads/main' > HEAD "
      "&& printf '[core]\\n\\tpager = \"touch " +
      marker_.string() + "; cat\"\\n' > config; exit 0";
  RunResult p = ExpectHarmless(bare, plain, plain / "HEAD");
  EXPECT_FALSE(PagerRuns(plain)) << Context(p);
  fs::path control = Repository("control-bare-top");
  Host(script, control);
  EXPECT_TRUE(PagerRuns(control)) << "unsandboxed control";
}

// A rebase state planted with an `exec` line: the host's `git status` says to continue it,
// and `git rebase --continue` runs the line. It is moved aside; one without exec stays.
TEST_P(WorkspaceGitTest, APlantedRebaseWithAnExecLineIsMovedAside) {
  auto plant = [&](const std::string& todo) {
    return "d=.git/rebase-merge; mkdir -p $d && git rev-parse HEAD > $d/onto && "
           "git rev-parse HEAD > $d/orig-head && echo refs/heads/main > $d/head-name && "
           ": > $d/interactive && : > $d/done && echo 1 > $d/msgnum && echo 2 > $d/end && "
           "printf '" +
           todo + "' > $d/git-rebase-todo; exit 0";
  };
  fs::path ws = Repository("rebase");
  const std::string exec = plant("  exec touch " + marker_.string() + "\\n");
  RunResult r = ExpectHarmless(exec, ws, ws / ".git/rebase-merge/git-rebase-todo");
  EXPECT_FALSE(ContinueRuns(ws)) << Context(r);
  EXPECT_FALSE(fs::exists(ws / ".git/rebase-merge")) << Context(r);
  EXPECT_GE(GuardEvents(audit_), 1u) << Context(r);
  fs::path legit = Repository("rebase-legit");
  RunResult l = Sandboxed(plant("break\\n"), legit, audit_);
  EXPECT_EQ(l.status, 0) << Context(l);
  EXPECT_TRUE(fs::exists(legit / ".git/rebase-merge/git-rebase-todo")) << Context(l);
  fs::path control = Repository("control-rebase");
  Host(exec, control);
  EXPECT_TRUE(ContinueRuns(control)) << "unsandboxed control";
}

// A submodule's git directory on the way (.git/modules) replaced by a symlink to a copy with a
// planted core.fsmonitor: the host's `git status` recurses into the submodule.
TEST_P(WorkspaceGitTest, AModulesDirectoryReplacedByASymlinkIsRebuilt) {
  if (who_ == Who::kNobody) ChownTree(w().data, kNobodyId, kNobodyId);
  const fs::path src = w().data / "subsrc";
  fs::create_directories(src);
  WriteFile(src / "file", "sub\n", 0644);
  if (who_ == Who::kNobody) ChownTree(src, kNobodyId, kNobodyId);
  ASSERT_EQ(Host(std::string(kGit) + " init -q . && " + kGit + " add file && " + kGit +
                     " commit -q -m sub",
                 src)
                .status,
            0);
  auto with_submodule = [&](const std::string& name) {
    fs::path ws = Repository(name);
    RunResult add = Host(std::string(kGit) + " -c protocol.file.allow=always submodule add -q " +
                             src.string() + " sub && " + kGit + " commit -q -m sub",
                         ws);
    EXPECT_EQ(add.status, 0) << add.Describe();
    return ws;
  };
  fs::path ws = with_submodule("modules");
  const std::string script =
      "mv .git/modules .git/modules-old && mkdir -p .evil && cp -a .git/modules-old/sub "
      ".evil/sub && sed -i 's#worktree = ../../../sub#worktree = ../../sub#' .evil/sub/config "
      "&& printf '[core]\\n\\tfsmonitor = \"touch " +
      marker_.string() + "; false\"\\n' >> .evil/sub/config && ln -s ../.evil .git/modules; exit 0";
  RunResult r = ExpectHarmless(script, ws, ws / ".git/modules/sub/config");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(ws / ".git/modules"))) << Context(r);
  fs::path control = with_submodule("control-modules");
  Host(script, control);
  EXPECT_TRUE(PlantedCommandRuns(control)) << "unsandboxed control";
}

INSTANTIATE_TEST_SUITE_P(Workspace, WorkspaceGitTest, EveryUserAndMode(), ModeParamName);

}  // namespace
