// The per-server profiles shipped for well-known MCP servers: each loads, builds on default,
// expands, and names exactly the API hosts and secrets its server needs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "policies/builtin_profiles.h"
#include "policies/expand.h"
#include "policies/loader.h"

namespace gander::policies {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

struct Expected {
  std::vector<std::string> hosts;    // network.allow hosts beyond default's (none)
  std::vector<std::string> secrets;  // secret names
};

const std::map<std::string, Expected>& ShippedProfiles() {
  static const std::map<std::string, Expected> profiles = {
      {"filesystem", {}},
      {"memory", {}},
      {"sequential-thinking", {}},
      {"everything", {}},
      {"github", {{"api.github.com"}, {"GITHUB_PERSONAL_ACCESS_TOKEN"}}},
      {"gitlab", {{"gitlab.com"}, {"GITLAB_PERSONAL_ACCESS_TOKEN"}}},
      {"slack", {{"slack.com"}, {"SLACK_BOT_TOKEN"}}},
      {"postgres", {{"127.0.0.1", "::1"}, {}}},
      {"puppeteer", {{"0.0.0.0/0", "::/0"}, {}}},
      {"brave-search", {{"api.search.brave.com"}, {"BRAVE_API_KEY"}}},
      {"fetch", {{"0.0.0.0/0", "::/0"}, {}}},
  };
  return profiles;
}

ExpansionContext Context() {
  ExpansionContext ctx;
  ctx.workspace = "/work/ws";
  ctx.home = "/home/ada";
  ctx.data = "/home/ada/.local/share/gander/data/x";
  return ctx;
}

TEST(ShippedProfilesTest, AllAreEmbedded) {
  for (const auto& [name, expected] : ShippedProfiles()) {
    EXPECT_THAT(BuiltinProfileNames(), Contains(name));
  }
}

TEST(ShippedProfilesTest, EachChecksAndNamesItsHostsAndSecrets) {
  for (const auto& [name, expected] : ShippedProfiles()) {
    SCOPED_TRACE(name);
    Result<Policy> policy = LoadProfile(name, {});
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    EXPECT_EQ(policy->extends, "default");
    Result<Policy> merged = ResolveExtends(*policy, {});
    ASSERT_TRUE(merged.ok()) << merged.error().message;
    EXPECT_EQ(merged->chain.back(), "profile:default");
    Result<ExpandedPolicy> expanded = Expand(*merged, Context());
    ASSERT_TRUE(expanded.ok()) << expanded.error().message;

    std::vector<std::string> hosts;
    for (const NetworkRule& rule : expanded->network.allow) {
      hosts.push_back(rule.host);
      EXPECT_FALSE(rule.ports.empty()) << rule.host;
    }
    EXPECT_THAT(hosts, UnorderedElementsAreArray(expected.hosts));
    std::vector<std::string> secrets;
    for (const auto& [secret, rule] : expanded->secrets) {
      secrets.push_back(secret);
      EXPECT_EQ(rule.from, SecretSource::kEnv) << secret;
    }
    EXPECT_THAT(secrets, UnorderedElementsAreArray(expected.secrets));
    // Whatever a profile adds, default's credentials stay hidden.
    EXPECT_THAT(expanded->deny, Contains("/home/ada/.ssh"));
    EXPECT_THAT(expanded->deny, Contains("/home/ada/.config/goose"));
  }
}

TEST(ShippedProfilesTest, WebProfilesKeepPrivateNetworksAndMetadataOut) {
  for (const char* name : {"puppeteer", "fetch"}) {
    Result<Policy> policy = LoadProfile(name, {});
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    std::set<std::string> denied;
    for (const NetworkRule& rule : policy->network.deny) denied.insert(rule.host);
    for (const char* block : {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}) {
      EXPECT_THAT(denied, Contains(block)) << name;
    }
  }
}

// Issue 18, break 2: server-memory's graph goes to the extension's data directory, writable,
// not into its read-only package directory.
TEST(ShippedProfilesTest, MemoryKeepsItsGraphInTheDataDirectory) {
  Result<Policy> policy = LoadProfile("memory", {});
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  Result<Policy> merged = ResolveExtends(*policy, {});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  Result<ExpandedPolicy> expanded = Expand(*merged, Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_THAT(expanded->write, Contains("/home/ada/.local/share/gander/data/x"));
  ASSERT_TRUE(expanded->env_set.contains("MEMORY_FILE_PATH"));
  EXPECT_EQ(expanded->env_set.at("MEMORY_FILE_PATH"),
            "/home/ada/.local/share/gander/data/x/memory.jsonl");
  // Without a data directory, ${DATA} is an error, never an empty path.
  ExpansionContext none = Context();
  none.data.clear();
  EXPECT_FALSE(Expand(*merged, none).ok());
}

TEST(ShippedProfilesTest, NetworklessProfilesHaveNoNetwork) {
  for (const char* name : {"filesystem", "memory", "sequential-thinking", "everything"}) {
    Result<Policy> policy = LoadProfile(name, {});
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    EXPECT_THAT(policy->network.allow, IsEmpty()) << name;
  }
}

}  // namespace
}  // namespace gander::policies
