// The workspace's git and direnv entries: what is recorded, and what the undo puts back, on a
// scratch directory (no privilege, no sandbox: the integration suite plants through one).
#include "sandbox/workspace_guard.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace gander::sandbox {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& p, const std::string& text, mode_t mode = 0644) {
  std::ofstream(p) << text;
  chmod(p.c_str(), mode);
}

std::string Read(const fs::path& p) {
  std::ifstream f(p);
  return f ? std::string(std::istreambuf_iterator<char>(f), {}) : "<absent>";
}

class WorkspaceGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gander-guard-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    ws_ = tmpl;
    for (const char* dir : {".git/hooks", ".git/objects"}) fs::create_directories(ws_ / dir);
    Write(ws_ / ".git/config", "[core]\n\tbare = false\n");
    Write(ws_ / ".git/hooks/pre-commit", "#!/bin/sh\necho users-own\n", 0755);
    Write(ws_ / ".envrc", "export A=1\n");
  }
  void TearDown() override { fs::remove_all(ws_); }

  std::vector<std::string> Quarantined(const fs::path& dir, const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename();
      if (name.rfind(prefix + ".gander-quarantine-", 0) == 0) out.push_back(name);
    }
    return out;
  }

  fs::path ws_;
};

TEST_F(WorkspaceGuard, NothingChangedNothingUndone) {
  auto before = TakeWorkspaceSnapshot(ws_);
  Write(ws_ / ".git/objects/ab", "an object");  // git's own writes are not entries
  EXPECT_TRUE(UndoWorkspaceChanges(before, "T").empty());
}

TEST_F(WorkspaceGuard, AChangedConfigAndHookAreRestoredAndTheirChangesKeptAside) {
  auto before = TakeWorkspaceSnapshot(ws_);
  Write(ws_ / ".git/config", "[core]\n\tfsmonitor = touch /tmp/x\n");
  Write(ws_ / ".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/x\n", 0700);
  Write(ws_ / ".git/hooks/post-checkout", "#!/bin/sh\ntouch /tmp/x\n", 0755);
  fs::remove(ws_ / ".envrc");
  auto undone = UndoWorkspaceChanges(before, "T");
  ASSERT_EQ(undone.size(), 4u);
  for (const auto& u : undone) EXPECT_TRUE(u.restored) << u.path << ": " << u.error;
  EXPECT_EQ(Read(ws_ / ".git/config"), "[core]\n\tbare = false\n");
  EXPECT_EQ(Read(ws_ / ".git/hooks/pre-commit"), "#!/bin/sh\necho users-own\n");
  struct stat st;
  ASSERT_EQ(stat((ws_ / ".git/hooks/pre-commit").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_FALSE(fs::exists(ws_ / ".git/hooks/post-checkout"));
  EXPECT_EQ(Read(ws_ / ".envrc"), "export A=1\n");
  EXPECT_EQ(Read(ws_ / ".git/config.gander-quarantine-T"), "[core]\n\tfsmonitor = touch /tmp/x\n");
  EXPECT_EQ(Quarantined(ws_ / ".git/hooks", "post-checkout").size(), 1u);
  // A second check (the run's end after a restart) finds nothing more: quarantined names are
  // never run and never undone again.
  EXPECT_TRUE(UndoWorkspaceChanges(before, "U").empty());
}

TEST_F(WorkspaceGuard, AHooksDirectoryReplacedByASymlinkIsRebuiltWithoutFollowingIt) {
  auto before = TakeWorkspaceSnapshot(ws_);
  fs::path elsewhere = ws_ / "elsewhere";
  fs::create_directories(elsewhere);
  fs::remove_all(ws_ / ".git/hooks");
  fs::create_directory_symlink(elsewhere, ws_ / ".git/hooks");
  auto undone = UndoWorkspaceChanges(before, "T");
  EXPECT_FALSE(undone.empty());
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(ws_ / ".git/hooks")));
  EXPECT_EQ(Read(ws_ / ".git/hooks/pre-commit"), "#!/bin/sh\necho users-own\n");
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing written through the planted link";
}

TEST_F(WorkspaceGuard, ARepositoryMadeWhereThereWasNoneKeepsItsObjectsNotItsConfig) {
  fs::remove_all(ws_ / ".git");
  auto before = TakeWorkspaceSnapshot(ws_);
  fs::create_directories(ws_ / ".git/hooks");
  fs::create_directories(ws_ / ".git/objects");
  Write(ws_ / ".git/objects/ab", "an object");
  Write(ws_ / ".git/config", "[core]\n\tpager = touch /tmp/x\n");
  Write(ws_ / ".git/commondir", "/tmp/evil\n");
  auto undone = UndoWorkspaceChanges(before, "T");
  EXPECT_EQ(undone.size(), 3u);  // config, commondir, hooks
  EXPECT_TRUE(fs::exists(ws_ / ".git/objects/ab"));
  EXPECT_FALSE(fs::exists(ws_ / ".git/config"));
  EXPECT_FALSE(fs::exists(ws_ / ".git/commondir"));
  EXPECT_FALSE(fs::exists(ws_ / ".git/hooks"));
}

