// The `secrets` section: parsing, every error, durations, merging and expansion.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "policies/expand.h"
#include "policies/fingerprint.h"
#include "policies/loader.h"
#include "policies/parser.h"

namespace gander::policies {
namespace {

using ::testing::HasSubstr;

std::string ParseError(std::string_view yaml) {
  Result<Policy> policy = ParsePolicy(yaml, "my.yaml");
  if (policy.ok()) return "";
  return policy.error().message;
}

// The error for one secret entry written at line 3, column 3.
std::string SecretError(const std::string& entry) {
  return ParseError("version: 1\nsecrets:\n  " + entry + "\n");
}

TEST(SecretsParseTest, TheIssueExample) {
  Result<Policy> policy = ParsePolicy(R"(version: 1
secrets:
  GITHUB_PERSONAL_ACCESS_TOKEN: {from: env}
  SLACK_BOT_TOKEN: {from: env, name: SLACK_TOKEN, ttl: 8h, on_expiry: warn}
  AWS_SESSION_TOKEN: {from: command, run: "aws sts get-session-token --output json",
                      json: Credentials.SessionToken, expires: Credentials.Expiration,
                      on_expiry: refresh}
  CERT: {from: file, path: ~/.config/tool/token, as: file, ttl: 1h30m, on_expiry: refresh,
         revoke: "tool revoke", timeout: 5s}
)",
                                      "my.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  const auto& s = policy->secrets;
  ASSERT_EQ(s.size(), 4u);
  const SecretRule& github = s.at("GITHUB_PERSONAL_ACCESS_TOKEN");
  EXPECT_EQ(github.from, SecretSource::kEnv);
  EXPECT_EQ(github.env_name, "");
  EXPECT_FALSE(github.ttl_s);
  EXPECT_FALSE(github.on_expiry);
  EXPECT_EQ(github.as, SecretDelivery::kEnv);
  EXPECT_EQ(github.mark, (SourceMark{"my.yaml", 3, 3}));
  const SecretRule& slack = s.at("SLACK_BOT_TOKEN");
  EXPECT_EQ(slack.env_name, "SLACK_TOKEN");
  EXPECT_EQ(slack.ttl_s, 8u * 3600);
  EXPECT_EQ(slack.on_expiry, ExpiryAction::kWarn);
  const SecretRule& aws = s.at("AWS_SESSION_TOKEN");
  EXPECT_EQ(aws.from, SecretSource::kCommand);
  EXPECT_EQ(aws.run, "aws sts get-session-token --output json");
  EXPECT_EQ(aws.json, "Credentials.SessionToken");
  EXPECT_EQ(aws.expires, "Credentials.Expiration");
  EXPECT_EQ(aws.on_expiry, ExpiryAction::kRefresh);
  EXPECT_FALSE(aws.timeout_ms);
  const SecretRule& cert = s.at("CERT");
  EXPECT_EQ(cert.from, SecretSource::kFile);
  EXPECT_EQ(cert.path.path, "~/.config/tool/token");
  EXPECT_EQ(cert.as, SecretDelivery::kFile);
  EXPECT_EQ(cert.ttl_s, 5400u);
  EXPECT_EQ(cert.revoke, "tool revoke");
  EXPECT_EQ(cert.timeout_ms, 5000u);
}

TEST(SecretsParseTest, SectionAndEntryShapes) {
  EXPECT_EQ(ParseError("version: 1\nsecrets: [A]\n"),
            "my.yaml:2:10: secrets: expected a mapping of variable names to entries like "
            "{from: env}");
  EXPECT_EQ(SecretError("TOKEN:"),
            "my.yaml:3:3: secrets.TOKEN: expected a mapping like {from: env}");
  EXPECT_THAT(SecretError("TOKEN: env"),
              HasSubstr("my.yaml:3:10: secrets.TOKEN: expected a mapping with keys: from, name"));
  EXPECT_EQ(SecretError("TOKEN: {}"),
            "my.yaml:3:10: secrets.TOKEN: missing required key 'from' (expected one of: env, "
            "file, command)");
  EXPECT_EQ(SecretError("TOKEN: {from: env, ttl: 1h, form: x}"),
            "my.yaml:3:31: unknown key 'form' in secrets.TOKEN (expected one of: from, name, "
            "path, run, json, expires, timeout, ttl, on_expiry, revoke, as)");
  EXPECT_EQ(ParseError("version: 1\nsecrets:\n  A: {from: env}\n  A: {from: env}\n"),
            "my.yaml:4:3: duplicate key 'A' in secrets");
}

TEST(SecretsParseTest, UnknownSourceActionAndDelivery) {
  EXPECT_EQ(SecretError("T: {from: vault}"),
            "my.yaml:3:13: secrets.T.from: 'vault': unknown secret source (expected one of: env, "
            "file, command)");
  EXPECT_EQ(SecretError("T: {from: env, ttl: 1h, on_expiry: explode}"),
            "my.yaml:3:38: secrets.T.on_expiry: 'explode': unknown expiry action (expected one "
            "of: refresh, kill, warn)");
  EXPECT_EQ(SecretError("T: {from: env, as: tmpfs}"),
            "my.yaml:3:22: secrets.T.as: 'tmpfs': unknown delivery (expected one of: env, file)");
}

TEST(SecretsParseTest, MissingSourceKeys) {
  EXPECT_EQ(SecretError("T: {from: command}"),
            "my.yaml:3:6: secrets.T: from: command needs 'run' (the command to run on the host)");
  EXPECT_EQ(SecretError("T: {from: file}"),
            "my.yaml:3:6: secrets.T: from: file needs 'path' (the file to read on the host)");
  EXPECT_EQ(SecretError("T: {from: command, run: \"  \"}"),
            "my.yaml:3:27: secrets.T.run: expected a shell command (run on the host with /bin/sh "
            "-c), got an empty command");
}

TEST(SecretsParseTest, KeysOfAnotherSource) {
  EXPECT_EQ(SecretError("T: {from: env, json: a.b}"),
            "my.yaml:3:24: secrets.T.json: only for from: command (this secret is from: env)");
  EXPECT_EQ(SecretError("T: {from: file, path: /x, expires: a}"),
            "my.yaml:3:38: secrets.T.expires: only for from: command (this secret is from: file)");
  EXPECT_EQ(SecretError("T: {from: command, run: x, name: Y}"),
            "my.yaml:3:36: secrets.T.name: only for from: env (this secret is from: command)");
  EXPECT_EQ(SecretError("T: {from: env, path: /x}"),
            "my.yaml:3:24: secrets.T.path: only for from: file (this secret is from: env)");
  EXPECT_EQ(SecretError("T: {from: env, run: x}"),
            "my.yaml:3:23: secrets.T.run: only for from: command (this secret is from: env)");
  EXPECT_EQ(SecretError("T: {from: env, timeout: 5s}"),
            "my.yaml:3:27: secrets.T.timeout: only for from: command or with revoke");
  EXPECT_EQ(SecretError("T: {from: env, timeout: 5s, revoke: x}"), "");
}

TEST(SecretsParseTest, BadDurations) {
  for (const char* bad : {"8x", "8", "1.5h", "-1h", "h", "30m1h", "1h1h", "1 h", "\"\""}) {
    std::string error =
        SecretError(std::string("T: {from: env, on_expiry: warn, ttl: ") + bad + "}");
    EXPECT_THAT(error, HasSubstr("secrets.T.ttl: ")) << bad;
  }
  EXPECT_EQ(SecretError("T: {from: env, on_expiry: warn, ttl: 8x}"),
            "my.yaml:3:40: secrets.T.ttl: '8x': unknown duration unit 'x' (expected d, h, m or "
            "s, e.g. 30s, 5m, 8h, 1h30m)");
  EXPECT_EQ(SecretError("T: {from: env, ttl: 0s}"),
            "my.yaml:3:23: secrets.T.ttl: expected a positive duration, got 0");
  EXPECT_EQ(SecretError("T: {from: command, run: x, timeout: [1]}"),
            "my.yaml:3:39: secrets.T.timeout: expected a positive duration (30s, 8h)");
}

TEST(SecretsParseTest, BadVariableNames) {
  EXPECT_EQ(SecretError("1TOKEN: {from: env}"),
            "my.yaml:3:3: secrets: '1TOKEN' is not a valid variable name (expected "
            "[A-Za-z_][A-Za-z0-9_]*)");
  EXPECT_EQ(SecretError("MY-TOKEN: {from: env}"),
            "my.yaml:3:3: secrets: 'MY-TOKEN' is not a valid variable name (expected "
            "[A-Za-z_][A-Za-z0-9_]*)");
  EXPECT_EQ(SecretError("T: {from: env, name: \"A=B\"}"),
            "my.yaml:3:24: secrets.T.name: 'A=B' is not a valid variable name (expected "
            "[A-Za-z_][A-Za-z0-9_]*)");
}

TEST(SecretsParseTest, LifetimeRules) {
  EXPECT_EQ(SecretError("T: {from: env, on_expiry: kill}"),
            "my.yaml:3:29: secrets.T.on_expiry: needs a lifetime: ttl");
  EXPECT_EQ(SecretError("T: {from: command, run: x, on_expiry: refresh}"),
            "my.yaml:3:41: secrets.T.on_expiry: needs a lifetime: ttl or expires");
  EXPECT_EQ(SecretError("T: {from: command, run: x, expires: a.b, on_expiry: refresh}"), "");
  EXPECT_THAT(SecretError("T: {from: env, ttl: 1h, on_expiry: refresh}"),
              HasSubstr("secrets.T.on_expiry: refresh needs a source that can give a new value"));
  EXPECT_EQ(SecretError("T: {from: command, run: x, json: .a}"),
            "my.yaml:3:36: secrets.T.json: '.a' is not a dotted field path (expected e.g. "
            "Credentials.SessionToken)");
  EXPECT_THAT(SecretError("T: {from: file, path: relative/x}"),
              HasSubstr("secrets.T.path: 'relative/x' is not absolute"));
}

TEST(DurationTest, ParsesAndFormats) {
  EXPECT_EQ(*ParseDuration("30s"), 30u);
  EXPECT_EQ(*ParseDuration("5m"), 300u);
  EXPECT_EQ(*ParseDuration("8h"), 28800u);
  EXPECT_EQ(*ParseDuration("1h30m"), 5400u);
  EXPECT_EQ(*ParseDuration("2d12h"), 216000u);
  EXPECT_EQ(*ParseDuration("1h0m5s"), 3605u);
  EXPECT_EQ(*ParseDuration("90m"), 5400u);
  EXPECT_EQ(*ParseDuration("0s"), 0u);
  EXPECT_EQ(FormatDuration(5400), "1h30m");
  EXPECT_EQ(FormatDuration(3605), "1h5s");
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(86400 + 61), "1d1m1s");
  for (uint64_t s : {1u, 59u, 60u, 3599u, 86399u, 1000000u}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(s)), s);
  }
  EXPECT_EQ(ParseDuration("30").error().message,
            "'30': a number needs a unit (expected d, h, m or s, e.g. 30s, 5m, 8h, 1h30m)");
  EXPECT_EQ(ParseDuration("1.5h").error().message,
            "'1.5h': fractions are not supported; use a smaller unit (90m)");
  EXPECT_EQ(ParseDuration("30m1h").error().message,
            "'30m1h': units go largest first, each once (1h30m, not 30m1h)");
  EXPECT_FALSE(ParseDuration("9999999999s").ok());
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("1H").ok());
}

