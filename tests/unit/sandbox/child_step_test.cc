// ChildStep's wire form and the decisions made on it (sandbox/child_step.h): what every child
// of gander's (the sandbox init, the broker's set-up before runsc, the user-namespace probe)
// sends on its pipe, and the fallback's reading of it.
#include "sandbox/child_step.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

namespace gander::sandbox {
namespace {

TEST(ChildStep, EveryStepRoundTripsWithItsErrnoAndDetail) {
  for (int32_t i = 0; i <= static_cast<int32_t>(ChildStep::kLast); ++i) {
    const ChildReport sent{static_cast<ChildStep>(i), EACCES + i, -7 * i};
    unsigned char wire[kChildReportBytes];
    EncodeChildReport(sent, wire);
    auto got = DecodeChildReport(wire, sizeof(wire));
    ASSERT_TRUE(got) << "step " << i;
    EXPECT_EQ(got->step, sent.step);
    EXPECT_EQ(got->err, sent.err);
    EXPECT_EQ(got->detail, sent.detail);
  }
}

TEST(ChildStep, AShortMessageOrAnUnknownStepIsRefused) {
  unsigned char wire[kChildReportBytes];
  EncodeChildReport({ChildStep::kExec, ENOENT, 0}, wire);
  for (size_t n = 0; n < sizeof(wire); ++n) EXPECT_FALSE(DecodeChildReport(wire, n)) << n;
  for (int32_t step : {-1, static_cast<int32_t>(ChildStep::kLast) + 1, INT32_MAX, INT32_MIN}) {
    std::memcpy(wire, &step, sizeof(step));
    EXPECT_FALSE(DecodeChildReport(wire, sizeof(wire))) << step;
  }
}

TEST(ChildStep, EveryStepHasItsOwnName) {
  std::set<std::string> names;
  for (int32_t i = 0; i <= static_cast<int32_t>(ChildStep::kLast); ++i) {
    std::string name = ChildStepName(static_cast<ChildStep>(i));
    EXPECT_NE(name, "unknown step") << i;
    EXPECT_TRUE(names.insert(name).second) << "two steps are called " << name;
  }
  EXPECT_EQ(std::string(ChildStepName(static_cast<ChildStep>(999))), "unknown step");
  EXPECT_EQ(DescribeChildReport({ChildStep::kExec, ENOENT, 0}),
            std::string("execve: ") + std::strerror(ENOENT));
}

// The fallback to no namespaces: a refused clone, or namespaces created without the power to
// mount (AppArmor's restriction). Nothing else degrades the run, an exec failure least of all.
TEST(ChildStep, NamespacesAreRefusedAtCloneOrAtTheFirstMountsOnly) {
  for (int err : {EPERM, ENOSPC, EINVAL, EUSERS}) {
    EXPECT_TRUE(NamespacesRefused(ChildStep::kClone, err)) << err;
  }
  EXPECT_FALSE(NamespacesRefused(ChildStep::kClone, ENOMEM));
  for (ChildStep step : {ChildStep::kMountPrivate, ChildStep::kMountBase}) {
    EXPECT_TRUE(NamespacesRefused(step, EPERM));
    EXPECT_TRUE(NamespacesRefused(step, EACCES));
    EXPECT_FALSE(NamespacesRefused(step, ENOENT));
  }
  for (ChildStep step : {ChildStep::kMount, ChildStep::kPivotRoot, ChildStep::kExec,
                         ChildStep::kIdMaps, ChildStep::kLandlock, ChildStep::kSeccomp}) {
    EXPECT_FALSE(NamespacesRefused(step, EPERM)) << ChildStepName(step);
  }
}

}  // namespace
}  // namespace gander::sandbox