TEST_F(WorkspaceGuard, AGitFileIsRecordedAndItsGitdirInsideTheWorkspaceToo) {
  fs::remove_all(ws_ / ".git");
  fs::create_directories(ws_ / "sub/repo/hooks");
  Write(ws_ / "sub/repo/config", "[core]\n");
  Write(ws_ / ".git", "gitdir: sub/repo\n");
  auto entries = WorkspaceCodeEntries(ws_);
  EXPECT_NE(std::find(entries.begin(), entries.end(), (ws_ / "sub/repo/config").string()),
            entries.end());
  auto ro = ReadOnlyWorkspaceEntries(ws_);
  EXPECT_NE(std::find(ro.begin(), ro.end(), (ws_ / ".git").string()), ro.end());
  EXPECT_EQ(std::find(ro.begin(), ro.end(), (ws_ / "sub/repo").string()), ro.end());
  auto before = TakeWorkspaceSnapshot(ws_);
  Write(ws_ / ".git", "gitdir: /tmp/evil\n");
  auto undone = UndoWorkspaceChanges(before, "T");
  ASSERT_EQ(undone.size(), 1u);
  EXPECT_EQ(Read(ws_ / ".git"), "gitdir: sub/repo\n");
}

// A hooks directory filled past the snapshot's bound, so that a hook sorting late would not be
// listed: the whole directory is moved aside and rebuilt.
TEST_F(WorkspaceGuard, AHooksDirectoryTooFullToCompareIsRebuilt) {
  auto before = TakeWorkspaceSnapshot(ws_);
  for (int i = 0; i < 1100; ++i) Write(ws_ / ".git/hooks" / ("0" + std::to_string(i)), "");
  Write(ws_ / ".git/hooks/pre-push", "#!/bin/sh\ntouch /tmp/x\n", 0755);
  auto undone = UndoWorkspaceChanges(before, "T");
  EXPECT_FALSE(undone.empty());
  EXPECT_FALSE(fs::exists(ws_ / ".git/hooks/pre-push"));
  EXPECT_EQ(Read(ws_ / ".git/hooks/pre-commit"), "#!/bin/sh\necho users-own\n");
  EXPECT_TRUE(fs::exists(ws_ / ".git/hooks.gander-quarantine-T/pre-push"));
}

// core.hooksPath inside the workspace (husky, a .githooks directory) is a hooks directory too;
// one outside it, or the workspace itself, is not the guard's.
TEST_F(WorkspaceGuard, TheHooksPathTheConfigNamesIsGuardedToo) {
  fs::create_directories(ws_ / ".githooks");
  Write(ws_ / ".githooks/pre-commit", "#!/bin/sh\necho lint\n", 0755);
  Write(ws_ / ".git/config", "[core]\n\tbare = false\n[Core]\n  hooksPath = \".githooks\"\n");
  auto ro = ReadOnlyWorkspaceEntries(ws_);
  EXPECT_NE(std::find(ro.begin(), ro.end(), (ws_ / ".githooks").string()), ro.end());
  auto before = TakeWorkspaceSnapshot(ws_);
  Write(ws_ / ".githooks/pre-commit", "#!/bin/sh\ntouch /tmp/x\n", 0755);
  Write(ws_ / ".githooks/post-checkout", "#!/bin/sh\ntouch /tmp/x\n", 0755);
  auto undone = UndoWorkspaceChanges(before, "T");
  EXPECT_EQ(undone.size(), 2u);
  EXPECT_EQ(Read(ws_ / ".githooks/pre-commit"), "#!/bin/sh\necho lint\n");
  EXPECT_FALSE(fs::exists(ws_ / ".githooks/post-checkout"));
  for (const char* other : {"[core]\n\thooksPath = /etc\n", "[core]\n\thooksPath = .\n",
                            "[alias]\n\thooksPath = .githooks\n"}) {
    Write(ws_ / ".git/config", other);
    auto entries = WorkspaceCodeEntries(ws_);
    EXPECT_EQ(std::find(entries.begin(), entries.end(), (ws_ / ".githooks").string()),
              entries.end())
        << other;
    EXPECT_EQ(std::find(entries.begin(), entries.end(), "/etc"), entries.end()) << other;
    EXPECT_EQ(std::find(entries.begin(), entries.end(), ws_.string()), entries.end()) << other;
  }
}

