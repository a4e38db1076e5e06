// The shipped profiles: embedded intact, and each one loads, resolves and expands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "policies/builtin_profiles.h"
#include "policies/expand.h"
#include "policies/loader.h"

namespace gander::policies {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

ExpansionContext Context() {
  ExpansionContext ctx;
  ctx.workspace = "/work/ws";
  ctx.home = "/home/ada";
  ctx.data = "/home/ada/.local/share/gander/data/ext";  // ${DATA}: the memory profile keeps its
                                                        // graph there
  return ctx;
}

TEST(BuiltinProfilesTest, EmbeddedTextMatchesTheFiles) {
  ASSERT_THAT(BuiltinProfileNames(), Contains("default"));
  for (const BuiltinProfile& profile : BuiltinProfiles()) {
    std::ifstream file(std::string(GANDER_SOURCE_DIR) + "/policies/profiles/" +
                       std::string(profile.name) + ".yaml");
    std::stringstream text;
    text << file.rdbuf();
    EXPECT_EQ(text.str(), profile.yaml) << profile.name;
  }
}

TEST(BuiltinProfilesTest, EveryProfileLoadsResolvesExpandsAndRoundTrips) {
  for (const std::string& name : BuiltinProfileNames()) {
    Result<Policy> policy = LoadProfile(name, {});
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    Result<Policy> merged = ResolveExtends(*policy, {});
    ASSERT_TRUE(merged.ok()) << merged.error().message;
    EXPECT_EQ(merged->chain.back(), "profile:default") << name << " must build on default";
    Result<ExpandedPolicy> expanded = Expand(*merged, Context());
    ASSERT_TRUE(expanded.ok()) << expanded.error().message;
    std::string yaml = ToYaml(*merged);
    Result<Policy> reparsed = ParsePolicy(yaml, "shown.yaml");
    ASSERT_TRUE(reparsed.ok()) << reparsed.error().message << "\n" << yaml;
    std::string shown_again = ToYaml(*reparsed);
    EXPECT_EQ(shown_again.substr(shown_again.find('\n')), yaml.substr(yaml.find('\n')));
  }
}

TEST(DefaultProfileTest, IsStrict) {
  Result<Policy> policy = LoadProfile("default", {});
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  Result<Policy> merged = ResolveExtends(*policy, {});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->source, "profile:default");
  Result<ExpandedPolicy> expanded = Expand(*merged, Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  const ExpandedPolicy& e = *expanded;

  EXPECT_THAT(e.exec, ElementsAre("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                  "/work/ws"));
  EXPECT_THAT(e.read, ElementsAre("/etc"));
  EXPECT_THAT(e.write, ElementsAre("/work/ws"));
  EXPECT_THAT(e.private_, ElementsAre("/tmp", "/home/ada"));
  for (const char* secret :
       {"/home/ada/.ssh", "/home/ada/.gnupg", "/home/ada/.aws", "/home/ada/.config/goose",
        "/home/ada/.netrc", "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssl/private"}) {
    EXPECT_THAT(e.deny, Contains(secret));
  }
  for (const std::string& path : e.deny) EXPECT_THAT(path, StartsWith("/"));
  EXPECT_THAT(e.env_pass, ElementsAre("LANG", "LC_ALL", "LC_CTYPE", "TZ"));
  EXPECT_THAT(e.env_set, IsEmpty());
  EXPECT_EQ(e.limits.processes, 1024u);
  EXPECT_EQ(e.limits.open_files, 4096u);
  EXPECT_EQ(e.limits.core_dumps, false);
  EXPECT_THAT(e.network.allow, IsEmpty());
  EXPECT_THAT(e.network.deny, IsEmpty());
  EXPECT_EQ(merged->monitor.files, FilesMonitoring::kOpens);  // said explicitly
  EXPECT_EQ(e.files, FilesMonitoring::kOpens);
  EXPECT_FALSE(e.audit_log.has_value());
  EXPECT_EQ(e.audit_log_max_size, 16ULL << 20);
  EXPECT_EQ(e.audit_log_files, 4);
  EXPECT_THAT(e.sources, ElementsAre("profile:default"));
}

}  // namespace
}  // namespace gander::policies
