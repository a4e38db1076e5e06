#include "learn/suggest.h"

#include <gtest/gtest.h>

#include "learn/audit_reader.h"
#include "policies/expand.h"
#include "policies/loader.h"

namespace gander::learn {
namespace {

constexpr char kHome[] = "/home/u";
constexpr char kWs[] = "/home/u/proj";

std::string FileLine(const std::string& path, const std::string& cls, const std::string& access,
                     const std::string& tool = "read_file") {
  return R"({"v":1,"time":"2025-06-01T10:00:00.000000Z","kind":"file","extension":"ext","pid":1,)"
         R"("sandbox_pid":2,"exe":"/opt/node/bin/node","tool_call":{"state":"one","tool":")" +
         tool + R"(","request_id":"7"},"file":{"syscall":"openat","raw_path":")" + path +
         R"(","raw_path_truncated":false,"path":")" + path + R"(","class":")" + cls +
         R"(","access":")" + access + R"(","result":"allowed","errno":0,"errno_name":null}})";
}

std::string NetLine(const std::string& host, const std::string& ip, int port,
                    const std::string& transport = "tcp") {
  return R"({"v":1,"time":"t","kind":"network","extension":"ext","pid":1,"sandbox_pid":2,)"
         R"("exe":null,"tool_call":{"state":"idle","tool":null,"request_id":null},"network":)"
         R"({"host":)" +
         (host.empty() ? std::string("null") : "\"" + host + "\"") + R"(,"ip":")" + ip +
         R"(","port":)" + std::to_string(port) + R"(,"transport":")" + transport +
         R"(","result":"allowed","errno":0,"syscall":"connect","rule":null,)"
         R"("bytes_out":10,"bytes_in":20,"duration_us":5}})";
}

policies::ExpandedPolicy Default() {
  auto merged = policies::ResolveExtends(*policies::LoadProfile("default", {}), {});
  EXPECT_TRUE(merged.ok());
  auto e = policies::Expand(*merged, {kWs, kHome, {}});
  EXPECT_TRUE(e.ok());
  return *e;
}

Learned Sample() {
  Learned l;
  for (
      const std::string& line : std::vector<std::string>{
          FileLine("/opt/node/lib/node_modules/x/index.js", "outside", "read"),
          FileLine("/opt/node/lib/node_modules/y/a.js", "outside", "read", "search"),
          R"({"v":1,"time":"t","kind":"process","extension":"ext","pid":1,"sandbox_pid":2,"exe":"/x","tool_call":{"state":"startup","tool":null,"request_id":null},"process":{"action":"exec","path":"/opt/node/bin/node","argv":["node"],"argv_truncated":false,"exit_code":null,"signal":null,"errno":0,"errno_name":null}})",
          FileLine("/srv/data/set1/a.csv", "outside", "read"),
          FileLine("/srv/data/set1/b.csv", "outside", "read"),
          FileLine("/home/u/.cache/tool/db/x", "private", "write"),
          FileLine("/home/u/.config/tool/settings.json", "private", "read"),
          FileLine("/home/u/.ssh/id_rsa", "denied", "read"),
          FileLine("/home/u/proj/src/main.js", "workspace", "read"),
          FileLine("/usr/lib/x86_64-linux-gnu/libc.so.6", "allowed_read_only", "read"),
          FileLine("/var/lib/custom/libfoo.so.1", "outside", "read"),
          FileLine("/etc/hosts", "allowed_read_only", "read"),
          FileLine("pipe:[12]", "system", "read"),
          NetLine("api.github.com", "140.82.112.3", 443),
          NetLine("", "8.8.8.8", 443),
          NetLine("", "10.1.2.3", 5432),
          R"({"v":1,"time":"t","kind":"syscall","extension":"ext","pid":1,"sandbox_pid":2,"exe":"/x","tool_call":{"state":"idle","tool":null,"request_id":null},"syscall":{"name":"ptrace","nr":101,"action":"denied","count":1,"errno":1,"errno_name":"EPERM"}})",
          R"({"v":1,"time":"t","kind":"syscall","extension":"ext","pid":1,"sandbox_pid":2,"exe":"/x","tool_call":{"state":"idle","tool":null,"request_id":null},"syscall":{"name":"read","nr":0,"action":"counted","count":40,"errno":0,"errno_name":null}})",
          std::string(
              R"({"v":1,"kind":"file","extension":"other","file":{"path":"/nope","class":"outside","access":"read"}})"),
          std::string("not json"),
      }) {
    AddAuditLine(line, "ext", l);
  }
  return l;
}