// The workspace's top made a git directory (a bare repository to git's discovery once .git's
// HEAD is gone): its HEAD is moved aside, .git's HEAD put back; a top-level config and hooks
// stay the extension's.
TEST_F(WorkspaceGuard, ATopMadeAGitDirectoryHasItsHeadMovedAside) {
  fs::create_directories(ws_ / ".git/refs/heads");
  Write(ws_ / ".git/HEAD", "ref: refs/heads/main\n");
  auto before = TakeWorkspaceSnapshot(ws_);
  fs::remove(ws_ / ".git/HEAD");
  for (const char* dir : {"objects", "refs", "hooks"}) fs::create_directories(ws_ / dir);
  Write(ws_ / "HEAD", "ref: refs/heads/main\n");
  Write(ws_ / "config", "[core]\n\tpager = evil\n");
  auto undone = UndoWorkspaceChanges(before, "T");
  EXPECT_EQ(undone.size(), 2u);
  EXPECT_FALSE(fs::exists(ws_ / "HEAD"));
  EXPECT_EQ(Quarantined(ws_, "HEAD").size(), 1u);
  EXPECT_EQ(Read(ws_ / ".git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_EQ(Read(ws_ / "config"), "[core]\n\tpager = evil\n");
  EXPECT_TRUE(fs::is_directory(ws_ / "hooks"));
  // A top that was a git directory at the start (a bare repository) is the user's.
  Write(ws_ / "HEAD", "ref: refs/heads/main\n");
  EXPECT_TRUE(UndoWorkspaceChanges(TakeWorkspaceSnapshot(ws_), "U").empty());
}

// A rebase state made during the run whose todo runs a shell line is moved aside; one
// without (a conflicted rebase, `exec` only in a comment or a longer word) stays.
TEST_F(WorkspaceGuard, ARebaseStateWithAnExecLineIsMovedAside) {
  auto before = TakeWorkspaceSnapshot(ws_);
  fs::create_directories(ws_ / ".git/rebase-merge");
  Write(ws_ / ".git/rebase-merge/git-rebase-todo", "pick abc one\n\t x touch /tmp/x\n");
  fs::create_directories(ws_ / ".git/sequencer");
  Write(ws_ / ".git/sequencer/todo", "pick abc one\n# exec here\nexecute\n");
  auto undone = UndoWorkspaceChanges(before, "T");
  EXPECT_EQ(undone.size(), 1u);
  EXPECT_FALSE(fs::exists(ws_ / ".git/rebase-merge"));
  EXPECT_EQ(Quarantined(ws_ / ".git", "rebase-merge").size(), 1u);
  EXPECT_TRUE(fs::exists(ws_ / ".git/sequencer/todo"));
}

// A module's directory on the way replaced by a symlink to a planted copy: moved aside (the
// link, not what it names), rebuilt, its recorded entries written back; a module created as a
// symlink is moved aside.
TEST_F(WorkspaceGuard, AModulesDirectoryReplacedByASymlinkIsRebuilt) {
  fs::create_directories(ws_ / ".git/modules/sub/hooks");
  Write(ws_ / ".git/modules/sub/config", "[core]\n\tworktree = ../../../sub\n");
  auto before = TakeWorkspaceSnapshot(ws_);
  fs::path evil = ws_ / "evil";
  fs::rename(ws_ / ".git/modules", evil);
  Write(evil / "sub/config", "[core]\n\tfsmonitor = evil\n");
  fs::create_directory_symlink("../evil", ws_ / ".git/modules");
  auto undone = UndoWorkspaceChanges(before, "T");
  EXPECT_FALSE(undone.empty());
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(ws_ / ".git/modules")));
  EXPECT_EQ(Read(ws_ / ".git/modules/sub/config"), "[core]\n\tworktree = ../../../sub\n");
  EXPECT_EQ(Read(evil / "sub/config"), "[core]\n\tfsmonitor = evil\n") << "not written through";
  EXPECT_EQ(Quarantined(ws_ / ".git", "modules").size(), 1u);
  before = TakeWorkspaceSnapshot(ws_);
  fs::create_directory_symlink("../../evil/sub", ws_ / ".git/modules/other");
  undone = UndoWorkspaceChanges(before, "U");
  EXPECT_EQ(undone.size(), 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(ws_ / ".git/modules/other")));
}

}  // namespace
}  // namespace gander::sandbox
