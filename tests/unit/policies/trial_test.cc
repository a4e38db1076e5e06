// What `--mode monitor` enforces for a trial policy (policies/trial.h).
#include "policies/trial.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gander::policies {
namespace {

using ::testing::ElementsAre;

ExpandedPolicy Base() {
  ExpandedPolicy base;
  base.read = {"/etc"};
  base.exec = {"/usr", "/ws"};
  base.write = {"/ws"};
  base.private_ = {"/tmp", "/home/ada"};
  base.deny = {"/home/ada/.ssh", "/etc/shadow"};
  base.limits.processes = 1024;
  base.limits.open_files = 4096;
  base.limits.core_dumps = false;
  base.sources = {"profile:default"};
  return base;
}

TEST(TrialEnforcementTest, TighterFilesystemRulesAreNotApplied) {
  ExpandedPolicy trial;
  trial.read = {"/etc/ssl"};  // narrower than the base's /etc
  trial.exec = {"/usr/bin"};
  trial.deny = {"/ws/secret"};  // an extra deny: trialled, not enforced
  trial.sources = {"tight.yaml"};
  ExpandedPolicy enforced = TrialEnforcement(trial, Base());
  EXPECT_THAT(enforced.read, ElementsAre("/etc/ssl", "/etc"));
  EXPECT_THAT(enforced.exec, ElementsAre("/usr/bin", "/usr", "/ws"));
  EXPECT_THAT(enforced.write, ElementsAre("/ws"));
  EXPECT_THAT(enforced.private_, ElementsAre("/tmp", "/home/ada"));
  EXPECT_THAT(enforced.deny, ElementsAre("/home/ada/.ssh", "/etc/shadow"));
  EXPECT_THAT(enforced.sources,
              ElementsAre("tight.yaml", "monitor mode: enforcing", "profile:default"));
}

TEST(TrialEnforcementTest, GrantsBeyondTheBaseStayGranted) {
  ExpandedPolicy trial = Base();
  trial.write = {"/ws", "/home/ada/notes"};
  ExpandedPolicy enforced = TrialEnforcement(trial, Base());
  EXPECT_THAT(enforced.write, ElementsAre("/ws", "/home/ada/notes"));
  EXPECT_THAT(enforced.deny, ElementsAre("/home/ada/.ssh", "/etc/shadow"));
}

TEST(TrialEnforcementTest, LimitsAreTheBasesRelaxedToTheTrials) {
  ExpandedPolicy trial;
  trial.limits.processes = 16;       // tighter: not applied
  trial.limits.open_files = 65536;   // looser: applied
  trial.limits.file_size = 1 << 20;  // the base has none: not applied
  ExpandedPolicy enforced = TrialEnforcement(trial, Base());
  EXPECT_EQ(enforced.limits.processes, 1024u);
  EXPECT_EQ(enforced.limits.open_files, 65536u);
  EXPECT_FALSE(enforced.limits.file_size);
  EXPECT_EQ(enforced.limits.core_dumps, false);
}

TEST(TrialEnforcementTest, MonitorSettingsAndEnvironmentAreTheTrials) {
  ExpandedPolicy trial;
  trial.files = FilesMonitoring::kAll;
  trial.audit_log = "/logs/x.jsonl";
  trial.env_pass = {"LANG"};
  ExpandedPolicy base = Base();
  base.env_pass = {"TZ"};
  ExpandedPolicy enforced = TrialEnforcement(trial, base);
  EXPECT_EQ(enforced.files, FilesMonitoring::kAll);
  EXPECT_EQ(enforced.audit_log, "/logs/x.jsonl");
  EXPECT_THAT(enforced.env_pass, ElementsAre("LANG"));
}

TEST(TrialEnforcementTest, TheTrialsSyscallAllowlistIsNotEnforced) {
  ExpandedPolicy trial = Base();
  trial.syscalls_allow = std::vector<std::string>{"read"};
  EXPECT_FALSE(TrialEnforcement(trial, Base()).syscalls_allow);
  EXPECT_FALSE(LearnEnforcement(trial, {"/etc"}, {"/tmp"}, {}).syscalls_allow);
}

TEST(LearnEnforcementTest, WidensToTheHostsFilesAndTheRealHome) {
  ExpandedPolicy learned = Base();
  ExpandedPolicy enforced = LearnEnforcement(learned, {"/etc", "/opt", "/srv", "/home"},
                                             {"/tmp", "/home/ada"}, {"/home/ada/.config/gander"});
  EXPECT_THAT(enforced.read, ElementsAre("/etc"));
  EXPECT_THAT(enforced.exec,
              ElementsAre("/usr", "/ws", "/etc", "/opt", "/srv", "/home", "/tmp", "/home/ada"));
  EXPECT_THAT(enforced.write, ElementsAre("/ws", "/tmp", "/home/ada"));
  EXPECT_THAT(enforced.private_, ElementsAre());  // the host's /tmp and the real home now
  // The credentials stay denied, and gander's own files join them.
  EXPECT_THAT(enforced.deny,
              ElementsAre("/home/ada/.ssh", "/etc/shadow", "/home/ada/.config/gander"));
  EXPECT_EQ(enforced.limits.processes, 1024u);
  EXPECT_THAT(enforced.sources, ElementsAre("profile:default",
                                            "learn mode: widened to the host's files and network"));
  // The policy learned under is untouched: it is the one on trial.
  EXPECT_THAT(learned.private_, ElementsAre("/tmp", "/home/ada"));
  // No home (HOME=/): only /tmp made writable, the private home stays.
  ExpandedPolicy no_home = LearnEnforcement(learned, {"/opt"}, {"/tmp"}, {});
  EXPECT_THAT(no_home.write, ElementsAre("/ws", "/tmp"));
  EXPECT_THAT(no_home.exec, ElementsAre("/usr", "/ws", "/opt", "/tmp"));
  EXPECT_THAT(no_home.private_, ElementsAre("/home/ada"));
}

}  // namespace
}  // namespace gander::policies
