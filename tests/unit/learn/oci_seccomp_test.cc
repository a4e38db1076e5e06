#include "learn/oci_seccomp.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>
#include <random>

namespace gander::learn {
namespace {

using nlohmann::json;
using policies::ArgPattern;

bool Denied(const std::vector<ArgPattern>& deny, uint64_t v) {
  for (const auto& p : deny) {
    if ((v & p.mask) == p.value) return true;
  }
  return false;
}

bool Allowed(const std::vector<std::pair<uint64_t, uint64_t>>& allow, uint64_t v) {
  for (const auto& [mask, value] : allow) {
    if ((v & mask) == value) return true;
  }
  return false;
}

// The allow patterns are the exact complement of the floor's deny patterns, for every entry of
// the floor: checked on the patterns' own values, their neighbours, high bits and random values.
TEST(OciSeccomp, AllowedPatternsAreTheExactComplement) {
  std::mt19937_64 rng(9);
  for (const auto& entry : policies::DeniedSyscalls({.deny_host_sockets = true})) {
    if (entry.any_of.empty()) continue;
    auto allow = AllowedPatterns(entry.any_of);
    ASSERT_FALSE(allow.empty()) << entry.label;
    std::vector<uint64_t> probes = {0, 1, ~0ULL, 1ULL << 32, 1ULL << 63};
    for (const auto& p : entry.any_of) {
      for (uint64_t v : std::initializer_list<uint64_t>{p.value, p.value + 1, p.value - 1,
                                                        p.value | (uint64_t{1} << 40), ~p.value}) {
        probes.push_back(v);
      }
    }
    for (int i = 0; i < 20000; ++i) probes.push_back(rng() >> (rng() % 64));
    for (uint64_t v : probes) {
      EXPECT_EQ(Allowed(allow, v), !Denied(entry.any_of, v)) << entry.label << " value " << v;
    }
  }
}

TEST(OciSeccomp, NamespaceFlagsGiveOneRule) {
  std::vector<ArgPattern> deny;
  for (uint64_t f : {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID}) deny.push_back({0, f, f});
  auto allow = AllowedPatterns(deny);
  ASSERT_EQ(allow.size(), 1u);
  EXPECT_EQ(allow[0],
            (std::pair<uint64_t, uint64_t>{CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID, 0}));
}

TEST(OciSeccomp, ProfileAllowsWhatWasSeenButNeverTheFloor) {
  Learned l;
  l.syscalls = {{"read", 10}, {"execve", 1}, {"ptrace", 2}, {"clone", 3},
                {"ioctl", 4}, {"nr 999", 1}, {"openat", 7}};
  auto floor = policies::DeniedSyscalls({});
  auto profile = OciSeccompProfile(l, floor, "SCMP_ARCH_X86_64");
  json j = json::parse(profile.json);
  EXPECT_EQ(j["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(j["defaultErrnoRet"], 1);
  EXPECT_EQ(j["architectures"], json::array({"SCMP_ARCH_X86_64"}));
  std::vector<std::string> plain;
  std::map<std::string, int> conditional;
  int clone3_errno = 0;
  for (const auto& s : j["syscalls"]) {
    if (s["action"] == "SCMP_ACT_ERRNO" && s["names"] == json::array({"clone3"})) {
      clone3_errno = s["errnoRet"];
      continue;
    }
    ASSERT_EQ(s["action"], "SCMP_ACT_ALLOW");
    if (!s.contains("args")) {
      for (const auto& n : s["names"]) plain.push_back(n);
      continue;
    }
    ASSERT_EQ(s["args"].size(), 1u);
    EXPECT_EQ(s["args"][0]["op"], "SCMP_CMP_MASKED_EQ");
    for (const auto& n : s["names"]) ++conditional[n];
  }
  EXPECT_EQ(plain, (std::vector<std::string>{"execve", "openat", "read"}));
  EXPECT_EQ(conditional["clone"], 1);  // flags & CLONE_NEW* == 0
  EXPECT_GT(conditional["ioctl"], 1);  // every request but TIOCSTI and TIOCLINUX
  EXPECT_FALSE(conditional.contains("ptrace"));
  EXPECT_EQ(clone3_errno, ENOSYS);  // glibc falls back to clone only on ENOSYS
  ASSERT_EQ(profile.left_out.size(), 2u);
  EXPECT_TRUE(profile.left_out[0].starts_with("nr 999")) << profile.left_out[0];
  EXPECT_TRUE(profile.left_out[1].starts_with("ptrace (2x)")) << profile.left_out[1];
}

}  // namespace
}  // namespace gander::learn
