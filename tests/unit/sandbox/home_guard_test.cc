// What a write grant on the home becomes, and which home paths are protected.
#include "sandbox/home_guard.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gander::sandbox {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

policies::ExpandedPolicy HomeWorkspace() {
  policies::ExpandedPolicy p;
  p.exec = {"/usr", "/home/u"};
  p.write = {"/home/u", "/home/u/.local/share/gander/data/x", "/srv/project"};
  return p;
}

TEST(HomeGuard, AHomeWorkspaceBecomesReadOnlyAndTheOtherGrantsStay) {
  auto p = HomeWorkspace();
  auto lines = NarrowHomeWrites(p, "/home/u", false);
  EXPECT_EQ(p.write,
            (std::vector<std::string>{"/home/u/.local/share/gander/data/x", "/srv/project"}));
  EXPECT_TRUE(Has(p.exec, "/home/u")) << "still shown";
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("/home/u is your home: shown read-only"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("still writable: /home/u/.local/share/gander/data/x, /srv/project"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("--allow-home-write"), std::string::npos);
}

TEST(HomeGuard, AnAncestorOfTheHomeOrRootIsNarrowedToo) {
  policies::ExpandedPolicy p;
  p.write = {"/home", "/", "/home/u/proj"};
  auto lines = NarrowHomeWrites(p, "/home/u", false);
  EXPECT_EQ(p.write, std::vector<std::string>{"/home/u/proj"});
  EXPECT_TRUE(Has(p.read, "/home") && Has(p.read, "/"));
  EXPECT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("contains your home"), std::string::npos);
}

TEST(HomeGuard, TheOptInKeepsTheGrantAndSaysWhatStaysReadOnly) {
  auto p = HomeWorkspace();
  auto lines = NarrowHomeWrites(p, "/home/u", true);
  EXPECT_EQ(p.write, HomeWorkspace().write);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("stay read-only"), std::string::npos);
}

TEST(HomeGuard, AProjectWorkspaceIsLeftAlone) {
  policies::ExpandedPolicy p;
  p.write = {"/home/u/proj"};
  EXPECT_TRUE(NarrowHomeWrites(p, "/home/u", false).empty());
  EXPECT_EQ(p.write, std::vector<std::string>{"/home/u/proj"});
}

TEST(HomeGuard, ProtectedPathsCoverStartupFilesKeysAndGandersOwn) {
  auto paths = ProtectedHomePaths("/home/u", {{"XDG_CONFIG_HOME", "/cfg"}});
  for (const char* p : {"/home/u/.bashrc",
                        "/home/u/.bash_profile",
                        "/home/u/.bash_login",
                        "/home/u/.profile",
                        "/home/u/.zshrc",
                        "/home/u/.zshenv",
                        "/home/u/.zprofile",
                        "/home/u/.zlogin",
                        "/home/u/.config/fish",
                        "/home/u/.config/autostart",
                        "/home/u/.config/systemd",
                        "/home/u/.local/bin",
                        "/home/u/.ssh",
                        "/home/u/.config/goose",
                        "/home/u/.config/gander",
                        "/home/u/.local/state/gander",
                        "/home/u/.local/share/gander/packages",
                        "/cfg/autostart",
                        "/cfg/goose",
                        "/cfg/gander"}) {
    EXPECT_TRUE(Has(paths, p)) << p;
  }
  EXPECT_FALSE(Has(paths, "/home/u/.local/share/gander/data")) << "${DATA} stays writable";
  EXPECT_FALSE(Has(ProtectedHomePaths("/home/u", {}, true), "/home/u/.local/share/gander/packages"))
      << "the install phase writes its own cache";
  EXPECT_TRUE(ProtectedHomePaths("/", {}).empty());
  EXPECT_TRUE(ProtectedHomePaths("", {}).empty());
}

// The monitor's view of the guarded policy: what a write there is classified as must be what
// the sandbox does, so that --mode monitor's would_deny agrees with enforce.
TEST(HomeGuard, TheClassifierSeesANarrowedHomeWorkspaceAsReadOnly) {
  using events::PathClass;
  auto p = HomeWorkspace();
  p.private_ = {"/tmp", "/home/u"};  // the default profile's private home
  NarrowHomeWrites(p, "/home/u", false);
  const std::vector<std::string> protect = {"/home/u/.bashrc", "/home/u/.local/bin"};
  auto rules = GuardedClassifierRules(p, "/home/u", /*workspace_writable=*/false, protect, {}, {});
  EXPECT_EQ(rules.Classify("/home/u/notes.txt"), PathClass::kAllowedReadOnly);
  EXPECT_EQ(rules.Classify("/home/u/.bashrc"), PathClass::kAllowedReadOnly);
  EXPECT_EQ(rules.Classify("/home/u/.local/share/gander/data/x/f"), PathClass::kAllowedWrite);
  EXPECT_EQ(rules.Classify("/srv/project/f"), PathClass::kAllowedWrite);
}

TEST(HomeGuard, WithTheOptInTheClassifierStillSeesProtectedPathsReadOnly) {
  using events::PathClass;
  auto p = HomeWorkspace();
  p.write.push_back("/home/u/.local/bin/tool");  // a grant inside a protected path
  NarrowHomeWrites(p, "/home/u", true);
  const std::vector<std::string> protect = {"/home/u/.bashrc", "/home/u/.local/bin",
                                            "/home/u/.ssh"};
  auto rules = GuardedClassifierRules(p, "/home/u", /*workspace_writable=*/true, protect, {}, {});
  EXPECT_EQ(rules.Classify("/home/u/notes.txt"), PathClass::kWorkspace);
  EXPECT_EQ(rules.Classify("/home/u/.bashrc"), PathClass::kAllowedReadOnly);
  EXPECT_EQ(rules.Classify("/home/u/.local/bin/tool/x"), PathClass::kAllowedReadOnly);
  // A protected path no grant shows stays what it was (here: inside the workspace).
  auto project = GuardedClassifierRules(HomeWorkspace(), "/srv/project", true, protect, {}, {});
  EXPECT_EQ(project.Classify("/srv/project/f"), PathClass::kWorkspace);
  EXPECT_EQ(project.Classify("/etc/passwd"), PathClass::kOutside);
}

}  // namespace
}  // namespace gander::sandbox
