// How a child of gander's says why it could not start: the step that failed and its errno,
// one fixed-size message over the pipe or socket it shares with the parent. One vocabulary for
// every child that reports this way: the sandbox init (child_setup.cc), the broker's set-up
// before runsc's exec (gvisor/runsc.cc) and the user-namespace probe (isolation.cc). Callers
// decide on the step and the errno, never on the text (ChildStepName is for people).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gander::sandbox {

// Steps, in the order the sandbox init runs them, then those only the other children have;
// their names are in kChildStepNames (child_step.cc).
enum class ChildStep : int32_t {
  kWaitParent,
  kSetsid,
  kCgroupNamespace,
  kMountPrivate,
  kMountBase,
  kPivotBase,
  kMount,
  kPidMax,
  kMemfdNoexec,
  kProcReadOnly,
  kPivotRoot,
  kRootReadOnly,
  kChdir,
  kHostname,
  kLoopback,
  kEgressSockets,  // not a failure when err is 0: the egress sockets travel with this report
  kRlimit,
  kCapabilities,
  kNoNewPrivs,
  kLandlock,
  kSeccomp,
  kListener,  // not a failure when err is 0: the seccomp listener travels with this report
  kFork,
  kExec,
  kStarted,  // not a failure: the extension was exec'd
  // Not a failure: the extension exited (detail: its status as the init's exit code) and
  // everything else in the sandbox is gone; sent by the init just before its own exit, whose
  // teardown of the namespaces the parent need not wait for to know it (init::kExitReportStep).
  kExited,
  // Only the broker's set-up (runsc) and the probe: they unshare and map themselves.
  kUnshare,
  kIdMaps,
  kProbeMount,  // the probe's private remount and tmpfs
  // The parent's own clone of the sandbox init (StartSandbox), so that a refused namespace is
  // one answer whether the kernel says it at clone or at the first mount.
  kClone,
  kLast = kClone,
};
const char* ChildStepName(ChildStep step);

// One message: the step, its errno (0 when the step is a success report), and a detail (index
// of the mount or rlimit at fault; the extension's pid with kStarted; the egress slots; the exit
// code with kExited).
struct ChildReport {
  ChildStep step;
  int32_t err;
  int32_t detail;
};

// The wire form, host byte order: both ends are the same binary. Encode is
// async-signal-safe (it runs between fork and exec); Decode refuses a short message and an
// unknown step.
inline constexpr size_t kChildReportBytes = 3 * sizeof(int32_t);
void EncodeChildReport(const ChildReport& report, unsigned char (&out)[kChildReportBytes]);
std::optional<ChildReport> DecodeChildReport(const void* data, size_t size);

// "STEP: strerror(err)", for a message.
std::string DescribeChildReport(const ChildReport& report);

// Did the child fail because user namespaces are unavailable here: refused at clone, or created
// without the power to mount (AppArmor's restriction)? The run then degrades to Landlock and
// seccomp unless --require full.
bool NamespacesRefused(ChildStep step, int err);

}  // namespace gander::sandbox