SuggestContext Ctx() {
  SuggestContext c;
  c.extension = "ext";
  c.base = Default();
  c.workspace = kWs;
  c.home = kHome;
  return c;
}

TEST(AuditReader, ReadsKindsAndFiltersByExtension) {
  Learned l = Sample();
  EXPECT_EQ(l.bad_lines, 1u);
  EXPECT_FALSE(l.files.contains("/nope"));
  EXPECT_FALSE(l.files.contains("pipe:[12]"));
  EXPECT_EQ(l.files.at("/srv/data/set1/a.csv").at(Need::kRead).tools,
            std::set<std::string>{"read_file"});
  EXPECT_TRUE(l.files.at("/opt/node/bin/node").contains(Need::kExec));
  EXPECT_TRUE(l.denied_files.contains("/home/u/.ssh/id_rsa"));
  EXPECT_EQ(l.network.size(), 3u);
  EXPECT_EQ(l.denied_syscalls.at("ptrace").count, 1u);
  EXPECT_EQ(l.syscalls.at("read"), 40u);
}

TEST(Suggest, UdpDestinationsBecomeUdpRules) {
  Learned l;
  AddAuditLine(NetLine("", "10.0.0.5", 5353, "udp"), "ext", l);
  AddAuditLine(NetLine("", "10.0.0.5", 443), "ext", l);
  EXPECT_EQ(l.network_udp.size(), 1u);
  EXPECT_EQ(l.network.size(), 1u);
  std::string yaml = SuggestPolicy(l, Ctx());
  SCOPED_TRACE(yaml);
  EXPECT_NE(yaml.find("{host: \"10.0.0.5\", ports: [5353], protocol: udp}  # send"),
            std::string::npos);
  EXPECT_NE(yaml.find("{host: \"10.0.0.5\", ports: [443]}  # connect"), std::string::npos);
  auto parsed = policies::ParsePolicy(yaml, "suggestion.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  auto merged = policies::ResolveExtends(*parsed, {});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  auto expanded = policies::Expand(*merged, {kWs, kHome, {}});
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  EXPECT_TRUE(CheckCoverage(l, *expanded, kWs, kHome).uncovered.empty());
  // Under the base alone, the UDP use is drift, named as UDP.
  auto coverage = CheckCoverage(l, Default(), kWs, kHome);
  ASSERT_EQ(coverage.uncovered.size(), 2u);
  EXPECT_NE(coverage.uncovered[1].find("udp 10.0.0.5:5353"), std::string::npos);
}

TEST(Suggest, CollapsesAndSeparatesAndParses) {
  std::string yaml = SuggestPolicy(Sample(), Ctx());
  SCOPED_TRACE(yaml);
  EXPECT_NE(yaml.find("extends: default"), std::string::npos);
  EXPECT_NE(yaml.find("\"/opt/node\""), std::string::npos);  // interpreter prefix
  EXPECT_EQ(yaml.find("node_modules/x"), std::string::npos);
  EXPECT_NE(yaml.find("\"/srv/data/set1\"  # read 2x; tools: read_file"), std::string::npos);
  EXPECT_NE(yaml.find("\"/var/lib/custom\""), std::string::npos);  // a library's dir
  EXPECT_EQ(yaml.find("\"~/.config/tool\""), std::string::npos);   // real file under home:
  EXPECT_EQ(yaml.find("~/.cache"), std::string::npos);             // private scratch: covered
  EXPECT_EQ(yaml.find("/usr/lib"), std::string::npos);             // the base allows it
  EXPECT_EQ(yaml.find("${WORKSPACE}"), std::string::npos);
  EXPECT_NE(yaml.find("{host: \"api.github.com\", ports: [443]}"), std::string::npos);
  EXPECT_NE(yaml.find("{host: \"10.1.2.3\", ports: [5432]}"), std::string::npos);
  auto review = yaml.find("# REVIEW:");
  ASSERT_NE(review, std::string::npos);
  EXPECT_GT(yaml.find("/home/u/.ssh/id_rsa"), review);
  EXPECT_GT(yaml.find("8.8.8.8"), review);
  EXPECT_GT(yaml.find("syscall ptrace"), review);
  // ... reviewed, not granted: the base's private home hides the user's own files.
  EXPECT_GT(yaml.find("file read /home/u/.config/tool/settings.json: the user's own, hidden by "
                      "the base's private home"),
            review);

  auto parsed = policies::ParsePolicy(yaml, "suggestion.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  auto merged = policies::ResolveExtends(*parsed, {});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  auto expanded = policies::Expand(*merged, {kWs, kHome, {}});
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  // The suggestion covers everything but the risky items.
  auto coverage = CheckCoverage(Sample(), *expanded, kWs, kHome);
  ASSERT_EQ(coverage.uncovered.size(), 2u) << yaml;
  EXPECT_NE(coverage.uncovered[0].find("/home/u/.config/tool/settings.json"), std::string::npos);
  EXPECT_NE(coverage.uncovered[1].find("8.8.8.8"), std::string::npos);
  EXPECT_EQ(coverage.refused.size(), 1u);
}

TEST(Suggest, NeverUnderADenyRuleOrASecret) {
  Learned l;
  AddAuditLine(FileLine("/home/u/.aws/config", "outside", "read"), "", l);
  AddAuditLine(FileLine("/home/u/keys/server.pem", "outside", "read"), "", l);
  AddAuditLine(FileLine("/etc/shadow", "outside", "read"), "", l);
  SuggestContext c = Ctx();
  c.base.deny.clear();  // even with a base that forgot them
  std::string yaml = SuggestPolicy(l, c);
  auto review = yaml.find("# REVIEW:");
  ASSERT_NE(review, std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("filesystem:"), std::string::npos) << yaml;
  EXPECT_TRUE(policies::ParsePolicy(yaml, "s.yaml").ok());
}

TEST(Suggest, WorkspaceRelativeWithAnotherBase) {
  Learned l;
  AddAuditLine(FileLine("/home/u/proj/bin/tool", "workspace", "exec"), "", l);
  SuggestContext c = Ctx();
  c.base.write.clear();
  c.base.exec.clear();
  c.extends = "strict";
  std::string yaml = SuggestPolicy(l, c);
  EXPECT_NE(yaml.find("extends: strict"), std::string::npos);
  EXPECT_NE(yaml.find("  exec:\n    - \"${WORKSPACE}/bin\""), std::string::npos) << yaml;
}

TEST(Suggest, ADirectoryIsGrantedAsItselfAndTheCommandsFilesNotAtAll) {
  Learned l;
  for (const auto& line : {FileLine("/srv/data", "outside", "read", "list_directory"),
                           FileLine("/srv/data/ref.txt", "outside", "read"),
                           FileLine("/srv/logs", "outside", "read", "list_directory"),
                           FileLine("/w/node_modules/zod/index.js", "outside", "read")}) {
    AddAuditLine(line, "ext", l);
  }
  l.command_grants = {"/w/node_modules"};
  l.directories = {"/srv/logs"};  // the launcher's stat: a directory whose contents were not read
  std::string yaml = SuggestPolicy(l, Ctx());
  EXPECT_NE(yaml.find("    - \"/srv/data\"  # read 2x"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("    - \"/srv/logs\"  # read 1x"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("\"/srv\""), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("node_modules"), std::string::npos) << yaml;
  auto coverage = CheckCoverage(l, Default(), kWs, kHome);
  EXPECT_EQ(coverage.uncovered.size(), 3u);  // the two directories and the file, not zod
}

TEST(Check, DefaultDoesNotCoverOutsideReads) {
  auto coverage = CheckCoverage(Sample(), Default(), kWs, kHome);
  EXPECT_GE(coverage.uncovered.size(), 5u);
}

TEST(Check, ARefusedLookupIsDriftAndReviewedNotGranted) {
  Learned l;
  AddAuditLine(
      R"({"v":1,"time":"t","kind":"network","extension":"ext","tool_call":{"state":"idle"},)"
      R"("network":{"host":"Collect.Example.NET.","ip":null,"port":53,"transport":"dns",)"
      R"("result":"denied"}})",
      "ext", l);
  ASSERT_EQ(l.dns_names.size(), 1u);
  auto coverage = CheckCoverage(l, Default(), kWs, kHome);
  ASSERT_EQ(coverage.uncovered.size(), 1u);
  EXPECT_TRUE(coverage.uncovered[0].starts_with("resolve collect.example.net (1x"))
      << coverage.uncovered[0];
  SuggestContext c = Ctx();
  std::string yaml = SuggestPolicy(l, c);
  EXPECT_EQ(yaml.find("network:"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("#   network collect.example.net: looked up, never connected"),
            std::string::npos)
      << yaml;
}

// A line of `kind` with `body` at `time`, from tool `tool`.
std::string At(const std::string& time, const std::string& kind, const std::string& body,
               const std::string& tool = "read_text_file") {
  return R"({"v":1,"time":")" + time + R"(","kind":")" + kind +
         R"(","extension":"ext","tool_call":{"state":"one","tool":")" + tool + R"("},")" + kind +
         R"(":)" + body + "}";
}

std::string Read(const std::string& path, const std::string& cls = "outside") {
  return R"({"path":")" + path + R"(","class":")" + cls + R"(","access":"read"})";
}

std::string Policy(const std::string& yaml, policies::ExpandedPolicy* out) {
  auto parsed = policies::ParsePolicy(yaml, "suggestion.yaml");
  if (!parsed.ok()) return parsed.error().message;
  auto merged = policies::ResolveExtends(*parsed, {});
  if (!merged.ok()) return merged.error().message;
  auto expanded = policies::Expand(*merged, {kWs, kHome, {}});
  if (!expanded.ok()) return expanded.error().message;
  *out = *expanded;
  return "";
}

TEST(Usage, KeepsFirstAndLastTimeThroughMerges) {
  Usage a, b;
  a.Add(1, "x", "2026-11-30T10:03:00.000000Z");
  a.Add(1, "x", "2026-11-30T10:01:00.000000Z");
  a.Add(1, "x", "");  // a line without time changes neither
  b.Add(2, "y", "2026-11-30T10:05:59.000000Z");
  a.Merge(b);
  EXPECT_EQ(a.count, 5u);
  EXPECT_EQ(a.first, "2026-11-30T10:01:00.000000Z");
  EXPECT_EQ(a.last, "2026-11-30T10:05:59.000000Z");
  EXPECT_EQ(a.tools, (std::set<std::string>{"x", "y"}));
}

TEST(Suggest, CommentsSayWhenAcrossRunsAndRebasing) {
  Learned l;
  // Two learning runs in two workspaces, on two days: they accumulate, times included.
  auto start = [](const std::string& time, const std::string& ws) {
    return At(time, "lifecycle",
              R"({"what":"start","detail":"x","info":{"workspace":")" + ws + R"("}})");
  };
  for (const auto& line :
       {start("2026-11-30T10:00:00.000000Z", "/ci/a"),
        At("2026-11-30T10:01:07.000000Z", "file", Read("/srv/data/a.txt")),
        At("2026-11-30T10:05:00.000000Z", "file", Read("/srv/data/b.txt")),
        At("2026-11-30T10:02:00.000000Z", "file", Read("/ci/a/src/x.js", "workspace")),
        start("2026-12-01T09:00:00.000000Z", "/ci/b"),
        At("2026-12-01T09:30:00.000000Z", "file", Read("/ci/b/src/x.js", "workspace")),
        At("2026-11-30T10:04:00.000000Z", "network",
           R"({"host":null,"ip":"10.0.0.9","port":5432,"transport":"tcp"})", "query")}) {
    AddAuditLine(line, "ext", l);
  }
  RebaseWorkspaces(l, "/w");
  const Usage& ws = l.files.at("/w/src/x.js").at(Need::kRead);
  EXPECT_EQ(ws.count, 2u);
  EXPECT_EQ(ws.first, "2026-11-30T10:02:00.000000Z");
  EXPECT_EQ(ws.last, "2026-12-01T09:30:00.000000Z");
  std::string yaml = SuggestPolicy(l, Ctx());
  SCOPED_TRACE(yaml);
  EXPECT_NE(yaml.find("\"/srv/data\"  # read 2x; tools: read_text_file; 2026-11-30 10:01-10:05\n"),
            std::string::npos);
  EXPECT_NE(yaml.find("ports: [5432]}  # connect 1x; tools: query; 2026-11-30 10:04\n"),
            std::string::npos);
  // --check names the times too.
  auto coverage = CheckCoverage(l, Default(), "/w", kHome);
  ASSERT_FALSE(coverage.uncovered.empty());
  EXPECT_EQ(coverage.uncovered[0],
            "read /srv/data/a.txt (1x; tools: read_text_file; 2026-11-30 10:01)");
  // A span over midnight names both days.
  Usage u;
  u.Add(1, "t", "2026-11-30T23:59:00.000000Z");
  u.Add(1, "t", "2026-12-01T00:01:00.000000Z");
  Learned l2;
  l2.files["/srv/x/y"][Need::kRead] = u;
  EXPECT_NE(SuggestPolicy(l2, Ctx()).find("2026-11-30 23:59 - 2026-12-01 00:01"),
            std::string::npos);
}

TEST(Suggest, SecretsSeenAreSuggestedByNameAndDeliveryNeverByValue) {
  std::string start =
      At("2026-11-30T10:00:00.000000Z", "lifecycle",
         R"({"what":"start","detail":"x","info":{"workspace":"/home/u/proj","secrets":[)"
         R"({"name":"API_TOKEN","from":"env","as":"env","file":null},)"
         R"({"name":"DB_PASSWORD","from":"env","as":"file","file":"/run/secrets/DB_PASSWORD"},)"
         R"({"name":"UNUSED","from":"env","as":"file","file":"/run/secrets/UNUSED"},)"
         R"({"name":"VAULT","from":"command","as":"env","file":null}]}})",
         "(startup)");
  Learned l;
  AddAuditLine(start, "ext", l);
  AddAuditLine(At("2026-11-30T10:02:00.000000Z", "file",
                  Read("/run/secrets/DB_PASSWORD", "allowed_read_only"), "query"),
               "ext", l);
  ASSERT_EQ(l.secrets.size(), 4u);
  EXPECT_EQ(l.secrets.at("DB_PASSWORD").reads.count, 1u);
  EXPECT_EQ(l.secrets.at("UNUSED").reads.count, 0u);
  EXPECT_EQ(l.secrets.at("API_TOKEN").delivered.count, 1u);
  EXPECT_FALSE(l.files.contains("/run/secrets/DB_PASSWORD"));  // a secret, not a path to grant

  std::string yaml = SuggestPolicy(l, Ctx());
  SCOPED_TRACE(yaml);
  EXPECT_NE(yaml.find("secrets:\n  API_TOKEN: {from: env}  # delivered to 1 run (2026-11-30 "
                      "10:00); reads of an environment variable are not observable"),
            std::string::npos);
  EXPECT_NE(yaml.find("  DB_PASSWORD: {from: env, as: file}  # delivered to 1 run (2026-11-30 "
                      "10:00); file read 1x; tools: query; 2026-11-30 10:02\n"),
            std::string::npos);
  EXPECT_NE(yaml.find("  UNUSED: {from: env, as: file}  # delivered to 1 run (2026-11-30 "
                      "10:00); its file was never read"),
            std::string::npos);
  EXPECT_NE(yaml.find("#   secret UNUSED: delivered, never read"), std::string::npos);
  // A command's script is not in the audit log: a commented entry to complete.
  EXPECT_NE(yaml.find("#   VAULT: {from: command, run: ...}  # delivered to 1 run"),
            std::string::npos);
  policies::ExpandedPolicy suggested;
  ASSERT_EQ(Policy(yaml, &suggested), "");
  EXPECT_EQ(suggested.secrets.size(), 3u);
  EXPECT_EQ(suggested.secrets.at("DB_PASSWORD").as, policies::SecretDelivery::kFile);

  // --check: a secret used (read, or delivered into the environment) that POLICY does not
  // grant is drift; one never read is not.
  auto coverage = CheckCoverage(l, Default(), kWs, kHome);
  std::vector<std::string> secrets;
  for (const auto& line : coverage.uncovered) {
    if (line.starts_with("secret ")) secrets.push_back(line.substr(0, line.find(" (")));
  }
  EXPECT_EQ(secrets,
            (std::vector<std::string>{"secret API_TOKEN as env", "secret DB_PASSWORD as file",
                                      "secret VAULT as env"}));
  coverage = CheckCoverage(l, suggested, kWs, kHome);
  ASSERT_EQ(coverage.uncovered.size(), 1u);
  EXPECT_TRUE(coverage.uncovered[0].starts_with("secret VAULT as env")) << coverage.uncovered[0];
  // Delivered otherwise than POLICY delivers it: drift too.
  suggested.secrets.at("DB_PASSWORD").as = policies::SecretDelivery::kEnv;
  coverage = CheckCoverage(l, suggested, kWs, kHome);
  ASSERT_EQ(coverage.uncovered.size(), 2u);
  EXPECT_TRUE(coverage.uncovered[0].starts_with(
      "secret DB_PASSWORD as file: the policy delivers it as env"))
      << coverage.uncovered[0];
  // A secret the base delivers the same way is not suggested again.
  SuggestContext c = Ctx();
  c.base.secrets["API_TOKEN"] = policies::SecretRule{};
  EXPECT_EQ(SuggestPolicy(l, c).find("API_TOKEN"), std::string::npos);
}

TEST(Suggest, PublicDestinationsAreFlaggedNamedOrNot) {
  Learned l;
  for (const auto& line :
       {NetLine("api.example.com", "93.184.215.14", 443), NetLine("db.internal", "10.0.0.7", 5432),
        NetLine("v6.example.org", "2606:2800:220:1::1", 443),
        NetLine("docs.test", "2001:db8::5", 80), NetLine("", "203.0.113.7", 8443),
        NetLine("", "100.64.1.2", 80), NetLine("", "8.8.8.8", 53),
        NetLine("metadata.google.internal", "169.254.169.254", 80)}) {
    AddAuditLine(line, "ext", l);
  }
  Learned unresolved;  // a name reached without an address recorded
  AddAuditLine(NetLine("api.example.net", "", 443), "ext", unresolved);
  std::string yaml = SuggestPolicy(l, Ctx());
  SCOPED_TRACE(yaml);
  // Named public hosts stay granted (the extension needs them) but carry the flag...
  EXPECT_NE(yaml.find("{host: \"api.example.com\", ports: [443]}  # REVIEW: public host "
                      "93.184.215.14; connect 1x"),
            std::string::npos);
  EXPECT_NE(yaml.find("{host: \"v6.example.org\", ports: [443]}  # REVIEW: public host "
                      "2606:2800:220:1::1;"),
            std::string::npos);
  // ... and are listed in the review block of flagged grants.
  auto flagged = yaml.find("# REVIEW: flagged in the suggestion above");
  ASSERT_NE(flagged, std::string::npos);
  EXPECT_NE(yaml.find("#   network api.example.com: public host 93.184.215.14", flagged),
            std::string::npos);
  // Private, shared (CGNAT) and documentation addresses are not public.
  EXPECT_NE(yaml.find("{host: \"db.internal\", ports: [5432]}  # connect"), std::string::npos);
  EXPECT_NE(yaml.find("{host: \"docs.test\", ports: [80]}  # connect"), std::string::npos);
  EXPECT_NE(yaml.find("{host: \"203.0.113.7\", ports: [8443]}  # connect"), std::string::npos);
  EXPECT_NE(yaml.find("{host: \"100.64.1.2\", ports: [80]}  # connect"), std::string::npos);
  // Not granted at all: a public address without a name, and a name that leads to the cloud
  // metadata address.
  auto review = yaml.find("# REVIEW: used while learning but NOT added");
  ASSERT_NE(review, std::string::npos);
  EXPECT_NE(yaml.find("#   network 8.8.8.8:53: a public address without a name", review),
            std::string::npos);
  EXPECT_NE(yaml.find("#   network metadata.google.internal:80: resolves to link-local (cloud "
                      "metadata) address 169.254.169.254",
                      review),
            std::string::npos);
  EXPECT_EQ(yaml.find("{host: \"metadata.google.internal\""), std::string::npos);
  policies::ExpandedPolicy suggested;
  EXPECT_EQ(Policy(yaml, &suggested), "");
  EXPECT_NE(SuggestPolicy(unresolved, Ctx())
                .find("{host: \"api.example.net\", ports: [443]}  # REVIEW: public host? (no "
                      "address recorded); connect"),
            std::string::npos);
}

}  // namespace
}  // namespace gander::learn

