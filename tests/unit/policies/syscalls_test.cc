// `syscalls.allow`: parsing, errors, merging with `extends`, show, diff, fingerprint and the
// gVisor backend's refusal.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "policies/backend.h"
#include "policies/diff.h"
#include "policies/expand.h"
#include "policies/fingerprint.h"
#include "policies/loader.h"
#include "policies/parser.h"
#include "tests/unit/temp_dir_test.h"

namespace gander::policies {
namespace {

Policy Parse(const std::string& yaml, const std::string& file = "p.yaml") {
  auto policy = ParsePolicy(yaml, file);
  EXPECT_TRUE(policy) << (policy ? "" : policy.error().message);
  return policy ? *policy : Policy{};
}

std::vector<std::string> Names(const Policy& p) {
  std::vector<std::string> out;
  for (const auto& e : *p.syscalls.allow) out.push_back(e.name);
  return out;
}

TEST(SyscallsKeyTest, AbsentMeansNoAllowlist) {
  Policy p = Parse("version: 1\n");
  EXPECT_FALSE(p.syscalls.allow);
  auto expanded = Expand(p, {"/ws", "/home/u", {}});
  ASSERT_TRUE(expanded);
  EXPECT_FALSE(expanded->syscalls_allow);
  EXPECT_EQ(CanonicalText(*expanded), "monitor.files 1\n");  // fingerprint unchanged
}

TEST(SyscallsKeyTest, ParsesNamesWithTheirMarks) {
  Policy p = Parse("version: 1\nsyscalls:\n  allow: [read, write, openat]\n");
  ASSERT_TRUE(p.syscalls.allow);
  EXPECT_EQ(Names(p), (std::vector<std::string>{"read", "write", "openat"}));
  EXPECT_EQ(FormatMark((*p.syscalls.allow)[2].mark), "p.yaml:3:24");
  EXPECT_TRUE(Parse("version: 1\nsyscalls: {allow: []}\n").syscalls.allow->empty());
}

TEST(SyscallsKeyTest, AnUnknownNameIsAnErrorAtItsPosition) {
  auto p = ParsePolicy("version: 1\nsyscalls:\n  allow: [read, write, close, foo]\n", "p.yaml");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message,
            "p.yaml:3:31: syscalls.allow[3]: unknown syscall 'foo' (not a syscall name on this "
            "architecture)");
  // A number is not a name, and neither is a syscall of another architecture.
  EXPECT_FALSE(ParsePolicy("version: 1\nsyscalls: {allow: ['0']}\n", "p.yaml"));
  EXPECT_FALSE(ParsePolicy("version: 1\nsyscalls: {allow: [socketcall]}\n", "p.yaml"));
}

TEST(SyscallsKeyTest, ShapeErrors) {
  auto not_list = ParsePolicy("version: 1\nsyscalls: {allow: read}\n", "p.yaml");
  ASSERT_FALSE(not_list);
  EXPECT_EQ(not_list.error().message,
            "p.yaml:2:19: syscalls.allow: expected a list of syscall names");
  auto unknown_key = ParsePolicy("version: 1\nsyscalls: {deny: [read]}\n", "p.yaml");
  ASSERT_FALSE(unknown_key);
  EXPECT_NE(
      unknown_key.error().message.find("unknown key 'deny' in syscalls (expected one of: allow)"),
      std::string::npos);
}

TEST(SyscallsKeyTest, ShowsSortedAndRoundTrips) {
  Policy p = Parse("version: 1\nsyscalls: {allow: [write, read, read]}\n");
  std::string yaml = ToYaml(p);
  EXPECT_NE(yaml.find("syscalls:\n  allow: [read, write]"), std::string::npos) << yaml;
  EXPECT_EQ(Names(Parse(yaml)), (std::vector<std::string>{"read", "write"}));
}

TEST(SyscallsKeyTest, EntersTheFingerprintSortedAndDistinct) {
  auto a = Expand(Parse("version: 1\nsyscalls: {allow: [write, read, read]}\n"), {"/w", "/h", {}});
  auto empty = Expand(Parse("version: 1\nsyscalls: {allow: []}\n"), {"/w", "/h", {}});
  ASSERT_TRUE(a && empty);
  EXPECT_EQ(*a->syscalls_allow, (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(CanonicalText(*a), "monitor.files 1\nsyscalls.allow read write\n");
  EXPECT_EQ(CanonicalText(*empty), "monitor.files 1\nsyscalls.allow\n");
  EXPECT_NE(PolicySha256(*empty), PolicySha256(*Expand(Parse("version: 1\n"), {"/w", "/h", {}})));
}

TEST(SyscallsKeyTest, DiffNamesAddedAndRemovedSyscalls) {
  Policy a = Parse("version: 1\nsyscalls: {allow: [read, write]}\n");
  Policy b = Parse("version: 1\nsyscalls: {allow: [read, openat]}\n");
  auto lines = DiffRules(a, b);
  EXPECT_EQ(lines, (std::vector<std::string>{"- syscalls.allow write", "+ syscalls.allow openat"}));
  auto none = DiffRules(Parse("version: 1\n"), a);
  EXPECT_EQ(none.front(), "+ syscalls.allow (2 names)");
}

// A directory of each test's own: ctest runs these tests side by side (scripts/check.sh), and
// one shared directory had each SetUp rewrite base.yaml while another test read it.
class SyscallsMergeTest : public unit::TempDirTest {
 protected:
  SyscallsMergeTest() : TempDirTest("syscalls-merge") {}
  void SetUp() override {
    TempDirTest::SetUp();
    if (HasFatalFailure()) return;
    std::ofstream(dir_ + "/base.yaml") << "version: 1\nsyscalls: {allow: [read, write, close]}\n";
    std::ofstream(dir_ + "/open.yaml") << "version: 1\n";
  }
  Result<Policy> Resolve(const std::string& yaml) {
    auto leaf = ParsePolicy(yaml, dir_ + "/leaf.yaml");
    if (!leaf) return leaf.error();
    return ResolveExtends(*leaf, {});
  }
};

TEST_F(SyscallsMergeTest, ADerivedPolicyWithoutAListKeepsTheBases) {
  auto merged = Resolve("version: 1\nextends: base.yaml\n");
  ASSERT_TRUE(merged);
  EXPECT_EQ(Names(*merged), (std::vector<std::string>{"read", "write", "close"}));
}

TEST_F(SyscallsMergeTest, ADerivedListNarrowsTheBases) {
  auto merged = Resolve("version: 1\nextends: base.yaml\nsyscalls: {allow: [read, close]}\n");
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ(Names(*merged), (std::vector<std::string>{"read", "close"}));
}

TEST_F(SyscallsMergeTest, ADerivedListCannotWidenTheBases) {
  auto merged = Resolve("version: 1\nextends: base.yaml\nsyscalls: {allow: [read, openat]}\n");
  ASSERT_FALSE(merged);
  const std::string& message = merged.error().message;
  EXPECT_TRUE(message.starts_with(dir_ + "/leaf.yaml:3:26: syscalls.allow[1]: 'openat' is not in "
                                         "the base policy's allowlist ("))
      << message;
  EXPECT_TRUE(message.ends_with(dir_ + "/base.yaml:2:19); a derived policy's allowlist can "
                                       "only narrow its base's"))
      << message;
}

TEST_F(SyscallsMergeTest, ABaseWithoutAListTakesTheDerivedOne) {
  auto merged = Resolve("version: 1\nextends: open.yaml\nsyscalls: {allow: [openat]}\n");
  ASSERT_TRUE(merged);
  EXPECT_EQ(Names(*merged), (std::vector<std::string>{"openat"}));
}

TEST(SyscallsBackendTest, GvisorHonoursTheAllowlist) {
  // Through runsc --oci-seccomp (sandbox/gvisor/bundle.h); see launcher's gvisor tests.
  Policy p = Parse("version: 1\nbackend: gvisor\nsyscalls: {allow: [read]}\n");
  EXPECT_TRUE(CheckBackendSupport(p, Backend::kGvisor));
  EXPECT_TRUE(CheckBackendSupport(p, Backend::kNative));
}

}  // namespace
}  // namespace gander::policies
