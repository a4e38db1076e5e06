// Goose config rewrite: wrap then unwrap gives the file back byte for byte, wrap is
// idempotent, and only enabled stdio entries change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launcher/goose/config.h"

namespace gander::launcher::goose {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const WrapSettings kSettings{"/usr/bin/gander", "/home/ada/.config/gander/policies"};

// Goose's own style (serde_yaml: block lists at the key's indentation), plus hand-written forms.
const char* kConfig = R"(# my goose config
GOOSE_PROVIDER: anthropic   # provider
GOOSE_MODEL: "claude-sonnet"
extensions:
  developer:
    bundled: true
    display_name: Developer
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  memory:
    args:
    - -y
    - '@modelcontextprotocol/server-memory'
    bundled: null
    cmd: npx   # via npx
    description: null
    enabled: true
    env_keys: []
    envs: {}
    name: memory
    timeout: 300
    type: stdio
  github:
    type: stdio
    name: github
    cmd: "npx"
    args: ["-y", "@modelcontextprotocol/server-github@2025.4.8"]
    enabled: true
    envs:
      GITHUB_PERSONAL_ACCESS_TOKEN: ghp_example
    env_keys: [EXTRA_TOKEN]
    available_tools: [create_issue, get_issue]
    timeout: 60
    cwd: /home/ada/src
    description: "GitHub, quoted: yes"
  local:
    type: stdio
    name: local
    cmd: /opt/my server/bin/serve
    args: []
    enabled: true
  off:
    type: stdio
    name: off
    cmd: npx
    args:
      - -y
      - "@modelcontextprotocol/server-everything"
    enabled: false
  remote:
    type: streamable_http
    uri: https://example.com/mcp
    enabled: true
  events:
    type: sse
    uri: http://localhost:8000/sse
    enabled: true
  ui:
    type: frontend
    tools: []
    enabled: true
  plat:
    type: platform
    name: todo
    enabled: true
# trailing comment
)";

