// The sandbox init's side of start-up, after clone. It only applies what the parent prepared:
// no allocation, no logging, failures reported as {step, errno} over the sync socket.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <vector>

#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"

namespace gander::launcher {

// Setup steps, in the order the child runs them; their names are in kChildStepNames.
enum class ChildStep : int32_t {
  kWaitParent,
  kSetsid,
  kMountPrivate,
  kMountBase,
  kPivotBase,
  kMount,
  kPidMax,
  kMemfdNoexec,
  kProcReadOnly,
  kUnmountOld,
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
  kListener,  // not a failure: the seccomp listener fd travels with this report
  kFork,
  kExec,
  kStarted,  // not a failure: the extension was exec'd
};
const char* ChildStepName(ChildStep step);

// Brings up `lo` in the calling process's network namespace; returns 0 or the errno.
// Async-signal-safe (also used by the gVisor backend between fork and exec).
int BringUpLoopback();
// Opens the DNS stub's sockets (UDP and a TCP listener on 127.0.0.1:53) in the calling
// process's network namespace; left invalid where that fails. Async-signal-safe. With
// `host_loopback` (no network namespace): only the TCP listener, on a free port.
void OpenDnsStub(monitor::EgressSockets& sockets, bool host_loopback = false);

// What the child sends the parent: one message per outcome.
struct ChildReport {
  ChildStep step;
  int32_t err;     // errno, 0 with kStarted
  int32_t detail;  // index of the mount or rlimit at fault; the extension's pid with kStarted
};

// A mount with its paths already joined to the staging directories.
struct PreparedMount {
  MountOp::Kind kind;
  std::string source;   // "/oldroot/..." (or link text for a symlink)
  std::string target;   // "/newroot/..."
  std::string options;  // tmpfs mount data
  bool writable;
  bool executable;
  bool optional = false;  // MountOp::optional
};

// Everything ChildMain reads; built by the parent before clone, never modified after.
struct ChildPlan {
  const SandboxSpec* spec;
  std::vector<PreparedMount> mounts;
  std::vector<char*> argv;  // null-terminated, pointing into spec
  std::vector<char*> envp;
  int sync_fd;
};

// The sync socket's number in the child, fixed so that the seccomp filter (compiled in the
// parent) can name it: the one sendmsg that hands the listener over must not be notified.
inline constexpr int kChildSyncFd = 3;

// Runs as the sandbox init (pid 1 of the new pid namespace, or a plain child without one).
// Never returns.
[[noreturn]] void ChildMain(const ChildPlan& plan);

}  // namespace gander::launcher
