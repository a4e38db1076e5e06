// Goose config rewrite: wrap then unwrap gives the file back byte for byte, wrap is
// idempotent, and only enabled stdio entries change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launcher/goose/config.h"
#include "launcher/goose/envs.h"
#include "launcher/goose/probe.h"

namespace gander::launcher::goose {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const WrapSettings kSettings{"/usr/bin/gander", "/home/ada/.config/gander/policies", "", {}};

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

TEST(GooseConfigTest, GanderMcpIsNeverWrapped) {
  // Its sandboxes are gander runs already; wrapped once more, they cannot be built.
  const std::string config = R"(extensions:
  sandbox:
    type: stdio
    name: sandbox
    cmd: /usr/bin/gander
    args: [mcp]
    enabled: true
)";
  auto wrapped = WrapConfig(config, kSettings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  EXPECT_EQ(wrapped->text, config);
  ASSERT_EQ(wrapped->extensions.size(), 1u);
  EXPECT_TRUE(wrapped->extensions[0].gander_mcp);
  EXPECT_FALSE(wrapped->extensions[0].changed);
  EXPECT_FALSE(wrapped->extensions[0].wrapped);
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

// A well-known server started by its file gets its profile: matched by the package the file is
// in, not by the file's name (index.js).
TEST(GooseConfigTest, ProfileForAServerStartedByItsFile) {
  EXPECT_EQ(ProfileForCommand(
                {"node", "/n/node_modules/@modelcontextprotocol/server-memory/dist/index.js"}),
            "memory");
  EXPECT_EQ(ProfileForCommand({"node", "/n/node_modules/server-filesystem/dist/index.js", "/ws"}),
            "filesystem");
  EXPECT_EQ(ProfileForCommand({"python3", "/v/lib/site-packages/mcp_server_fetch/__main__.py"}),
            "fetch");
  // A directory of that name that is not a package, or the package directory alone: default.
  EXPECT_EQ(ProfileForCommand({"node", "/home/ada/server-memory/index.js"}), "default");
  EXPECT_EQ(ProfileForCommand({"node", "/n/node_modules/@modelcontextprotocol"}), "default");
}

TEST(GooseConfigTest, DiffShowsOnlyChangedLines) {
  std::string diff = UnifiedDiff("a\nb\nc\n", "a\nB\nc\n", "x", "y");
  EXPECT_EQ(diff, "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  EXPECT_EQ(UnifiedDiff("a\n", "a\n", "x", "y"), "");
}

// Break 1 of issue 18: server-filesystem's directory arguments are its working set; wrap grants
// each existing one (absolute or ~/) read-write in the policy it writes, with a comment.
TEST(GooseConfigTest, DirectoryArgumentsBecomeWritableInThePolicy) {
  WrapSettings settings = kSettings;
  settings.home = "/home/ada";
  settings.is_directory = [](const std::string& p) {
    return p == "/home/ada/projects" || p == "/srv/data" || p == "/home/ada/notes";
  };
  std::string config =
      "extensions:\n  fs:\n    type: stdio\n    cmd: npx\n"
      "    args: [-y, \"@modelcontextprotocol/server-filesystem\", /srv/data, ~/projects,"
      " /srv/missing, relative, /srv/data]\n    enabled: true\n";
  auto wrapped = WrapConfig(config, settings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  ASSERT_EQ(wrapped->extensions.size(), 1u);
  const ExtensionEntry& fs = wrapped->extensions[0];
  ASSERT_TRUE(fs.policy_file.has_value());
  EXPECT_EQ(fs.directories, (std::vector<std::string>{"/srv/data", "~/projects"}));
  EXPECT_THAT(wrapped->text,
              HasSubstr("--policy, /home/ada/.config/gander/policies/goose-fs.yaml"));
  const std::string& yaml = fs.policy_file->yaml;
  EXPECT_THAT(yaml, HasSubstr("extends: filesystem\n"));
  EXPECT_THAT(yaml, HasSubstr("working set"));
  EXPECT_THAT(yaml, HasSubstr("  write:\n    - /srv/data\n    - \"~/projects\"\n"));
  EXPECT_THAT(yaml, Not(HasSubstr("missing")));
  EXPECT_THAT(yaml, Not(HasSubstr("secrets:")));
}

// Issue 16: a directory argument that is a system directory or the home (or holds it) is
// never a write grant: read-only, with a comment in the policy and a note for stderr.
TEST(GooseConfigTest, SystemDirectoriesAndTheHomeAreReadGrantsNotWriteGrants) {
  WrapSettings settings = kSettings;
  settings.home = "/home/ada";
  settings.is_directory = [](const std::string&) { return true; };
  std::string config =
      "extensions:\n  fs:\n    type: stdio\n    cmd: npx\n"
      "    args: [-y, \"@modelcontextprotocol/server-filesystem\", /etc, ~/, /home, /usr/share,"
      " /var, /home/ada/projects, /var/lib/app]\n    enabled: true\n";
  auto wrapped = WrapConfig(config, settings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  const ExtensionEntry& fs = wrapped->extensions.at(0);
  EXPECT_EQ(fs.directories, (std::vector<std::string>{"/home/ada/projects", "/var/lib/app"}));
  EXPECT_EQ(fs.read_directories,
            (std::vector<std::string>{"/etc", "~/", "/home", "/usr/share", "/var"}));
  ASSERT_TRUE(fs.policy_file.has_value());
  const std::string& yaml = fs.policy_file->yaml;
  EXPECT_THAT(yaml, HasSubstr("  write:\n    - /home/ada/projects\n    - /var/lib/app\n"));
  EXPECT_THAT(yaml, HasSubstr("never made\n  # writable by wrap"));
  EXPECT_THAT(yaml, HasSubstr("  read:\n    - /etc\n    - \"~/\"\n    - /home\n"));
  EXPECT_THAT(fs.note, HasSubstr("/etc, ~/, /home, /usr/share, /var are a system directory"));
  EXPECT_TRUE(IsUnsafeWriteGrant("/", "/home/ada"));
  EXPECT_TRUE(IsUnsafeWriteGrant("/root", "/root"));
  EXPECT_FALSE(IsUnsafeWriteGrant("/home/ada/x", "/home/ada"));
  EXPECT_FALSE(IsUnsafeWriteGrant("/opt/tool", "/home/ada"));
}

// Break 3 of issue 18: envs are secrets only when they are; the rest are passed as they are.
TEST(GooseConfigTest, PlainEnvsArePassedNotMadeSecrets) {
  std::string config =
      "extensions:\n  every:\n    type: stdio\n    cmd: npx\n"
      "    args: [-y, \"@modelcontextprotocol/server-everything\"]\n    enabled: true\n"
      "    envs: {LOG_LEVEL: debug, FEATURE_FLAG: \"true\", API_KEY: abc,"
      " UPSTREAM: ghp_0123456789abcdefABCDEF0123456789abcd}\n"
      "    env_keys: [SOMETHING]\n";
  auto wrapped = WrapConfig(config, kSettings);
  ASSERT_TRUE(wrapped.ok()) << wrapped.error().message;
  const ExtensionEntry& e = wrapped->extensions.at(0);
  EXPECT_EQ(e.plain_envs, (std::vector<std::string>{"FEATURE_FLAG", "LOG_LEVEL"}));
  EXPECT_EQ(e.secrets, (std::vector<std::string>{"API_KEY", "SOMETHING", "UPSTREAM"}));
  ASSERT_TRUE(e.policy_file.has_value());
  EXPECT_THAT(e.policy_file->yaml, HasSubstr("env:\n"));
  EXPECT_THAT(e.policy_file->yaml, HasSubstr("  pass: [FEATURE_FLAG, LOG_LEVEL]\n"));
  EXPECT_THAT(e.policy_file->yaml, HasSubstr("  API_KEY: {from: env}\n"));
  EXPECT_THAT(e.policy_file->yaml, Not(HasSubstr("LOG_LEVEL: {from")));
}

TEST(GooseEnvsTest, SecretByNameOrValue) {
  for (const char* name : {"GITHUB_PERSONAL_ACCESS_TOKEN", "API_KEY", "OPENAI_APIKEY",
                           "DB_PASSWORD", "SLACK_BOT_TOKEN", "GITLAB_PAT", "AWS_SECRET_ACCESS_KEY",
                           "MY_CREDENTIALS", "X_AUTH", "accesstoken"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"LOG_LEVEL", "PATH", "FEATURE_FLAG", "MEMORY_FILE_PATH", "AUTHOR",
                           "KEYBOARD", "DEBUG", "PORT"}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
  for (const char* value :
       {"ghp_0123456789abcdefABCDEF", "github_pat_11ABCDEFG0123456789", "sk-proj-abcdefgh12345678",
        "xoxb-1234-5678-abcdefgh", "AKIAIOSFODNN7EXAMPLE", "glpat-abcdefgh12345678",
        "q8Zr2LmX0vB7tK9wYp3N5cJ1"}) {
    EXPECT_TRUE(IsSecretValue(value)) << value;
  }
  for (const char* value : {"debug", "true", "8080", "production", "/home/ada/memory.jsonl",
                            "https://example.com/api", "a sentence with many words in it 123",
                            "aaaaaaaaaaaaaaaaaaaaaaaa1", "sk-", "2026-12-01T10:00:00Z"}) {
    EXPECT_FALSE(IsSecretValue(value)) << value;
  }
}

// goose doctor's refusals come from the extension's audit log; the lines of gander's own install
// phase (npm reading ~/.npmrc, the registry) are not the extension's and are not listed.
TEST(GooseDoctorRefusals, InstallPhaseLinesAreNotChargedToTheExtension) {
  const std::string denied_read =
      R"("file":{"syscall":"openat","path":"/home/u/.npmrc","class":"outside","access":"read",)"
      R"("result":"denied"}})";
  const std::string install =
      R"({"v":1,"kind":"file","extension":"x","phase":"install",)" + denied_read + "\n";
  const std::string own = R"({"v":1,"kind":"file","extension":"x",)" + denied_read + "\n";
  EXPECT_TRUE(RefusalsIn(install).empty());
  auto refusals = RefusalsIn(install + own);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_THAT(refusals[0].what, HasSubstr("/home/u/.npmrc"));
  EXPECT_EQ(refusals[0].fix, "filesystem.read: [/home/u/.npmrc]");
}

}  // namespace
}  // namespace gander::launcher::goose