TEST(GooseConfigTest, WrapThenUnwrapIsByteExact) {
  auto wrapped = WrapConfig(kConfig, kSettings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  EXPECT_NE(wrapped->text, kConfig);
  auto unwrapped = UnwrapConfig(wrapped->text);
  ASSERT_TRUE(unwrapped.ok()) << unwrapped.error().message;
  EXPECT_EQ(unwrapped->text, kConfig);
}

TEST(GooseConfigTest, WrapsOnlyEnabledStdioEntries) {
  auto wrapped = WrapConfig(kConfig, kSettings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  auto entries = InspectConfig(wrapped->text);
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  for (const ExtensionEntry& e : *entries) {
    bool expect = e.key == "memory" || e.key == "github" || e.key == "local";
    EXPECT_EQ(e.wrapped, expect) << e.key;
  }
  const std::string& t = wrapped->text;
  EXPECT_THAT(t, HasSubstr("    cmd: /usr/bin/gander   # via npx\n"));
  EXPECT_THAT(t, HasSubstr("    args:\n    - run\n    - --name\n    - memory\n    - --profile\n"
                           "    - memory\n    - --\n    - npx\n    - -y\n"));
  EXPECT_THAT(t, HasSubstr("args: [run, --name, github, --policy, "
                           "/home/ada/.config/gander/policies/goose-github.yaml, --, \"npx\", "
                           "\"-y\""));
  // A plain scalar with a space stays one item in a flow list.
  EXPECT_THAT(t, HasSubstr("args: [run, --name, local, --profile, default, --, /opt/my "
                           "server/bin/serve]"));
  // Everything else is as it was.
  EXPECT_THAT(t, HasSubstr("# my goose config\nGOOSE_PROVIDER: anthropic   # provider\n"));
  EXPECT_THAT(t, HasSubstr("      - \"@modelcontextprotocol/server-everything\"\n    enabled: "
                           "false"));
  EXPECT_THAT(t, HasSubstr("    description: \"GitHub, quoted: yes\"\n"));
}

TEST(GooseConfigTest, EnvsAndEnvKeysBecomeSecretsOfAPolicy) {
  auto wrapped = WrapConfig(kConfig, kSettings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  const ExtensionEntry* github = nullptr;
  for (const ExtensionEntry& e : wrapped->extensions) {
    if (e.key == "github") github = &e;
    if (e.key == "memory") {
      EXPECT_FALSE(e.policy_file.has_value());
    }
  }
  ASSERT_NE(github, nullptr);
  ASSERT_TRUE(github->policy_file.has_value());
  EXPECT_EQ(github->policy_file->path, "/home/ada/.config/gander/policies/goose-github.yaml");
  EXPECT_THAT(github->policy_file->yaml, HasSubstr("extends: github\n"));
  EXPECT_THAT(github->policy_file->yaml,
              HasSubstr("secrets:\n  EXTRA_TOKEN: {from: env}\n"
                        "  GITHUB_PERSONAL_ACCESS_TOKEN: {from: env}\n"));
  EXPECT_THAT(github->policy_file->yaml, Not(HasSubstr("ghp_example")));
}

TEST(GooseConfigTest, WrapTwiceIsWrapOnce) {
  auto once = WrapConfig(kConfig, kSettings);
  ASSERT_TRUE(once.ok()) << once.error().message;
  auto twice = WrapConfig(once->text, kSettings);
  ASSERT_TRUE(twice.ok()) << twice.error().message;
  EXPECT_EQ(twice->text, once->text);
  for (const ExtensionEntry& e : twice->extensions) EXPECT_FALSE(e.changed) << e.key;
}

TEST(GooseConfigTest, UnwrapOfAnUnwrappedFileChangesNothing) {
  auto unwrapped = UnwrapConfig(kConfig);
  ASSERT_TRUE(unwrapped.ok()) << unwrapped.error().message;
  EXPECT_EQ(unwrapped->text, kConfig);
}

TEST(GooseConfigTest, CrLfAndIndentedBlockListsRoundTrip) {
  std::string config =
      "extensions:\r\n  fs:\r\n    type: stdio\r\n    cmd: npx\r\n    args:\r\n      - -y\r\n"
      "      - \"@modelcontextprotocol/server-filesystem\"\r\n      - /home/ada\r\n"
      "    enabled: true\r\n";
  auto wrapped = WrapConfig(config, kSettings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  EXPECT_THAT(wrapped->text, HasSubstr("      - run\r\n      - --name\r\n      - fs\r\n"
                                       "      - --profile\r\n      - filesystem\r\n"));
  auto unwrapped = UnwrapConfig(wrapped->text);
  ASSERT_TRUE(unwrapped.ok()) << unwrapped.error().message;
  EXPECT_EQ(unwrapped->text, config);
}

TEST(GooseConfigTest, EntriesItCannotRewriteAreLeftWithANote) {
  std::string config =
      "extensions:\n  x:\n    type: stdio\n    cmd: |\n      npx\n    enabled: true\n"
      "    args: [a]\n  y:\n    type: stdio\n    cmd: npx\n    enabled: true\n";
  auto wrapped = WrapConfig(config, kSettings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  EXPECT_EQ(wrapped->text, config);
  ASSERT_EQ(wrapped->extensions.size(), 2u);
  EXPECT_THAT(wrapped->extensions[0].note, HasSubstr("block scalars"));
  EXPECT_THAT(wrapped->extensions[1].note, HasSubstr("args"));
}

TEST(GooseConfigTest, NoExtensionsIsNotAnError) {
  for (const char* config : {"", "GOOSE_MODEL: x\n", "extensions:\n"}) {
    auto wrapped = WrapConfig(config, kSettings);
    ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
    EXPECT_EQ(wrapped->text, config);
  }
  EXPECT_FALSE(WrapConfig("extensions: [\n", kSettings).ok());
}

TEST(GooseConfigTest, ProfileForKnownServers) {
  EXPECT_EQ(ProfileForCommand({"npx", "-y", "@modelcontextprotocol/server-github@1.0"}), "github");
  EXPECT_EQ(ProfileForCommand({"uvx", "mcp-server-fetch"}), "fetch");
  EXPECT_EQ(ProfileForCommand({"/n/node_modules/.bin/mcp-server-filesystem", "/x"}), "filesystem");
  EXPECT_EQ(ProfileForCommand({"npx", "@modelcontextprotocol/server-brave-search"}),
            "brave-search");
  EXPECT_EQ(ProfileForCommand({"my-server"}), "default");
}

TEST(GooseConfigTest, DiffShowsOnlyChangedLines) {
  std::string diff = UnifiedDiff("a\nb\nc\n", "a\nB\nc\n", "x", "y");
  EXPECT_EQ(diff, "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  EXPECT_EQ(UnifiedDiff("a\n", "a\n", "x", "y"), "");
}

}  // namespace
}  // namespace gander::launcher::goose
