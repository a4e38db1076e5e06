// Path classification (each class, deny wins, longest match, workspace inside home, symlink
// targets) and the bounded metric label for a path.
#include "monitor/path_classifier.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <limits.h>

#include <set>
#include <string>
#include <vector>

#include "tests/unit/expect_table.h"

namespace gander::monitor {
namespace {

using gander::unit::ExpectMaps;

// Roughly the shipped default profile, expanded for HOME=/home/u, WORKSPACE=/home/u/proj.
policies::ExpandedPolicy DefaultLikePolicy() {
  policies::ExpandedPolicy p;
  p.exec = {"/usr", "/bin", "/lib", "/lib64", "/home/u/proj"};
  p.read = {"/etc"};
  p.write = {"/home/u/proj"};
  p.private_ = {"/tmp", "/home/u"};
  p.deny = {"/home/u/.ssh", "/home/u/.aws", "/home/u/.config/goose", "/etc/shadow",
            "/etc/ssl/private"};
  return p;
}

class PathClassifierTest : public ::testing::Test {
 protected:
  ClassifierRules rules_ =
      ClassifierRules::From(DefaultLikePolicy(), "/home/u/proj", {"/opt/node"});

  // Classify under rules_, for ExpectMaps.
  auto Classified() const {
    return [this](const std::string& path) { return Classify(path, rules_); };
  }
};

TEST_F(PathClassifierTest, Workspace) {
  EXPECT_EQ(Classify("/home/u/proj", rules_), events::PathClass::kWorkspace);
  EXPECT_EQ(Classify("/home/u/proj/src/index.js", rules_), events::PathClass::kWorkspace);
}

TEST_F(PathClassifierTest, Private) {
  ExpectMaps<events::PathClass>(Classified(),
                                {{"/tmp", events::PathClass::kPrivate},
                                 {"/tmp/npm-1234/x", events::PathClass::kPrivate},
                                 {"/home/u/.cache/node", events::PathClass::kPrivate}});
  EXPECT_EQ(Classify("/home/u/project2/x", rules_), events::PathClass::kPrivate)
      << "a sibling whose name starts like the workspace is not in it";
}

TEST_F(PathClassifierTest, AllowedReadOnly) {
  EXPECT_EQ(Classify("/usr/lib/x86_64-linux-gnu/libc.so.6", rules_),
            events::PathClass::kAllowedReadOnly);
  EXPECT_EQ(Classify("/etc/passwd", rules_), events::PathClass::kAllowedReadOnly);
  EXPECT_EQ(Classify("/opt/node/bin/node", rules_), events::PathClass::kAllowedReadOnly)
      << "extra_exec";
}

TEST_F(PathClassifierTest, AllowedWriteOutsideTheWorkspace) {
  auto policy = DefaultLikePolicy();
  policy.write.push_back("/var/cache/app");
  policy.read.push_back("/var");
  auto rules = ClassifierRules::From(policy, "/home/u/proj");
  EXPECT_EQ(Classify("/var/cache/app/db", rules), events::PathClass::kAllowedWrite);
  EXPECT_EQ(Classify("/var/log/syslog", rules), events::PathClass::kAllowedReadOnly)
      << "the longest matching rule wins";
}

TEST_F(PathClassifierTest, System) {
  ExpectMaps<events::PathClass>(Classified(),
                                {{"/proc/1/status", events::PathClass::kSystem},
                                 {"/dev/null", events::PathClass::kSystem},
                                 {"pipe:[1234]", events::PathClass::kSystem},
                                 {"anon_inode:[eventfd]", events::PathClass::kSystem}});
}

TEST_F(PathClassifierTest, Outside) {
  ExpectMaps<events::PathClass>(Classified(),
                                {{"/var/lib/dpkg/status", events::PathClass::kOutside},
                                 {"/", events::PathClass::kOutside},
                                 {"/home", events::PathClass::kOutside},
                                 {"/home/other/.bashrc", events::PathClass::kOutside}});
  EXPECT_EQ(Classify("/usrlocal", rules_), events::PathClass::kOutside) << "prefix of a name only";
  EXPECT_EQ(Classify("", rules_), events::PathClass::kOutside);
}

TEST_F(PathClassifierTest, Denied) {
  ExpectMaps<events::PathClass>(Classified(),
                                {{"/home/u/.ssh", events::PathClass::kDenied},
                                 {"/home/u/.ssh/id_ed25519", events::PathClass::kDenied},
                                 {"/home/u/.config/goose/config.yaml", events::PathClass::kDenied},
                                 {"/etc/shadow", events::PathClass::kDenied}});
  EXPECT_EQ(Classify("/etc/shadow-", rules_), events::PathClass::kAllowedReadOnly)
      << "not under /etc/shadow";
  EXPECT_EQ(Classify("/home/u/.config/gcloud", rules_), events::PathClass::kPrivate);
}

TEST_F(PathClassifierTest, DenyWinsEvenWhenShorter) {
  auto policy = DefaultLikePolicy();
  policy.deny.push_back("/opt");
  policy.exec.push_back("/opt/tools/bin");
  policy.deny.push_back("/home/u/proj/.env");
  auto rules = ClassifierRules::From(policy, "/home/u/proj", {"/opt/node"});
  EXPECT_EQ(Classify("/opt/tools/bin/tool", rules), events::PathClass::kDenied);
  EXPECT_EQ(Classify("/opt/node/bin/node", rules), events::PathClass::kDenied);
  EXPECT_EQ(Classify("/home/u/proj/.env", rules), events::PathClass::kDenied);
  EXPECT_EQ(Classify("/home/u/proj/.envrc", rules), events::PathClass::kWorkspace);
}

TEST_F(PathClassifierTest, WorkspaceThatIsHomeIsStillTheWorkspace) {
  auto rules = ClassifierRules::From(DefaultLikePolicy(), "/home/u");
  EXPECT_EQ(Classify("/home/u/notes.txt", rules), events::PathClass::kWorkspace)
      << "workspace beats private on the same path";
  EXPECT_EQ(Classify("/home/u/.ssh/id_rsa", rules), events::PathClass::kDenied);
}

TEST_F(PathClassifierTest, RulesAreNormalised) {
  ClassifierRules rules({{"/data//set/", events::PathClass::kAllowedReadOnly},
                         {"relative/ignored", events::PathClass::kDenied},
                         {"/data/set/../secret", events::PathClass::kDenied}});
  EXPECT_EQ(rules.Classify("/data/set/a"), events::PathClass::kAllowedReadOnly);
  EXPECT_EQ(rules.Classify("/data/secret/a"), events::PathClass::kDenied);
  EXPECT_EQ(rules.Classify("/relative/ignored"), events::PathClass::kOutside);
  EXPECT_EQ(rules.DenyPaths(), std::vector<std::string>{"/data/secret"});
}

TEST_F(PathClassifierTest, ResolveAndClassify) {
  FixedProcessView view;
  view.cwd_path = "/home/u/proj";
  view.fds = {{3, "/home/u/.ssh"}};
  ClassifiedPath escape = ResolveAndClassify("/proc/self/fd/3/id_rsa", std::nullopt, view, rules_);
  EXPECT_EQ(escape.path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(escape.path_class, events::PathClass::kDenied);
  ClassifiedPath up = ResolveAndClassify("../../../etc/shadow", std::nullopt, view, rules_);
  EXPECT_EQ(up.path_class, events::PathClass::kDenied);
  ClassifiedPath local = ResolveAndClassify("package.json", std::nullopt, view, rules_);
  EXPECT_EQ(local.path_class, events::PathClass::kWorkspace);
  ClassifiedPath overlong =
      ResolveAndClassify(std::string(PATH_MAX, 'a'), std::nullopt, view, rules_);
  EXPECT_FALSE(overlong.path);
  EXPECT_EQ(overlong.path_class, events::PathClass::kUnknown);
  EXPECT_EQ(overlong.error, ENAMETOOLONG);
}

TEST_F(PathClassifierTest, SymlinkInTheWorkspacePointingOut) {
  FixedProcessView view;
  view.fds = {{7, "/etc"}};
  auto target = [&](std::string_view text) {
    return ClassifySymlinkTarget("/home/u/proj/link", text, view, rules_);
  };
  EXPECT_EQ(Classify("/home/u/proj/link", rules_), events::PathClass::kWorkspace);
  ClassifiedPath key = target("../.ssh/id_rsa");
  EXPECT_EQ(key.path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(key.path_class, events::PathClass::kDenied);
  EXPECT_EQ(target("/etc/hosts").path_class, events::PathClass::kAllowedReadOnly);
  EXPECT_EQ(target("/var/lib/secret").path_class, events::PathClass::kOutside);
  EXPECT_EQ(target("src/../README.md").path_class, events::PathClass::kWorkspace);
  EXPECT_EQ(target("/proc/self/fd/7/shadow").path_class, events::PathClass::kDenied);
  ClassifiedPath empty = target("");
  EXPECT_EQ(empty.path_class, events::PathClass::kUnknown);
  EXPECT_EQ(empty.error, ENOENT);
}

// Labels -------------------------------------------------------------------------------------

std::string Label(const std::string& path, const std::vector<std::string>& anchors = {}) {
  return NormaliseForLabel(path, "/home/u", "/home/u/proj", anchors);
}

std::string LabelOf(const std::string& path) { return Label(path); }

TEST(NormaliseForLabel, HomeKeepsOneComponentBelowTilde) {
  ExpectMaps(LabelOf, {{"/home/u/.ssh/id_rsa", "~/.ssh"},
                       {"/home/u/.ssh", "~/.ssh"},
                       {"/home/u/.config/goose/config.yaml", "~/.config"},
                       {"/home/u", "~"}});
  EXPECT_EQ(Label("/home/user2/.ssh/id_rsa"), "/home/user2") << "not our home";
}

TEST(NormaliseForLabel, OtherPathsKeepTwoComponents) {
  ExpectMaps(LabelOf, {{"/etc/shadow", "/etc/shadow"},
                       {"/usr/lib/x/y/z", "/usr/lib"},
                       {"/etc", "/etc"},
                       {"/", "/"}});
}

TEST(NormaliseForLabel, WorkspaceIsOneToken) {
  EXPECT_EQ(Label("/home/u/proj"), "${WORKSPACE}");
  EXPECT_EQ(Label("/home/u/proj/node_modules/a/b/c.js"), "${WORKSPACE}");
}

TEST(NormaliseForLabel, AnchorsKeepDenyRulesDistinct) {
  std::vector<std::string> anchors = {"/home/u/.config/goose", "/home/u/.config/gcloud",
                                      "/etc/ssl/private", "/home/u/proj/.env", "/home/u/.config"};
  EXPECT_EQ(Label("/home/u/.config/goose/config.yaml", anchors), "~/.config/goose");
  EXPECT_EQ(Label("/home/u/.config/gcloud/credentials.db", anchors), "~/.config/gcloud");
  EXPECT_EQ(Label("/home/u/.config/other", anchors), "~/.config") << "longest anchor";
  EXPECT_EQ(Label("/etc/ssl/private/key.pem", anchors), "/etc/ssl/private");
  EXPECT_EQ(Label("/home/u/proj/.env", anchors), "${WORKSPACE}/.env");
  EXPECT_EQ(Label("/etc/ssl/certs/ca.pem", anchors), "/etc/ssl");
}

TEST(NormaliseForLabel, PseudoNamesAndOddInput) {
  ExpectMaps(LabelOf, {{"pipe:[1234]", "pipe:"},
                       {"anon_inode:[eventfd]", "anon_inode:"},
                       {"", "(other)"},
                       {"relative/path", "(other)"},
                       {":odd", "(other)"}});
}

TEST(NormaliseForLabel, EmptyOrRootHomeAndWorkspaceAreIgnored) {
  EXPECT_EQ(NormaliseForLabel("/home/u/.ssh/id_rsa", "", ""), "/home/u");
  EXPECT_EQ(NormaliseForLabel("/etc/shadow", "/", "/"), "/etc/shadow");
}

TEST(NormaliseForLabel, InvalidUtf8IsEscaped) {
  EXPECT_EQ(Label("/tmp/\xff\xfe/x"), "/tmp/\\xff\\xfe");
  EXPECT_EQ(Label("/home/u/caf\xc3\xa9/x"), "~/caf\xc3\xa9") << "valid UTF-8 kept";
}

TEST(NormaliseForLabel, ManyPathsFewLabels) {
  std::set<std::string> labels;
  for (int i = 0; i < 1000; ++i) {
    labels.insert(Label("/usr/lib/node_modules/pkg" + std::to_string(i) + "/index.js"));
    labels.insert(Label("/home/u/.cache/f" + std::to_string(i)));
    labels.insert(Label("/home/u/proj/f" + std::to_string(i)));
  }
  EXPECT_EQ(labels, (std::set<std::string>{"/usr/lib", "~/.cache", "${WORKSPACE}"}));
}

}  // namespace
}  // namespace gander::monitor