TEST(SecretsMergeTest, DerivedEntryReplacesTheBaseEntryWhole) {
  std::string dir = ::testing::TempDir() + "/gander-secrets-merge";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/base.yaml")
      << "version: 1\nsecrets:\n  A: {from: env, ttl: 1h, on_expiry: warn}\n  B: {from: env}\n";
  std::ofstream(dir + "/derived.yaml")
      << "version: 1\nextends: base.yaml\nsecrets:\n  A: {from: env, name: OTHER}\n";
  Result<Policy> leaf = LoadPolicyFile(dir + "/derived.yaml");
  ASSERT_TRUE(leaf.ok()) << leaf.error().Describe();
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_TRUE(merged.ok()) << merged.error().Describe();
  ASSERT_EQ(merged->secrets.size(), 2u);
  EXPECT_EQ(merged->secrets.at("A").env_name, "OTHER");
  EXPECT_FALSE(merged->secrets.at("A").ttl_s) << "the base's ttl must not leak into the entry";
  EXPECT_TRUE(merged->secrets.contains("B"));
}

TEST(SecretsExpandTest, ExpandsFilePathsAndRejectsDoubleSources) {
  ExpansionContext ctx{"/ws", "/home/u", {{"TOKENS", "/srv/tokens"}}};
  Policy p = *ParsePolicy(
      "version: 1\nsecrets:\n  A: {from: file, path: ~/t}\n  B: {from: file, path: "
      "\"${TOKENS}/b\", as: file}\n",
      "my.yaml");
  Result<ExpandedPolicy> e = Expand(p, ctx);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->secrets.at("A").path.path, "/home/u/t");
  EXPECT_EQ(e->secrets.at("B").path.path, "/srv/tokens/b");

  Policy unset =
      *ParsePolicy("version: 1\nsecrets:\n  A: {from: file, path: \"${NOPE}/t\"}\n", "my.yaml");
  EXPECT_EQ(Expand(unset, ctx).error().message,
            "my.yaml:3:3: secrets.A.path: undefined variable ${NOPE} in '${NOPE}/t'");

  Policy twice =
      *ParsePolicy("version: 1\nenv: {pass: [A]}\nsecrets:\n  A: {from: env}\n", "my.yaml");
  EXPECT_EQ(Expand(twice, ctx).error().message,
            "my.yaml:4:3: secrets.A: the variable A is also in env.pass (a variable comes from "
            "one place)");
  Policy file_name = *ParsePolicy(
      "version: 1\nenv: {set: {A_FILE: x}}\nsecrets:\n  A: {from: env, as: file}\n", "my.yaml");
  EXPECT_THAT(Expand(file_name, ctx).error().message,
              HasSubstr("secrets.A: the variable A_FILE is also in env.set"));
}

TEST(SecretsFingerprintTest, RulesChangeTheFingerprintValuesDoNot) {
  ExpandedPolicy a;
  ExpandedPolicy b = a;
  b.secrets["T"] = SecretRule{};
  EXPECT_NE(PolicySha256(a), PolicySha256(b));
  EXPECT_THAT(CanonicalText(b), HasSubstr("secret T from=env"));
}

}  // namespace
}  // namespace gander::policies
