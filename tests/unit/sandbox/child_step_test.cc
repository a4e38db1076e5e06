// ChildStep's wire form and the decisions made on it (sandbox/child_step.h): what every child
// of gander's (the sandbox init, the broker's set-up before runsc, the user-namespace probe)
// sends on its pipe, and the fallback's reading of it.
#include "sandbox/child_step.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "sandbox/init/init_loop.h"
#include "sandbox/sandbox.h"

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

// The init's exit report, as gander-init writes it (three int32: init::kExitReportStep, 0, the
// code; it has no EncodeChildReport), read by gander on the sync socket once the extension
// runs: the code is taken (as an exit code, 0-255), another message is passed over, and EOF
// or the report ends the reading.
TEST(ChildStep, TheInitsExitReportIsReadAsAnExitCode) {
  auto report = [](int step, int code, bool then_close) {
    int pair[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
    SandboxProcess p;
    p.sync = UniqueFd(pair[0]);
    const int32_t fields[3] = {step, 0, code};
    EXPECT_EQ(write(pair[1], fields, sizeof(fields)), static_cast<ssize_t>(sizeof(fields)));
    if (then_close) close(pair[1]);
    bool more = ReadExitReport(p);
    if (!then_close) close(pair[1]);
    return std::make_pair(more, p.reported_exit);
  };
  EXPECT_EQ(report(init::kExitReportStep, 7, false), std::make_pair(false, std::optional<int>(7)));
  EXPECT_EQ(report(init::kExitReportStep, 137, true),
            std::make_pair(false, std::optional<int>(137)));
  // An exit code is a byte, whatever the int holds.
  EXPECT_EQ(report(init::kExitReportStep, 300, true),
            std::make_pair(false, std::optional<int>(44)));
  EXPECT_EQ(report(init::kExitReportStep, -1, true),
            std::make_pair(false, std::optional<int>(255)));
  // Not the exit report: the reading goes on, nothing is taken.
  EXPECT_EQ(report(static_cast<int>(ChildStep::kStarted), 7, false),
            std::make_pair(true, std::optional<int>()));
  // Not a report at all (an unknown step): nothing more is read, nothing taken.
  EXPECT_EQ(report(999, 7, false), std::make_pair(false, std::optional<int>()));

  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  SandboxProcess gone;
  gone.sync = UniqueFd(pair[0]);
  close(pair[1]);
  EXPECT_FALSE(ReadExitReport(gone)) << "EOF: the init is gone without a report";
  EXPECT_FALSE(gone.reported_exit);
}

}  // namespace
}  // namespace gander::sandbox