namespace gander::learn {
namespace {

Learned Census() {
  Learned l;
  l.runs = l.census_runs = 1;
  l.syscalls = {{"read", 40},  {"openat", 3}, {"ioctl", 2}, {"setuid", 1},
                {"ptrace", 1}, {"clone3", 1}, {"nr 999", 1}};
  return l;
}

TEST(SuggestSyscalls, TheCensusBecomesTheAllowlistRiskyOnesReviewed) {
  SuggestContext c = Ctx();
  c.default_syscalls = 314;
  std::string yaml = SuggestPolicy(Census(), c);
  SCOPED_TRACE(yaml);
  EXPECT_NE(yaml.find("syscalls:\n  # The census of 1 learning run: 3 syscalls (gander's filter "
                      "allows 314 without a list);"),
            std::string::npos);
  EXPECT_NE(
      yaml.find("  allow:\n    - ioctl  # 2 calls; the floor still refuses "
                "ioctl(TIOCSTI/TIOCLINUX)\n    - openat  # 3 calls\n    - read  # 40 calls\n"),
      std::string::npos);
  auto review = yaml.find("# REVIEW:");
  ASSERT_NE(review, std::string::npos);
  EXPECT_GT(yaml.find("syscall setuid: privileged"), review);
  EXPECT_GT(yaml.find("syscall ptrace: gander's floor denies it"), review);
  EXPECT_GT(yaml.find("syscall nr 999: no name"), review);
  EXPECT_EQ(yaml.find("clone3"), std::string::npos);  // the floor's ENOSYS, seen or not

  auto parsed = policies::ParsePolicy(yaml, "suggestion.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  auto merged = policies::ResolveExtends(*parsed, {});
  ASSERT_TRUE(merged.ok());
  auto expanded = policies::Expand(*merged, {kWs, kHome, {}});
  ASSERT_TRUE(expanded.ok());
  EXPECT_EQ(*expanded->syscalls_allow, (std::vector<std::string>{"ioctl", "openat", "read"}));

  // --check: the floor's is refused (not drift); the privileged and the unnamed are drift.
  auto coverage = CheckCoverage(Census(), *expanded, kWs, kHome);
  EXPECT_EQ(coverage.uncovered,
            (std::vector<std::string>{"syscall nr 999 (1x)", "syscall setuid (1x)"}));
  EXPECT_EQ(coverage.refused, (std::vector<std::string>{"syscall ptrace (1x): gander's floor"}));
  // A syscall used later, not in the list: drift.
  Learned later = Census();
  later.syscalls["mkdir"] = 1;
  auto drift = CheckCoverage(later, *expanded, kWs, kHome);
  EXPECT_NE(std::find(drift.uncovered.begin(), drift.uncovered.end(), "syscall mkdir (1x)"),
            drift.uncovered.end());
  // Without an allowlist in the policy, syscalls are not checked.
  EXPECT_TRUE(CheckCoverage(later, Default(), kWs, kHome).uncovered.empty());
}

TEST(SuggestSyscalls, ABaseAllowlistBoundsTheSuggestion) {
  SuggestContext c = Ctx();
  c.base.syscalls_allow = std::vector<std::string>{"read"};
  std::string yaml = SuggestPolicy(Census(), c);
  SCOPED_TRACE(yaml);
  EXPECT_NE(yaml.find("  allow:\n    - read  # 40 calls\n"), std::string::npos);
  EXPECT_NE(yaml.find("syscall openat: not in the base's syscalls.allow"), std::string::npos);
}

}  // namespace
}  // namespace gander::learn
