// Parsing and validating one policy document, and writing it back (policies/parser.h).
#include "policies/parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "policies/loader.h"
#include "tests/unit/expect_table.h"

namespace gander::policies {
namespace {

using gander::unit::ExpectMaps;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDataDir = GANDER_TEST_DATA_DIR;

// The error ParsePolicy reports for `yaml` (named my.yaml), or "" if it parsed.
std::string ParseError(std::string_view yaml) {
  Result<Policy> policy = ParsePolicy(yaml, "my.yaml");
  if (policy.ok()) return "";
  EXPECT_EQ(policy.error().code, 0);
  return policy.error().message;
}

std::vector<std::string> Paths(const std::vector<PathEntry>& entries) {
  std::vector<std::string> out;
  for (const PathEntry& entry : entries) out.push_back(entry.path);
  return out;
}

TEST(ParsePolicyTest, ParsesEveryKey) {
  Result<Policy> policy = LoadPolicyFile(kDataDir + "/full.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().Describe();
  const Policy& p = *policy;
  EXPECT_EQ(p.version, 1);
  EXPECT_EQ(p.extends, "default");
  EXPECT_EQ(p.extends_mark, (SourceMark{kDataDir + "/full.yaml", 3, 10}));
  EXPECT_EQ(p.source, kDataDir + "/full.yaml");
  EXPECT_THAT(p.chain, ElementsAre(kDataDir + "/full.yaml"));

  EXPECT_THAT(Paths(p.filesystem.read), ElementsAre("/etc/ssl/certs", "${NODE_PREFIX}/lib"));
  EXPECT_THAT(Paths(p.filesystem.exec), ElementsAre("/opt/node/bin"));
  EXPECT_THAT(Paths(p.filesystem.write), ElementsAre("${WORKSPACE}", "~/.cache/npm"));
  EXPECT_THAT(Paths(p.filesystem.private_), ElementsAre("/var/tmp"));
  EXPECT_THAT(Paths(p.filesystem.deny), ElementsAre("~/.ssh"));
  EXPECT_EQ(p.filesystem.read[0].mark, (SourceMark{kDataDir + "/full.yaml", 5, 10}));
  EXPECT_EQ(p.filesystem.read[1].mark, (SourceMark{kDataDir + "/full.yaml", 5, 26}));
  EXPECT_EQ(p.filesystem.exec[0].mark, (SourceMark{kDataDir + "/full.yaml", 7, 7}));

  EXPECT_THAT(p.env.pass, ElementsAre("PATH", "NODE_OPTIONS"));
  EXPECT_EQ(p.env.set, (std::map<std::string, std::string>{{"NODE_ENV", "production"},
                                                           {"CACHE_DIR", "${HOME}/.cache"}}));
  EXPECT_EQ(p.env.set_marks.at("NODE_ENV"), (SourceMark{kDataDir + "/full.yaml", 14, 15}));

  EXPECT_EQ(p.limits.processes, 256u);
  EXPECT_EQ(p.limits.open_files, 1024u);
  EXPECT_EQ(p.limits.file_size, 100u << 20);
  EXPECT_EQ(p.limits.memory, 1u << 30);
  EXPECT_EQ(p.limits.core_dumps, true);

  ASSERT_EQ(p.network.allow.size(), 2u);
  EXPECT_EQ(p.network.allow[0].host, "api.github.com");
  EXPECT_THAT(p.network.allow[0].ports, ElementsAre(443));
  EXPECT_EQ(p.network.allow[0].mark, (SourceMark{kDataDir + "/full.yaml", 24, 7}));
  EXPECT_EQ(p.network.allow[1].host, "*.npmjs.org");
  EXPECT_THAT(p.network.allow[1].ports, ElementsAre(443, 80));
  EXPECT_EQ(p.network.allow[1].mark, (SourceMark{kDataDir + "/full.yaml", 26, 7}));
  ASSERT_EQ(p.network.deny.size(), 2u);
  EXPECT_EQ(p.network.deny[0].host, "169.254.169.254");
  EXPECT_TRUE(p.network.deny[0].ports.empty());
  EXPECT_EQ(p.network.deny[1].host, "10.0.0.0/8");
  EXPECT_THAT(p.network.deny[1].ports, ElementsAre(22));

  EXPECT_EQ(p.monitor.files, FilesMonitoring::kAll);
  ASSERT_TRUE(p.monitor.audit_log.has_value());
  EXPECT_EQ(p.monitor.audit_log->path, "~/.local/state/gander/audit/${NODE_PREFIX}.jsonl");
  EXPECT_EQ(p.monitor.audit_log->mark, (SourceMark{kDataDir + "/full.yaml", 33, 14}));
  EXPECT_EQ(p.monitor.audit_log_max_size, 1ULL << 30);
  EXPECT_EQ(p.monitor.audit_log_files, 9u);
}

TEST(ParsePolicyTest, MonitorFieldsAreOptional) {
  Result<Policy> policy = ParsePolicy("version: 1\nmonitor: {files: \"off\"}\n", "my.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->monitor, (MonitorRules{FilesMonitoring::kOff, {}, {}, {}, {}}));
  policy = ParsePolicy("version: 1\nmonitor:\n  files: off\n  audit_log_files: 1000\n", "my.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->monitor.files, FilesMonitoring::kOff);  // plain `off` is the word, not false
  EXPECT_EQ(policy->monitor.audit_log_files, 1000u);
  EXPECT_FALSE(policy->monitor.audit_log.has_value());
  EXPECT_FALSE(policy->monitor.audit_log_max_size.has_value());
}

TEST(ParsePolicyTest, MinimalPolicyHasNothingSet) {
  Result<Policy> policy = ParsePolicy("version: 1\n", "min.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  Policy expected;
  expected.source = "min.yaml";
  expected.chain = {"min.yaml"};
  EXPECT_TRUE(*policy == expected);
}

TEST(ParsePolicyTest, EmptySectionsAreAccepted) {
  EXPECT_EQ(ParseError("version: 1\nfilesystem: {read: []}\nenv: {set: {}}\nlimits: {}\n"
                       "network: {allow: [], deny: []}\nmonitor: {}\n"),
            "");
}

TEST(ParsePolicyErrorTest, EmptyDocument) {
  const std::string expected =
      "my.yaml:1:1: empty policy (expected a mapping starting with "
      "'version: 1')";
  ExpectMaps(ParseError,
             {{"", expected}, {"# nothing but a comment\n", expected}, {"---\n", expected}});
}

TEST(ParsePolicyErrorTest, NotAMapping) {
  EXPECT_EQ(ParseError("- version\n"),
            "my.yaml:1:1: expected a mapping of policy keys (version, extends, filesystem, env, "
            "limits, network, monitor, secrets, backend, install, syscalls)");
}

TEST(ParsePolicyErrorTest, SyntaxErrorHasItsPosition) {
  EXPECT_EQ(ParseError("version: 1\nfilesystem:\n  read: [/usr\n  write: [/tmp]\n"),
            "my.yaml:4:8: YAML syntax error: end of sequence flow not found");
  EXPECT_THAT(ParseError("version: 1\n  bad indent: x\n"),
              StartsWith("my.yaml:2:13: YAML syntax error: "));
}

// Inputs on which yaml-cpp 0.7's LoadAll loops forever, allocating (jbeder/yaml-cpp#1040),
// and others known to have hung yaml-cpp parsers: each must end with an error, quickly.
TEST(ParsePolicyErrorTest, InputsThatHangYamlCpp) {
  ExpectMaps(ParseError, {{",", "my.yaml:1:1: YAML syntax error: unexpected character"},
                          {",version: 1\n", "my.yaml:1:1: YAML syntax error: unexpected character"},
                          {"\n  ,\n", "my.yaml:2:3: YAML syntax error: unexpected character"}});
  for (const char* yaml :
       {"version: 1\n---\n,\n", "[:", "{:", "{# ke\ny{:", "- !+(.,.)", "version: 1\n, a: b\n"}) {
    EXPECT_NE(ParseError(yaml), "") << yaml;
  }
}

TEST(ParsePolicyErrorTest, SecondDocument) {
  ExpectMaps(ParseError, {{"version: 1\n---\nversion: 1\n",
                           "my.yaml:2:1: a policy file holds one YAML document, found a second"},
                          {"version: 1\n...\nversion: 1\n",
                           "my.yaml:3:1: a policy file holds one YAML document, found a second"},
                          {"--- # a comment\nversion: 1\n--- \nversion: 1\n",
                           "my.yaml:3:1: a policy file holds one YAML document, found a second"}});
  // Junk after a flow mapping ends the first document: the second pass must see it.
  EXPECT_NE(ParseError("{version: 1} ,\n"), "");
  EXPECT_NE(ParseError("{version: 1}\n]\n"), "");
}

TEST(ParsePolicyErrorTest, Version) {
  ExpectMaps(
      ParseError,
      {{"filesystem: {}\n",
        "my.yaml:1:1: missing required key 'version' in policy (expected 'version: 1')"},
       {"version: 2\n", "my.yaml:1:10: version: unsupported policy version '2' (expected 1)"},
       {"version: \"1\"\n", "my.yaml:1:10: version: unsupported policy version '1' (expected 1)"},
       {"version:\n", "my.yaml:1:1: version: expected 1"}});
}

// Issue 16 item 4: the private tmpfs bounds, parsed strictly like the other limits.
TEST(ParsePolicyErrorTest, TmpfsBoundsAreStrict) {
  EXPECT_NE(ParseError("version: 1\nlimits: {tmpfs_size: lots}\n").find("my.yaml:2:22:"),
            std::string::npos)
      << ParseError("version: 1\nlimits: {tmpfs_size: lots}\n");
  EXPECT_NE(ParseError("version: 1\nlimits: {tmpfs_inodes: -1}\n").find("my.yaml:2:24:"),
            std::string::npos)
      << ParseError("version: 1\nlimits: {tmpfs_inodes: -1}\n");
}

TEST(ParsePolicyErrorTest, UnknownKeysAtEveryLevel) {
  ExpectMaps(ParseError,
             {{"version: 1\nfilesytem: {}\n",
               "my.yaml:2:1: unknown key 'filesytem' in policy (expected one of: version, extends, "
               "filesystem, env, limits, network, monitor, secrets, backend, install, syscalls)"},
              {"version: 1\nfilesystem:\n  reed: [/usr]\n",
               "my.yaml:3:3: unknown key 'reed' in filesystem (expected one of: read, exec, write, "
               "private, deny)"},
              {"version: 1\nenv: {passs: [A]}\n",
               "my.yaml:2:7: unknown key 'passs' in env (expected one of: pass, set)"},
              {"version: 1\nlimits:\n  memroy: 1GiB\n",
               "my.yaml:3:3: unknown key 'memroy' in limits (expected one of: processes, "
               "open_files, file_size, memory, tmpfs_size, tmpfs_inodes, core_dumps)"}});
  EXPECT_EQ(
      ParseError("version: 1\nnetwork:\n  allowed: []\n"),
      "my.yaml:3:3: unknown key 'allowed' in network (expected one of: allow, deny, deny_errno)");
  EXPECT_EQ(ParseError("version: 1\nnetwork:\n  allow:\n    - host: a.com\n      port: [1]\n"),
            "my.yaml:5:7: unknown key 'port' in network.allow[0] (expected one of: host, ports, "
            "protocol)");
  EXPECT_EQ(ParseError("version: 1\nmonitor:\n  files: all\n  auditlog: /x\n"),
            "my.yaml:4:3: unknown key 'auditlog' in monitor (expected one of: files, audit_log, "
            "audit_log_max_size, audit_log_files, osv_endpoint)");
  // Keys that only exist in later designs are unknown too.
  EXPECT_THAT(ParseError("version: 1\nhooks: {}\n"),
              StartsWith("my.yaml:2:1: unknown key 'hooks' in policy"));
}

TEST(ParsePolicyErrorTest, DuplicateAndNonScalarKeys) {
  ExpectMaps(
      ParseError,
      {{"version: 1\nversion: 1\n", "my.yaml:2:1: duplicate key 'version' in policy"},
       {"version: 1\nfilesystem:\n  read: []\n  read: []\n",
        "my.yaml:4:3: duplicate key 'read' in filesystem"},
       {"version: 1\nenv:\n  set: {A: x, A: y}\n", "my.yaml:3:15: duplicate key 'A' in env.set"},
       {"version: 1\n[a]: 1\n", "my.yaml:2:1: policy: expected a key name"}});
}

TEST(ParsePolicyErrorTest, SectionTypes) {
  EXPECT_EQ(ParseError("version: 1\nfilesystem: [/usr]\n"),
            "my.yaml:2:13: filesystem: expected a mapping with keys: read, exec, write, private, "
            "deny");
  // A missing value is reported at its key, not at whatever follows it.
  ExpectMaps(ParseError,
             {{"version: 1\nfilesystem:\nenv: {}\n",
               "my.yaml:2:1: filesystem: expected a mapping with keys: read, exec, write, private, "
               "deny"},
              {"version: 1\nlimits: 5\n",
               "my.yaml:2:9: limits: expected a mapping with keys: processes, open_files, "
               "file_size, memory, tmpfs_size, tmpfs_inodes, core_dumps"},
              {"version: 1\nmonitor: opens\n",
               "my.yaml:2:10: monitor: expected a mapping with keys: files, audit_log, "
               "audit_log_max_size, audit_log_files, osv_endpoint"},
              {"version: 1\nmonitor:\n",
               "my.yaml:2:1: monitor: expected a mapping with keys: files, audit_log, "
               "audit_log_max_size, audit_log_files, osv_endpoint"}});
}

TEST(ParsePolicyErrorTest, PathLists) {
  ExpectMaps(ParseError,
             {{"version: 1\nfilesystem:\n  read: /usr\n",
               "my.yaml:3:9: filesystem.read: expected a list of path strings"},
              {"version: 1\nfilesystem:\n  read:\n  exec: []\n",
               "my.yaml:3:3: filesystem.read: expected a list of path strings"},
              {"version: 1\nfilesystem:\n  exec: [/usr, {a: b}]\n",
               "my.yaml:3:16: filesystem.exec[1]: expected a path string"},
              {"version: 1\nfilesystem:\n  deny: [~]\n",
               "my.yaml:3:10: filesystem.deny[0]: expected a path string (a bare ~ is YAML null; "
               "write \"~\" or ~/...)"},
              {"version: 1\nfilesystem:\n  write: [\"\"]\n",
               "my.yaml:3:11: filesystem.write[0]: empty path"},
              {"version: 1\nfilesystem:\n  read: [usr/lib]\n",
               "my.yaml:3:10: filesystem.read[0]: 'usr/lib' is not absolute (expected /..., ~/... "
               "or ${VAR}/...)"},
              {"version: 1\nfilesystem:\n  private: [~bob/x]\n",
               "my.yaml:3:13: filesystem.private[0]: '~bob/x': ~user paths are not supported (use "
               "~/ or ${HOME})"},
              {"version: 1\nfilesystem:\n  read: [\"/a\\0b\"]\n",
               "my.yaml:3:10: filesystem.read[0]: contains a NUL character"}});
}

TEST(ParsePolicyErrorTest, VariableSyntaxIsCheckedWhenParsing) {
  ExpectMaps(ParseError,
             {{"version: 1\nfilesystem:\n  read: [\"${WORKSPACE\"]\n",
               "my.yaml:3:10: filesystem.read[0]: unterminated '${' in '${WORKSPACE'"},
              {"version: 1\nfilesystem:\n  read: [\"/a/$HOME\"]\n",
               "my.yaml:3:10: filesystem.read[0]: a lone '$' in '/a/$HOME' (write ${NAME} for a "
               "variable or $$ for a literal $)"},
              {"version: 1\nfilesystem:\n  read: [\"${1X}/a\"]\n",
               "my.yaml:3:10: filesystem.read[0]: invalid variable name '${1X}' in '${1X}/a' "
               "(expected [A-Za-z_][A-Za-z0-9_]*)"},
              {"version: 1\nenv:\n  set: {A: \"${}\"}\n",
               "my.yaml:3:12: env.set.A: invalid variable name '${}' in '${}' (expected "
               "[A-Za-z_][A-Za-z0-9_]*)"},
              {"version: 1\nfilesystem:\n  read: [\"/cost$$/x\"]\n", ""}});
}

TEST(ParsePolicyErrorTest, Extends) {
  ExpectMaps(ParseError,
             {{"version: 1\nextends: [a]\n",
               "my.yaml:2:10: extends: expected a profile name or a path to a .yaml file"},
              {"version: 1\nextends: my profile\n",
               "my.yaml:2:10: extends: 'my profile' is neither a profile name ([A-Za-z0-9_-]+) nor "
               "a path (containing '/' or ending in .yaml)"},
              {"version: 1\nextends: node-20_x\n", ""},
              {"version: 1\nextends: base.yaml\n", ""},
              {"version: 1\nextends: ../x/base\n", ""}});
}

TEST(ParsePolicyErrorTest, Env) {
  ExpectMaps(
      ParseError,
      {{"version: 1\nenv:\n  pass: PATH\n",
        "my.yaml:3:9: env.pass: expected a list of variable names"},
       {"version: 1\nenv:\n  pass: [PATH, NODE-OPTIONS]\n",
        "my.yaml:3:16: env.pass[1]: 'NODE-OPTIONS' is not a valid variable name (expected "
        "[A-Za-z_][A-Za-z0-9_]*)"},
       {"version: 1\nenv:\n  pass: [[A]]\n", "my.yaml:3:10: env.pass[0]: expected a variable name"},
       {"version: 1\nenv:\n  set: [A=1]\n",
        "my.yaml:3:8: env.set: expected a mapping of variable names to strings"},
       {"version: 1\nenv:\n  set:\n    9LIVES: x\n",
        "my.yaml:4:5: env.set: '9LIVES' is not a valid variable name (expected "
        "[A-Za-z_][A-Za-z0-9_]*)"},
       {"version: 1\nenv:\n  set:\n    A: [1, 2]\n",
        "my.yaml:4:8: env.set.A: expected a string (write \"\" for an empty value)"},
       {"version: 1\nenv:\n  set:\n    A:\n    B: x\n",
        "my.yaml:4:5: env.set.A: expected a string (write \"\" for an empty value)"},
       {"version: 1\nenv:\n  set:\n    A: \"\"\n    B: 42\n", ""}});
}

TEST(ParsePolicyErrorTest, Limits) {
  ExpectMaps(
      ParseError,
      {{"version: 1\nlimits: {processes: 0}\n",
        "my.yaml:2:21: limits.processes: expected a positive integer, got '0'"},
       {"version: 1\nlimits: {processes: -5}\n",
        "my.yaml:2:21: limits.processes: expected a positive integer, got '-5'"},
       {"version: 1\nlimits: {open_files: \"64\"}\n",
        "my.yaml:2:22: limits.open_files: expected a positive integer, got '64'"},
       {"version: 1\nlimits: {open_files: 1.5}\n",
        "my.yaml:2:22: limits.open_files: expected a positive integer, got '1.5'"},
       {"version: 1\nlimits: {processes: 99999999999999999999999}\n",
        "my.yaml:2:21: limits.processes: expected a positive integer, got "
        "'99999999999999999999999'"},
       {"version: 1\nlimits: {processes: [1]}\n",
        "my.yaml:2:21: limits.processes: expected a positive integer"},
       {"version: 1\nlimits:\n  memory: 12XB\n",
        "my.yaml:3:11: limits.memory: '12XB': unknown unit 'XB' (expected B, KiB, MiB, GiB, "
        "TiB, or K, M, G, T for the same)"},
       {"version: 1\nlimits:\n  file_size: 0MiB\n",
        "my.yaml:3:14: limits.file_size: expected a positive size (bytes, or a number with a "
        "unit: 64MiB, 1GiB), got 0"},
       {"version: 1\nlimits:\n  core_dumps: yes\n",
        "my.yaml:3:15: limits.core_dumps: expected true or false"}});
}

TEST(ParsePolicyTest, OsvEndpoint) {
  auto policy =
      ParsePolicy("version: 1\nmonitor: {osv_endpoint: \"http://127.0.0.1:8080\"}\n", "my.yaml");
  ASSERT_TRUE(policy) << policy.error().message;
  EXPECT_EQ(policy->monitor.osv_endpoint, "http://127.0.0.1:8080");
  EXPECT_EQ(ParseError("version: 1\nmonitor: {osv_endpoint: api.osv.dev}\n"),
            "my.yaml:2:25: monitor.osv_endpoint: expected an http:// or https:// URL, or off, "
            "got 'api.osv.dev'");
}

TEST(ParsePolicyTest, InstallPhase) {
  EXPECT_FALSE(ParsePolicy("version: 1\n", "my.yaml")->install);
  EXPECT_EQ(ParsePolicy("version: 1\ninstall: auto\n", "my.yaml")->install, true);
  auto off = ParsePolicy("version: 1\ninstall: off\n", "my.yaml");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_EQ(off->install, false);
  EXPECT_NE(ToYaml(*off).find("install: off"), std::string::npos);
  EXPECT_EQ(ParsePolicy(ToYaml(*off), "again.yaml")->install, false);
  EXPECT_EQ(ParseError("version: 1\ninstall: never\n"),
            "my.yaml:2:10: install: 'never': expected one of: auto, off");
  EXPECT_EQ(ParseError("version: 1\ninstall: [off]\n"),
            "my.yaml:2:10: install: expected one of: auto, off");
}

TEST(ParsePolicyErrorTest, Monitor) {
  ExpectMaps(
      ParseError,
      {{"version: 1\nmonitor:\n  files: everything\n",
        "my.yaml:3:10: monitor.files: 'everything': unknown files monitoring mode (expected "
        "one of: off, opens, all)"},
       {"version: 1\nmonitor: {files: Opens}\n",
        "my.yaml:2:18: monitor.files: 'Opens': unknown files monitoring mode (expected one "
        "of: off, opens, all)"},
       {"version: 1\nmonitor: {files: [opens]}\n",
        "my.yaml:2:18: monitor.files: expected one of: off, opens, all"},
       {"version: 1\nmonitor:\n  files:\n",
        "my.yaml:3:3: monitor.files: expected one of: off, opens, all"},
       {"version: 1\nmonitor:\n  audit_log: audit.jsonl\n",
        "my.yaml:3:14: monitor.audit_log: 'audit.jsonl' is not absolute (expected /..., "
        "~/... or ${VAR}/...)"},
       {"version: 1\nmonitor:\n  audit_log: ~\n",
        "my.yaml:3:3: monitor.audit_log: expected a path string (/..., ~/... or ${VAR}/...)"},
       {"version: 1\nmonitor:\n  audit_log: [/a]\n",
        "my.yaml:3:14: monitor.audit_log: expected a path string (/..., ~/... or "
        "${VAR}/...)"},
       {"version: 1\nmonitor:\n  audit_log: \"~bob/a.jsonl\"\n",
        "my.yaml:3:14: monitor.audit_log: '~bob/a.jsonl': ~user paths are not supported "
        "(use ~/ or ${HOME})"},
       {"version: 1\nmonitor:\n  audit_log: \"${STATE/a.jsonl\"\n",
        "my.yaml:3:14: monitor.audit_log: unterminated '${' in '${STATE/a.jsonl'"},
       {"version: 1\nmonitor:\n  audit_log_max_size: 16MB\n",
        "my.yaml:3:23: monitor.audit_log_max_size: '16MB': decimal unit 'MB' is ambiguous; "
        "use KiB, MiB, GiB or TiB (powers of 1024)"},
       {"version: 1\nmonitor:\n  audit_log_max_size: 0\n",
        "my.yaml:3:23: monitor.audit_log_max_size: expected a positive size (bytes, or a "
        "number with a unit: 64MiB, 1GiB), got 0"},
       {"version: 1\nmonitor:\n  audit_log_max_size: big\n",
        "my.yaml:3:23: monitor.audit_log_max_size: 'big' is not a size (expected bytes, or a "
        "number with a unit: 512MiB, 2GiB)"},
       {"version: 1\nmonitor:\n  audit_log_files: 0\n",
        "my.yaml:3:20: monitor.audit_log_files: expected a positive integer, got '0'"},
       {"version: 1\nmonitor:\n  audit_log_files: \"4\"\n",
        "my.yaml:3:20: monitor.audit_log_files: expected a positive integer, got '4'"},
       {"version: 1\nmonitor:\n  audit_log_files: 1001\n",
        "my.yaml:3:20: monitor.audit_log_files: at most 1000 rotated files are kept, got "
        "'1001'"},
       {"version: 1\nmonitor:\n  files: all\n  files: off\n",
        "my.yaml:4:3: duplicate key 'files' in monitor"}});
}

TEST(FilesMonitoringTest, WordsRoundTrip) {
  for (FilesMonitoring mode :
       {FilesMonitoring::kOff, FilesMonitoring::kOpens, FilesMonitoring::kAll}) {
    Result<FilesMonitoring> parsed = ParseFilesMonitoring(ToString(mode));
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(*parsed, mode);
  }
  EXPECT_EQ(ToString(FilesMonitoring::kOff), "off");
  EXPECT_EQ(ToString(FilesMonitoring::kOpens), "opens");
  EXPECT_EQ(ToString(FilesMonitoring::kAll), "all");
  EXPECT_EQ(ParseFilesMonitoring("").error().message,
            "'': unknown files monitoring mode (expected one of: off, opens, all)");
  EXPECT_EQ(ParseFilesMonitoring("ALL").error().message,
            "'ALL': unknown files monitoring mode (expected one of: off, opens, all)");
  EXPECT_FALSE(ParseFilesMonitoring("open").ok());
  EXPECT_FALSE(ParseFilesMonitoring(" opens").ok());
}

TEST(ParsePolicyErrorTest, Network) {
  ExpectMaps(
      ParseError,
      {{"version: 1\nnetwork:\n  allow: {host: a.com}\n",
        "my.yaml:3:10: network.allow: expected a list of rules like {host: example.com, "
        "ports: [443]}"},
       {"version: 1\nnetwork:\n  allow: [a.com]\n",
        "my.yaml:3:11: network.allow[0]: expected a mapping with keys: host, ports, protocol"},
       {"version: 1\nnetwork:\n  allow:\n    - ports: [443]\n",
        "my.yaml:4:7: network.allow[0]: missing required key 'host'"},
       {"version: 1\nnetwork:\n  allow:\n    - host: a.com\n",
        "my.yaml:4:7: network.allow[0]: missing required key 'ports' (allow rules list their "
        "ports)"},
       {"version: 1\nnetwork:\n  allow:\n    - {host: a.com, ports: []}\n",
        "my.yaml:4:28: network.allow[0].ports: expected a non-empty list of port numbers "
        "(1-65535)"},
       {"version: 1\nnetwork:\n  deny:\n    - {host: a.com, ports: [22, 0]}\n",
        "my.yaml:4:33: network.deny[0].ports[1]: expected a port number (1-65535), got '0'"},
       {"version: 1\nnetwork:\n  allow:\n    - {host: a.com, ports: [65536]}\n",
        "my.yaml:4:29: network.allow[0].ports[0]: expected a port number (1-65535), got "
        "'65536'"},
       {"version: 1\nnetwork:\n  allow:\n    - {host: a.com, ports: [https]}\n",
        "my.yaml:4:29: network.allow[0].ports[0]: expected a port number (1-65535), got "
        "'https'"},
       {"version: 1\nnetwork:\n  allow:\n    - {host: a.com, ports: [443]}\n"
        "    - {host: \"a b.com\", ports: [443]}\n",
        "my.yaml:5:14: network.allow[1].host: 'a b.com' is not a DNS name, *.suffix, IP "
        "address or CIDR block"},
       {"version: 1\nnetwork:\n  deny:\n    - {host: 10.1.0.0/8}\n",
        "my.yaml:4:14: network.deny[0].host: '10.1.0.0/8': address has bits set beyond the "
        "/8 prefix"},
       {"version: 1\nnetwork:\n  deny:\n    - {host: [a]}\n",
        "my.yaml:4:14: network.deny[0].host: expected a DNS name, *.suffix, IP address or "
        "CIDR block"}});
}

TEST(ParseSizeTest, AcceptsBytesAndBinaryUnits) {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  for (const Case& c :
       {Case{"0", 0}, Case{"4096", 4096}, Case{"7B", 7}, Case{"1KiB", 1024}, Case{"1K", 1024},
        Case{"64MiB", 64ULL << 20}, Case{"64M", 64ULL << 20}, Case{"2GiB", 2ULL << 30},
        Case{"2 GiB", 2ULL << 30}, Case{"3G", 3ULL << 30}, Case{"1TiB", 1ULL << 40},
        Case{"5T", 5ULL << 40}, Case{"18446744073709551615", std::numeric_limits<uint64_t>::max()},
        Case{"16777215TiB", 16777215ULL << 40}}) {
    Result<uint64_t> size = ParseSize(c.text);
    ASSERT_TRUE(size.ok()) << c.text << ": " << size.error().message;
    EXPECT_EQ(*size, c.bytes) << c.text;
  }
}

TEST(ParseSizeTest, RejectsGarbage) {
  EXPECT_EQ(ParseSize("").error().message,
            "'' is not a size (expected bytes, or a number with a unit: 512MiB, 2GiB)");
  EXPECT_EQ(ParseSize("GiB").error().message,
            "'GiB' is not a size (expected bytes, or a number with a unit: 512MiB, 2GiB)");
  EXPECT_EQ(ParseSize("-1").error().message,
            "'-1' is not a size (expected bytes, or a number with a unit: 512MiB, 2GiB)");
  EXPECT_EQ(ParseSize("1.5GiB").error().message,
            "'1.5GiB': fractions are not supported; use a smaller unit (1536MiB)");
  EXPECT_EQ(ParseSize("1MB").error().message,
            "'1MB': decimal unit 'MB' is ambiguous; use KiB, MiB, GiB or TiB (powers of 1024)");
  EXPECT_EQ(ParseSize("1mib").error().message,
            "'1mib': unknown unit 'mib' (expected B, KiB, MiB, GiB, TiB, or K, M, G, T for the "
            "same)");
  EXPECT_EQ(ParseSize("1GiB x").error().message,
            "'1GiB x': unknown unit 'GiB x' (expected B, KiB, MiB, GiB, TiB, or K, M, G, T for "
            "the same)");
  EXPECT_EQ(ParseSize("18446744073709551616").error().message,
            "'18446744073709551616' is too large");
  EXPECT_EQ(ParseSize("16777216TiB").error().message, "'16777216TiB' is too large");
}

TEST(FormatSizeTest, UsesTheLargestExactUnit) {
  EXPECT_EQ(FormatSize(0), "0");
  EXPECT_EQ(FormatSize(1000), "1000");
  EXPECT_EQ(FormatSize(1024), "1KiB");
  EXPECT_EQ(FormatSize(1536ULL << 20), "1536MiB");
  EXPECT_EQ(FormatSize(2ULL << 30), "2GiB");
  EXPECT_EQ(FormatSize(3ULL << 40), "3TiB");
}

TEST(NamesTest, EnvAndProfileNames) {
  EXPECT_TRUE(IsValidEnvName("PATH"));
  EXPECT_TRUE(IsValidEnvName("_x9"));
  EXPECT_FALSE(IsValidEnvName(""));
  EXPECT_FALSE(IsValidEnvName("9X"));
  EXPECT_FALSE(IsValidEnvName("A-B"));
  EXPECT_FALSE(IsValidEnvName("A=B"));
  EXPECT_TRUE(IsValidProfileName("node-20_x"));
  EXPECT_FALSE(IsValidProfileName(""));
  EXPECT_FALSE(IsValidProfileName("a/b"));
  EXPECT_FALSE(IsValidProfileName("a.yaml"));
}

// Marks and source names do not survive a round trip; everything else must.
Policy WithoutMarks(Policy policy) {
  for (auto* list : {&policy.filesystem.read, &policy.filesystem.exec, &policy.filesystem.write,
                     &policy.filesystem.private_, &policy.filesystem.deny}) {
    for (PathEntry& entry : *list) entry.mark = {};
  }
  for (auto* rules : {&policy.network.allow, &policy.network.deny}) {
    for (NetworkRule& rule : *rules) rule.mark = {};
  }
  policy.env.set_marks.clear();
  for (auto& [name, rule] : policy.secrets) {
    rule.mark = {};
    rule.path.mark = {};
  }
  if (policy.monitor.audit_log) policy.monitor.audit_log->mark = {};
  policy.extends_mark = {};
  policy.source.clear();
  policy.chain.clear();
  return policy;
}

std::string WithoutFirstLine(const std::string& text) { return text.substr(text.find('\n')); }

void ExpectRoundTrip(const Policy& policy) {
  std::string yaml = ToYaml(policy);
  Result<Policy> parsed = ParsePolicy(yaml, "round-trip.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message << "\n" << yaml;
  EXPECT_TRUE(WithoutMarks(*parsed) == WithoutMarks(policy)) << yaml;
  EXPECT_EQ(WithoutFirstLine(ToYaml(*parsed)), WithoutFirstLine(yaml));
}

TEST(ToYamlTest, RoundTripsEveryKey) {
  Result<Policy> policy = LoadPolicyFile(kDataDir + "/full.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().Describe();
  ExpectRoundTrip(*policy);
}

TEST(ToYamlTest, RoundTripsAwkwardStrings) {
  Policy policy;
  policy.source = "awkward";
  policy.extends = "../base dir/x.yaml";
  policy.filesystem.read = {
      {"/with space/x", {}},  {"/quote\"and'apos", {}}, {"/cost$$/x", {}},     {"~", {}},
      {"/colon: x", {}},      {"/#hash", {}},           {"/ünïcode/日本", {}}, {"/a,b[c]{d}", {}},
      {"${WORKSPACE}/x", {}}, {"/tab\there", {}}};
  policy.filesystem.deny = {{"~/.ssh", {}}};
  policy.env.pass = {"A", "_B"};
  policy.env.set = {{"EMPTY", ""},  {"BOOL", "true"},          {"NUM", "42"},  {"NULLISH", "null"},
                    {"TILDE", "~"}, {"MULTI", "line1\nline2"}, {"DASH", "- x"}};
  policy.limits.file_size = 12345;
  policy.limits.memory = 3ULL << 30;
  policy.limits.core_dumps = false;
  policy.network.allow = {
      {"::1", {8080}, {}}, {"2001:db8::/32", {443, 80}, {}}, {"*.example.com", {1, 65535}, {}}};
  policy.network.deny = {{"0.0.0.0/0", {}, {}}};
  policy.monitor.files = FilesMonitoring::kOff;
  policy.monitor.audit_log = PathEntry{"${HOME}/audit dir/#1: \"x\".jsonl", {}};
  policy.monitor.audit_log_max_size = 12345;
  policy.monitor.audit_log_files = 1;
  SecretRule command;
  command.from = SecretSource::kCommand;
  command.run = "aws sts get-session-token --output json | jq -c . # \"x\": y";
  command.json = "Credentials.SessionToken";
  command.expires = "Credentials.Expiration";
  command.timeout_ms = 90'000;
  command.ttl_s = 5400;
  command.on_expiry = ExpiryAction::kRefresh;
  command.revoke = "curl -X DELETE --data-binary @- https://x/revoke";
  command.as = SecretDelivery::kFile;
  SecretRule file;
  file.from = SecretSource::kFile;
  file.path = {"~/tok en", {}};
  SecretRule env;
  env.env_name = "SLACK_TOKEN";
  policy.secrets = {{"AWS_SESSION_TOKEN", command}, {"FROM_FILE", file}, {"SLACK", env}};
  ExpectRoundTrip(policy);
}

TEST(ToYamlTest, RoundTripsEachMonitorField) {
  for (FilesMonitoring mode :
       {FilesMonitoring::kOff, FilesMonitoring::kOpens, FilesMonitoring::kAll}) {
    Policy policy;
    policy.monitor.files = mode;
    EXPECT_THAT(ToYaml(policy), HasSubstr("monitor:\n  files: " + std::string(ToString(mode))));
    ExpectRoundTrip(policy);
  }
  Policy policy;
  policy.monitor.audit_log = PathEntry{"~/.local/state/gander/audit.jsonl", {}};
  ExpectRoundTrip(policy);
  policy = Policy{};
  policy.monitor.audit_log_max_size = 16ULL << 20;
  EXPECT_THAT(ToYaml(policy), HasSubstr("audit_log_max_size: 16MiB"));
  ExpectRoundTrip(policy);
  policy = Policy{};
  policy.monitor.audit_log_files = 1000;
  ExpectRoundTrip(policy);
}

TEST(ToYamlTest, EmptyPolicyRoundTripsAndShowsEverySection) {
  Policy policy;
  policy.source = "a.yaml <- profile:default";
  std::string yaml = ToYaml(policy);
  EXPECT_THAT(yaml, StartsWith("# effective policy: a.yaml <- profile:default\nversion: 1\n"));
  EXPECT_THAT(yaml, HasSubstr("read: []"));
  EXPECT_THAT(yaml, HasSubstr("allow: []"));
  EXPECT_THAT(yaml, HasSubstr("limits: {}"));
  EXPECT_THAT(yaml, HasSubstr("monitor: {}"));
  ExpectRoundTrip(policy);
}

}  // namespace
}  // namespace gander::policies
