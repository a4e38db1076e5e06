#include "vet/log_findings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace gander::vet {
namespace {

const LogContext kContext{"/w", "/h", {"/h/.ssh/id_rsa", "/h/.aws/credentials"}};

std::string Line(const std::string& kind, const std::string& body,
                 const std::string& slot = R"({"state":"startup","tool":null,"request_id":null})",
                 const std::string& exe = "/usr/bin/node") {
  return R"({"v":1,"time":"2026-01-01T00:00:00.000000Z","kind":")" + kind +
         R"(","extension":"audit","pid":10,"sandbox_pid":2,"exe":")" + exe + R"(","tool_call":)" +
         slot + ",\"" + kind + "\":" + body + "}\n";
}

std::string File(const std::string& path, const std::string& cls, const std::string& access,
                 const std::string& result = "allowed") {
  return Line("file", R"({"syscall":"openat","raw_path":")" + path + R"(","path":")" + path +
                          R"(","class":")" + cls + R"(","access":")" + access + R"(","result":")" +
                          result + R"(","errno":0,"errno_name":null})");
}

std::vector<Finding> Analyse(const std::string& log) {
  std::istringstream in(log);
  return FindingsFromAuditLog(in, kContext);
}

const Finding* Find(const std::vector<Finding>& fs, Category c, const std::string& needle) {
  for (const auto& f : fs) {
    if (f.category == c && f.summary.find(needle) != std::string::npos) return &f;
  }
  return nullptr;
}

TEST(LogFindings, BaitIsHighAndShownUnderTheFakeHome) {
  auto fs =
      Analyse(File("/h/.ssh/id_rsa", "denied", "read") + File("/h/.ssh/id_rsa", "denied", "read"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].category, Category::kBait);
  EXPECT_EQ(fs[0].severity, Severity::kHigh);
  EXPECT_EQ(fs[0].summary, "read ~/.ssh/id_rsa");
  EXPECT_EQ(fs[0].count, 2u);
  EXPECT_EQ(fs[0].tool, "(startup)");
}

// gander's install of the package ("phase":"install": npm install and its postinstall script)
// is kept, as findings of their own marked "install phase": a postinstall reading ~/.ssh is as
// high as the extension doing it; the install's registry traffic and programs are info.
TEST(LogFindings, InstallPhaseFindingsAreKeptAndMarked) {
  auto install = [](std::string line) {
    return line.insert(line.find(",\"kind\""), R"(,"phase":"install")");
  };
  auto fs = Analyse(
      install(File("/h/.ssh/id_rsa", "denied", "read")) +
      install(File("/h/.gnupg/k", "denied", "read", "denied")) +
      install(Line(
          "network",
          R"({"host":"registry.npmjs.org","ip":"127.0.0.1","port":443,"transport":"tcp","result":"allowed","errno":0,"errno_name":null,"syscall":"connect","rule":null,"bytes_out":0,"bytes_in":0,"duration_us":0})")) +
      install(Line(
          "process",
          R"({"action":"exec","path":"/bin/sh","argv":["sh","-c","node postinstall.js"],"argv_truncated":false,"exit_code":null,"signal":null,"errno":0,"errno_name":null})")) +
      install(Line("lifecycle", R"({"what":"install","detail":"npm install done"})")) +
      File("/h/.ssh/id_rsa", "denied", "read"));
  const Finding* bait = Find(fs, Category::kBait, "install phase: read ~/.ssh/id_rsa");
  ASSERT_NE(bait, nullptr);
  EXPECT_EQ(bait->severity, Severity::kHigh);
  EXPECT_EQ(bait->count, 1u);
  const Finding* gnupg = Find(fs, Category::kFile, "install phase: read ~/.gnupg/k");
  ASSERT_NE(gnupg, nullptr);
  EXPECT_EQ(gnupg->severity, Severity::kHigh);
  const Finding* registry = Find(fs, Category::kNetwork, "install phase: connect to registry");
  ASSERT_NE(registry, nullptr);
  EXPECT_EQ(registry->severity, Severity::kInfo);
  const Finding* script = Find(fs, Category::kProcess, "install phase: ");
  ASSERT_NE(script, nullptr);
  EXPECT_EQ(script->severity, Severity::kInfo);
  // The extension's own read is a finding of its own, not merged into the install's.
  EXPECT_EQ(std::count_if(fs.begin(), fs.end(),
                          [](const Finding& f) { return f.summary == "read ~/.ssh/id_rsa"; }),
            1);
  // The registry connect after the postinstall read the bait: possible exfiltration, high.
  const Finding* exfil = Find(fs, Category::kNetwork, "install phase: network attempted after");
  ASSERT_NE(exfil, nullptr);
  EXPECT_EQ(exfil->severity, Severity::kHigh);
  EXPECT_EQ(fs.size(), 6u);
}

TEST(LogFindings, FilesByClass) {
  auto fs = Analyse(File("/w/a", "workspace", "write") + File("/tmp/x", "private", "create") +
                    File("/proc/self/maps", "system", "read") +
                    File("/h/.gnupg/k", "denied", "read") + File("/srv/data", "outside", "read") +
                    File("/usr/lib/x", "allowed_read_only", "write") +
                    File("/etc/hosts", "allowed_read_only", "read", "would_deny"));
  ASSERT_EQ(fs.size(), 4u);
  EXPECT_EQ(Find(fs, Category::kFile, "~/.gnupg/k")->severity, Severity::kHigh);
  EXPECT_EQ(Find(fs, Category::kFile, "/srv/data")->severity, Severity::kLow);
  EXPECT_EQ(Find(fs, Category::kFile, "write /usr/lib/x")->severity, Severity::kMedium);
  EXPECT_EQ(Find(fs, Category::kFile, "/etc/hosts")->severity, Severity::kMedium);
}

