#include "sandbox/isolation.h"

#include <gtest/gtest.h>

#include "sandbox/seccomp_filter.h"

namespace gander::sandbox {
namespace {

TEST(Isolation, LevelsFollowTheLayersInForce) {
  EXPECT_EQ(LevelOf(true, true, true), IsolationLevel::kFull);
  EXPECT_EQ(LevelOf(false, true, true), IsolationLevel::kLandlock);
  EXPECT_EQ(LevelOf(false, false, true), IsolationLevel::kSeccomp);
  EXPECT_EQ(LevelOf(true, true, false), IsolationLevel::kBasic);
}

TEST(Isolation, ParsesLevelNames) {
  EXPECT_EQ(*ParseLevel("landlock"), IsolationLevel::kLandlock);
  auto bad = ParseLevel("strong");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("expected one of"), std::string::npos);
}

TEST(SeccompFilter, CompilesTheDenyListToBpf) {
  auto program = CompileSeccompFilter();
  ASSERT_TRUE(program.ok()) << program.error().Describe();
  EXPECT_GT(program->instructions.size(), 20u);
  auto has = [&](const std::string& name) {
    for (const auto& d : program->denied_syscalls) {
      if (d == name) return true;
    }
    return false;
  };
  for (const char* name : {"ptrace", "mount", "bpf", "io_uring_setup", "keyctl", "clone3",
                           "open_by_handle_at", "perf_event_open", "userfaultfd",
                           "process_vm_readv", "unshare(CLONE_NEW*)", "ioctl(TIOCSTI/TIOCLINUX)"}) {
    EXPECT_TRUE(has(name)) << name;
  }
}

}  // namespace
}  // namespace gander::sandbox
