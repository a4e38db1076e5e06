// Variable and ~ expansion, path normalisation (policies/expand.h).
#include "policies/expand.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policies/parser.h"
#include "tests/unit/expect_table.h"

namespace gander::policies {
namespace {

using gander::unit::ExpectMaps;

using ::testing::ElementsAre;

ExpansionContext Context() {
  ExpansionContext ctx;
  ctx.workspace = "/work/ws";
  ctx.home = "/home/ada";
  ctx.environ = {{"NODE_PREFIX", "/opt/node"}, {"WORKSPACE", "/not/this/one"},
                 {"HOME", "/nor/this"},        {"EMPTY", ""},
                 {"RELATIVE", "rel/dir"},      {"DOLLAR", "/a/${NOT_EXPANDED}"}};
  return ctx;
}

Policy Parse(std::string_view yaml) {
  Result<Policy> policy = ParsePolicy(yaml, "my.yaml");
  EXPECT_TRUE(policy.ok()) << policy.error().message;
  return policy.ok() ? *policy : Policy{};
}

// The error Expand reports for the policy `yaml`, or "" if it expanded.
std::string ExpandError(std::string_view yaml) {
  Result<ExpandedPolicy> expanded = Expand(Parse(yaml), Context());
  return expanded.ok() ? "" : expanded.error().message;
}

TEST(ExpandTest, SubstitutesVariablesAndTilde) {
  Result<ExpandedPolicy> expanded = Expand(Parse(R"(version: 1
filesystem:
  read: ["${NODE_PREFIX}/lib", "~", "~/.config/x", "/cost$$/x", "${DOLLAR}"]
  exec: ["${WORKSPACE}/bin", "${HOME}/bin", "~/${NODE_PREFIX}"]
  write: ["${WORKSPACE}"]
  private: [/tmp]
  deny: [~/.ssh]
env:
  pass: [PATH]
  set: {CACHE: "${HOME}/.cache", PRICE: "$$5", PLAIN: x, EMPTY_OK: ""}
)"),
                                           Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  const ExpandedPolicy& e = *expanded;
  // ctx.workspace and ctx.home win over WORKSPACE and HOME in the environment; substituted
  // values are not expanded again.
  EXPECT_THAT(e.read, ElementsAre("/opt/node/lib", "/home/ada", "/home/ada/.config/x", "/cost$/x",
                                  "/a/${NOT_EXPANDED}"));
  EXPECT_THAT(e.exec, ElementsAre("/work/ws/bin", "/home/ada/bin", "/home/ada/opt/node"));
  EXPECT_THAT(e.write, ElementsAre("/work/ws"));
  EXPECT_THAT(e.private_, ElementsAre("/tmp"));
  EXPECT_THAT(e.deny, ElementsAre("/home/ada/.ssh"));
  EXPECT_THAT(e.env_pass, ElementsAre("PATH"));
  EXPECT_EQ(e.env_set,
            (std::map<std::string, std::string>{
                {"CACHE", "/home/ada/.cache"}, {"PRICE", "$5"}, {"PLAIN", "x"}, {"EMPTY_OK", ""}}));
  EXPECT_THAT(e.sources, ElementsAre("my.yaml"));
}

TEST(ExpandTest, NormalisesAndDeduplicatesPaths) {
  Result<ExpandedPolicy> expanded = Expand(Parse(R"(version: 1
filesystem:
  read: ["//usr//lib/", /usr/./lib, /usr/share/../lib, "${WORKSPACE}/./src/", /.., "/a/../../b"]
)"),
                                           Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_THAT(expanded->read, ElementsAre("/usr/lib", "/work/ws/src", "/", "/b"));
}

TEST(ExpandTest, CopiesLimitsNetworkAndSources) {
  Policy policy = Parse(R"(version: 1
limits: {processes: 7, memory: 1GiB}
network:
  allow: [{host: a.com, ports: [443]}]
  deny: [{host: 10.0.0.0/8}]
)");
  policy.chain = {"my.yaml", "profile:default"};
  Result<ExpandedPolicy> expanded = Expand(policy, Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_TRUE(expanded->limits == policy.limits);
  EXPECT_TRUE(expanded->network == policy.network);
  EXPECT_THAT(expanded->sources, ElementsAre("my.yaml", "profile:default"));
}

TEST(ExpandTest, UndefinedVariableNamesEntryAndVariable) {
  EXPECT_EQ(ExpandError("version: 1\nfilesystem:\n  read: [/ok, \"${NOPE}/x\"]\n"),
            "my.yaml:3:15: filesystem.read: undefined variable ${NOPE} in '${NOPE}/x'");
  // Empty counts as undefined: "${EMPTY}/" must never become "/".
  EXPECT_EQ(ExpandError("version: 1\nfilesystem:\n  write: [\"${EMPTY}/\"]\n"),
            "my.yaml:3:11: filesystem.write: undefined variable ${EMPTY} in '${EMPTY}/'");
  EXPECT_EQ(ExpandError("version: 1\nenv:\n  set:\n    TOKEN: \"${NOPE}\"\n"),
            "my.yaml:4:12: env.set.TOKEN: undefined variable ${NOPE} in '${NOPE}'");
}

TEST(ExpandTest, PathsMustEndUpAbsolute) {
  EXPECT_EQ(ExpandError("version: 1\nfilesystem:\n  deny: [\"${RELATIVE}/x\"]\n"),
            "my.yaml:3:10: filesystem.deny: 'rel/dir/x' is not an absolute path (expanded from "
            "'${RELATIVE}/x')");
  // Built by hand, not parsed: the parser would already refuse these.
  Policy policy;
  policy.filesystem.exec = {{"bin", {"hand.yaml", 9, 4}}};
  Result<ExpandedPolicy> expanded = Expand(policy, Context());
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.error().message,
            "hand.yaml:9:4: filesystem.exec: 'bin' is not an absolute path");
  policy.filesystem.exec = {{"~bob", {"hand.yaml", 9, 4}}};
  expanded = Expand(policy, Context());
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.error().message,
            "hand.yaml:9:4: filesystem.exec: '~bob': ~user paths are not supported (use ~/ or "
            "${HOME})");
}

TEST(ExpandTest, UnknownHomeOrWorkspace) {
  ExpansionContext ctx;
  Result<ExpandedPolicy> expanded =
      Expand(Parse("version: 1\nfilesystem:\n  deny: [~/.ssh]\n"), ctx);
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.error().message,
            "my.yaml:3:10: filesystem.deny: '~/.ssh' uses ~ but the home directory is unknown");
  expanded = Expand(Parse("version: 1\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n"), ctx);
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.error().message,
            "my.yaml:3:11: filesystem.write: undefined variable ${WORKSPACE} in '${WORKSPACE}'");
}

TEST(ExpandTest, MonitorDefaultsWhenAbsent) {
  Result<ExpandedPolicy> expanded = Expand(Parse("version: 1\n"), Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_EQ(expanded->files, FilesMonitoring::kOpens);
  EXPECT_FALSE(expanded->audit_log.has_value());
  EXPECT_EQ(expanded->audit_log_max_size, 16ULL << 20);
  EXPECT_EQ(expanded->audit_log_files, 4);
  // An empty section, or one that sets only some fields, leaves the rest at their defaults.
  expanded = Expand(Parse("version: 1\nmonitor: {}\n"), Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_EQ(expanded->files, FilesMonitoring::kOpens);
  expanded = Expand(Parse("version: 1\nmonitor: {audit_log_files: 2}\n"), Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_EQ(expanded->files, FilesMonitoring::kOpens);
  EXPECT_EQ(expanded->audit_log_max_size, 16ULL << 20);
  EXPECT_EQ(expanded->audit_log_files, 2);
}

TEST(ExpandTest, MonitorValuesAreCopied) {
  Result<ExpandedPolicy> expanded = Expand(Parse(R"(version: 1
monitor: {files: all, audit_log_max_size: 1GiB, audit_log_files: 1000}
)"),
                                           Context());
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_EQ(expanded->files, FilesMonitoring::kAll);
  EXPECT_EQ(expanded->audit_log_max_size, 1ULL << 30);
  EXPECT_EQ(expanded->audit_log_files, 1000);
}

TEST(ExpandTest, AuditLogIsExpandedLikeAPath) {
  struct Case {
    const char* written;
    const char* expanded;
  };
  for (const Case& c :
       {Case{"~/.local/state/gander/audit.jsonl", "/home/ada/.local/state/gander/audit.jsonl"},
        Case{"${HOME}/.local//state/./audit.jsonl", "/home/ada/.local/state/audit.jsonl"},
        Case{"${NODE_PREFIX}/../log/node.jsonl", "/opt/log/node.jsonl"},
        Case{"${WORKSPACE}/audit-$$.jsonl", "/work/ws/audit-$.jsonl"},
        Case{"/var/log/gander/audit.jsonl", "/var/log/gander/audit.jsonl"}}) {
    Result<ExpandedPolicy> expanded =
        Expand(Parse("version: 1\nmonitor:\n  audit_log: \"" + std::string(c.written) + "\"\n"),
               Context());
    ASSERT_TRUE(expanded.ok()) << c.written << ": " << expanded.error().message;
    EXPECT_EQ(expanded->audit_log, c.expanded) << c.written;
  }
}

TEST(ExpandTest, AuditLogErrorsNameTheEntry) {
  EXPECT_EQ(ExpandError("version: 1\nmonitor:\n  audit_log: \"${NAME}.jsonl\"\n"),
            "my.yaml:3:14: monitor.audit_log: undefined variable ${NAME} in '${NAME}.jsonl'");
  EXPECT_EQ(ExpandError("version: 1\nmonitor:\n  audit_log: \"${RELATIVE}/a.jsonl\"\n"),
            "my.yaml:3:14: monitor.audit_log: 'rel/dir/a.jsonl' is not an absolute path "
            "(expanded from '${RELATIVE}/a.jsonl')");
  Result<ExpandedPolicy> expanded =
      Expand(Parse("version: 1\nmonitor: {audit_log: ~/a.jsonl}\n"), ExpansionContext{});
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.error().message,
            "my.yaml:2:22: monitor.audit_log: '~/a.jsonl' uses ~ but the home directory is "
            "unknown");
}

TEST(ExpandTest, AuditLogFilesOutOfRangeIsRefused) {
  // Built by hand, not parsed: the parser would already refuse these.
  Policy policy;
  policy.source = "hand.yaml";
  policy.monitor.audit_log_files = 1001;
  Result<ExpandedPolicy> expanded = Expand(policy, Context());
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.error().message,
            "hand.yaml: monitor.audit_log_files: expected 1 to 1000, got 1001");
  policy.monitor.audit_log_files = 0;
  EXPECT_FALSE(Expand(policy, Context()).ok());
}

TEST(ExpandTest, RefusesUnresolvedExtends) {
  EXPECT_EQ(ExpandError("version: 1\nextends: default\n"),
            "my.yaml:2:10: policy still extends 'default'; resolve extends before expanding");
}

TEST(ExpandVariablesTest, Syntax) {
  ExpansionContext ctx = Context();
  EXPECT_EQ(*ExpandVariables("", ctx), "");
  EXPECT_EQ(*ExpandVariables("plain", ctx), "plain");
  EXPECT_EQ(*ExpandVariables("$$$$", ctx), "$$");
  EXPECT_EQ(*ExpandVariables("$${HOME}", ctx), "${HOME}");
  EXPECT_EQ(*ExpandVariables("${NODE_PREFIX}${NODE_PREFIX}", ctx), "/opt/node/opt/node");
  EXPECT_FALSE(ExpandVariables("$", ctx).ok());
  EXPECT_FALSE(ExpandVariables("${", ctx).ok());
  EXPECT_FALSE(ExpandVariables("${A-B}", ctx).ok());
  EXPECT_TRUE(CheckVariableSyntax("${ANYTHING}/$$").ok());
  EXPECT_FALSE(CheckVariableSyntax("$x").ok());
}

TEST(NormalizePathTest, IsPurelyLexical) {
  ExpectMaps(NormalizePath, {{"/", "/"},
                             {"//", "/"},
                             {"/a/b/", "/a/b"},
                             {"/a//b/./c/.", "/a/b/c"},
                             {"/a/b/../../..", "/"},
                             {"/../etc", "/etc"},
                             {"/a/.../b", "/a/.../b"},
                             {"/a/..b/c..", "/a/..b/c.."}});
}

}  // namespace
}  // namespace gander::policies
