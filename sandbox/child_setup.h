// The sandbox init's side of start-up, after clone. It only applies what the parent prepared:
// no allocation, no logging, failures reported as {step, errno} over the sync socket.
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include "network/netns_sockets.h"
#include "sandbox/child_step.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"

namespace gander::sandbox {

// The init and the gVisor start open the broker's sockets in the sandbox's network namespace
// (BringUpLoopback, OpenDnsStub, OpenEgressSockets): network/netns_sockets.h.
using network::BringUpLoopback;
using network::OpenDnsStub;

// A mount with its paths already joined to the staging directories; the strings point into
// ChildPlan::strings.
struct PreparedMount {
  MountOp::Kind kind;
  const char* source;   // "/oldroot/..." (or link text for a symlink)
  const char* target;   // "/newroot/..."
  const char* options;  // tmpfs or cgroup mount data; "" for none
  bool writable;
  bool executable;
  bool optional = false;  // MountOp::optional
};

// Everything ChildMain reads; built by the parent before clone, never modified after. The
// mounts' strings sit in one buffer: the parent frees the plan while the init still shares its
// pages, and each free of a string of its own cost a copy-on-write fault.
struct ChildPlan {
  const SandboxSpec* spec = nullptr;
  std::string strings;  // the mounts' strings, each NUL-terminated
  std::vector<PreparedMount> mounts;
  std::vector<char*> argv;  // null-terminated, pointing into spec
  std::vector<char*> envp;
  int sync_fd = -1;
  pid_t parent = 0;  // gander: if it is gone by the time PDEATHSIG is armed, the init exits
  // The run's cgroup.procs (no pid namespace: listed and killed at gander's death), or null.
  const char* cgroup_procs = nullptr;
  bool unshare_cgroup = false;  // a cgroup namespace after the parent moved the init
  int init_image = -1;          // gander-init's memfd (InitImageFd), or -1
  // With spec->compile_seccomp: room for the instructions the parent sends after the clone
  // (the child cannot allocate), BPF_MAXINSNS of them.
  sock_filter* seccomp_room = nullptr;
};

// The sync socket's number in the child, fixed so that the seccomp filter (compiled in the
// parent) can name it: the one sendmsg that hands the listener over must not be notified.
inline constexpr int kChildSyncFd = 3;
// gander-init's image in the init, until its execveat (close-on-exec).
inline constexpr int kChildInitImageFd = 4;

// Runs as the sandbox init (pid 1 of the new pid namespace, or a plain child without one).
// Never returns.
[[noreturn]] void ChildMain(const ChildPlan& plan);

}  // namespace gander::sandbox