TEST(LogFindings, NetworkAfterBaitIsPossibleExfiltration) {
  std::string connect = Line(
      "network",
      R"({"host":null,"ip":"127.0.0.2","port":8080,"transport":"tcp","result":"denied","errno":111,"errno_name":"ECONNREFUSED","syscall":"connect","rule":null,"bytes_out":0,"bytes_in":0,"duration_us":0})",
      R"({"state":"one","tool":"get_weather","request_id":"3"})");
  auto before = Analyse(connect);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].summary, "connect to 127.0.0.2:8080/tcp");
  EXPECT_EQ(before[0].severity, Severity::kMedium);
  EXPECT_EQ(before[0].tool, "get_weather");
  EXPECT_NE(before[0].detail.find("ECONNREFUSED"), std::string::npos);

  auto after = Analyse(File("/h/.aws/credentials", "denied", "read") + connect);
  ASSERT_NE(Find(after, Category::kNetwork, "possible exfiltration"), nullptr);
  EXPECT_EQ(Find(after, Category::kNetwork, "possible exfiltration")->severity, Severity::kHigh);
}

TEST(LogFindings, TemporaryNamesAreMerged) {
  auto fs = Analyse(File("/pkg/dist/memory.jsonl.9ebcaecb8fa858534c0559eaa6177336.tmp",
                         "allowed_read_only", "create", "denied") +
                    File("/pkg/dist/memory.jsonl.ded917364ed2dc91f9d2767df3a3e5f2.tmp",
                         "allowed_read_only", "create", "denied") +
                    File("/pkg/dist/cafe", "allowed_read_only", "create", "denied"));
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].summary, "create /pkg/dist/memory.jsonl.*.tmp");
  EXPECT_EQ(fs[0].count, 2u);
  EXPECT_EQ(fs[1].summary, "create /pkg/dist/cafe");
}

TEST(LogFindings, DnsQuery) {
  auto fs = Analyse(Line(
      "network",
      R"({"host":"evil.example","ip":null,"port":53,"transport":"dns","result":"denied","errno":0,"errno_name":null,"syscall":null,"rule":null,"bytes_out":0,"bytes_in":0,"duration_us":0})"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].summary, "DNS query for evil.example");
}

TEST(LogFindings, ProcessesLaunchIsInfoTheRestMedium) {
  auto exec = [](const std::string& path, const std::string& exe) {
    return Line(
        "process",
        R"({"action":"exec","path":")" + path +
            R"(","argv":["x","-c","y"],"argv_truncated":false,"exit_code":null,"signal":null,"errno":0,"errno_name":null})",
        R"({"state":"startup","tool":null,"request_id":null})", exe);
  };
  std::string start = Line("lifecycle", R"({"what":"start","detail":"node","info":null})");
  auto fs = Analyse(start + exec("/usr/bin/env", "/usr/bin/gander") +
                    exec("/usr/bin/node", "/usr/bin/env") + exec("/bin/sh", "/usr/bin/node"));
  ASSERT_EQ(fs.size(), 3u);
  EXPECT_EQ(fs[0].severity, Severity::kInfo);
  EXPECT_EQ(fs[0].summary, "started /usr/bin/env");
  EXPECT_EQ(fs[1].severity, Severity::kInfo);
  EXPECT_EQ(fs[2].severity, Severity::kMedium);
  EXPECT_EQ(fs[2].summary, "executed /bin/sh");
  EXPECT_EQ(fs[2].detail, "x -c y");
}

TEST(LogFindings, RefusedSyscalls) {
  auto sys = [](const std::string& name, int count) {
    return Line("syscall", R"({"name":")" + name + R"(","nr":1,"action":"denied","count":)" +
                               std::to_string(count) + R"(,"errno":1,"errno_name":"EPERM"})");
  };
  auto fs = Analyse(sys("ptrace", 1) + sys("io_uring_setup", 2) +
                    Line("syscall", R"({"name":"read","nr":0,"action":"counted","count":9})"));
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(Find(fs, Category::kSyscall, "ptrace")->severity, Severity::kHigh);
  EXPECT_EQ(Find(fs, Category::kSyscall, "io_uring_setup")->severity, Severity::kMedium);
  EXPECT_EQ(Find(fs, Category::kSyscall, "io_uring_setup")->count, 2u);
}

TEST(LogFindings, EnvironReadsAndDropsAndBadLines) {
  auto fs = Analyse(File("/proc/self/environ", "system", "read") +
                    Line("lifecycle", R"({"what":"events_dropped","detail":"12","info":null})") +
                    "not json\n" + R"({"v":2,"kind":"file"})" + "\n");
  ASSERT_NE(Find(fs, Category::kEnvironment, "/proc/self/environ"), nullptr);
  EXPECT_EQ(Find(fs, Category::kAudit, "dropped")->count, 12u);
  EXPECT_EQ(Find(fs, Category::kAudit, "did not parse")->count, 2u);
}

TEST(LogFindings, ToolsAreListedOncePerFinding) {
  auto in_tool = [](const std::string& tool) {
    return Line(
        "file",
        R"({"syscall":"openat","raw_path":"/srv/x","path":"/srv/x","class":"outside","access":"read","result":"allowed","errno":0,"errno_name":null})",
        R"({"state":"one","tool":")" + tool + R"(","request_id":"1"})");
  };
  auto fs = Analyse(in_tool("b") + in_tool("a") + in_tool("b"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].tool, "a, b");
  EXPECT_EQ(fs[0].count, 3u);
}

}  // namespace
}  // namespace gander::vet
