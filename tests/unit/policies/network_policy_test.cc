// The network keys beyond allow/deny: `network.deny_errno` (parsed, validated with its
// position, inherited through extends, written back), and what `--mode monitor` enforces of a
// trial policy's network rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "policies/network_matcher.h"
#include "policies/parser.h"
#include "policies/trial.h"

namespace gander::policies {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Error(std::string_view yaml) {
  Result<Policy> policy = ParsePolicy(yaml, "my.yaml");
  return policy.ok() ? "" : policy.error().message;
}

TEST(DenyErrnoTest, ParsedAndWrittenBack) {
  Result<Policy> p = ParsePolicy("version: 1\nnetwork: {deny_errno: EACCES}\n", "my.yaml");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->network.deny_errno, "EACCES");
  EXPECT_EQ(DenyErrnoValue(*p->network.deny_errno), EACCES);
  std::string yaml = ToYaml(*p);
  EXPECT_THAT(yaml, HasSubstr("deny_errno: EACCES"));
  Result<Policy> again = ParsePolicy(yaml, "again.yaml");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->network.deny_errno, "EACCES");
}

TEST(DenyErrnoTest, UnsetByDefault) {
  Result<Policy> p = ParsePolicy("version: 1\nnetwork: {allow: []}\n", "my.yaml");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->network.deny_errno);
  EXPECT_THAT(ToYaml(*p), ::testing::Not(HasSubstr("deny_errno")));
}

TEST(DenyErrnoTest, EveryNamedErrnoHasItsValue) {
  EXPECT_EQ(DenyErrnoValue("ECONNREFUSED"), ECONNREFUSED);
  EXPECT_EQ(DenyErrnoValue("EPERM"), EPERM);
  EXPECT_EQ(DenyErrnoValue("ENETUNREACH"), ENETUNREACH);
  EXPECT_EQ(DenyErrnoValue("EHOSTUNREACH"), EHOSTUNREACH);
  EXPECT_EQ(DenyErrnoValue("ETIMEDOUT"), ETIMEDOUT);
  EXPECT_EQ(DenyErrnoValue("ECONNRESET"), ECONNRESET);
  EXPECT_FALSE(DenyErrnoValue("eacces"));
  EXPECT_FALSE(DenyErrnoValue("13"));
  EXPECT_FALSE(DenyErrnoValue("ENOENT"));
}

TEST(DenyErrnoTest, BadValuesNameTheirPosition) {
  EXPECT_EQ(Error("version: 1\nnetwork:\n  deny_errno: EFOO\n"),
            "my.yaml:3:15: network.deny_errno: expected one of: ECONNREFUSED, EACCES, EPERM, "
            "ENETUNREACH, EHOSTUNREACH, ETIMEDOUT, ECONNRESET, got 'EFOO'");
  EXPECT_EQ(Error("version: 1\nnetwork: {deny_errno: 13}\n"),
            "my.yaml:2:23: network.deny_errno: expected one of: ECONNREFUSED, EACCES, EPERM, "
            "ENETUNREACH, EHOSTUNREACH, ETIMEDOUT, ECONNRESET, got '13'");
  EXPECT_EQ(Error("version: 1\nnetwork:\n  deny_errno: [EACCES]\n"),
            "my.yaml:3:15: network.deny_errno: expected one of: ECONNREFUSED, EACCES, EPERM, "
            "ENETUNREACH, EHOSTUNREACH, ETIMEDOUT, ECONNRESET");
  EXPECT_THAT(Error("version: 1\nnetwork:\n  errno: EACCES\n"),
              HasSubstr("my.yaml:3:3: unknown key 'errno' in network"));
}

TEST(ProtocolTest, ParsedWrittenBackAndFingerprinted) {
  Result<Policy> p = ParsePolicy(
      "version: 1\nnetwork:\n  allow:\n    - {host: 10.0.0.5, ports: [5353], protocol: udp}\n"
      "    - {host: 10.0.0.5, ports: [443]}\n",
      "my.yaml");
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->network.allow.size(), 2u);
  EXPECT_EQ(p->network.allow[0].protocol, Protocol::kUdp);
  EXPECT_FALSE(p->network.allow[1].protocol);
  std::string yaml = ToYaml(*p);
  EXPECT_THAT(yaml, HasSubstr("{host: 10.0.0.5, ports: [5353], protocol: udp}"));
  Result<Policy> again = ParsePolicy(yaml, "again.yaml");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->network.allow[0].protocol, Protocol::kUdp);
}

TEST(ProtocolTest, BadValuesNameTheirPosition) {
  EXPECT_EQ(Error("version: 1\nnetwork:\n  allow:\n    - {host: a.com, ports: [1], protocol: "
                  "sctp}\n"),
            "my.yaml:4:43: network.allow[0].protocol: expected one of: tcp, udp, got 'sctp'");
  EXPECT_EQ(Error("version: 1\nnetwork:\n  deny:\n    - {host: a.com, protocol: [udp]}\n"),
            "my.yaml:4:31: network.deny[0].protocol: expected one of: tcp, udp");
  EXPECT_THAT(Error("version: 1\nnetwork:\n  allow:\n    - {host: a.com, ports: [1], protocol: "
                    "UDP}\n"),
              HasSubstr("got 'UDP'"));
}

TEST(TrialNetworkTest, AllowsOfBothDeniesOfTheBase) {
  ExpandedPolicy base;
  base.network.allow = {{"pypi.org", {443}, {}}};
  base.network.deny = {{"169.254.169.254", {}, {}}};
  ExpandedPolicy trial;
  trial.network.allow = {{"*.github.com", {443}, {}}};
  trial.network.deny = {{"gist.github.com", {}, {}}};  // on trial: logged, not enforced
  trial.network.deny_errno = "EACCES";
  ExpandedPolicy enforced = TrialEnforcement(trial, base);
  std::vector<std::string> allow, deny;
  for (const auto& r : enforced.network.allow) allow.push_back(r.host);
  for (const auto& r : enforced.network.deny) deny.push_back(r.host);
  EXPECT_THAT(allow, ElementsAre("*.github.com", "pypi.org"));
  EXPECT_THAT(deny, ElementsAre("169.254.169.254"));
  EXPECT_EQ(enforced.network.deny_errno, "EACCES");
}

}  // namespace
}  // namespace gander::policies
