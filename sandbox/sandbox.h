// Starting a sandbox: the parent prepares everything as plain data (SandboxSpec), clones the
// sandbox init into new namespaces, writes its uid/gid maps and waits until the extension has
// been exec'd (or the child reports which setup step failed and why).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "network/egress.h"
#include "sandbox/cgroup_limit.h"
#include "sandbox/child_step.h"
#include "sandbox/filesystem_plan.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp_filter.h"

namespace gander::sandbox {

struct SandboxSpec {
  bool use_namespaces = true;
  std::vector<MountOp> mounts;       // used with namespaces
  std::vector<CgroupMount> cgroups;  // the host's, shown read-only (sandbox/cgroup_view.h)
  landlock::Ruleset landlock;        // abi 0: not applied
  SeccompProgram seccomp;            // empty: not applied (but see compile_seccomp)
  std::vector<std::pair<int, rlim_t>> rlimits;
  // Bounds of every private tmpfs (policies::TmpfsSize/TmpfsInodes): without them /tmp and
  // $HOME could take half the host's memory, outside every rlimit. 0: unbounded.
  uint64_t tmpfs_size = 0;
  uint64_t tmpfs_inodes = 0;
  uint64_t pid_max = 0;  // per-namespace pid cap (Linux 6.14+), 0: none
  // A cgroup of the run's own (sandbox/cgroup_limit.h), when `cgroup.kind` is not kNone: the
  // init is moved in before it may exec the extension, and with namespaces it makes its cgroup
  // namespace only then (rooted at that cgroup).
  CgroupPlace cgroup;
  CgroupLimits cgroup_limits;
  std::string cgroup_name = RunCgroup::NextName();  // what `cgroups` points at (own_dir)
  // vm.memfd_noexec=2 in the pid namespace (Linux 6.3+; with namespaces only): no memfd the
  // extension makes can be executed. Without it the seccomp filter refuses such memfds.
  bool memfd_noexec = false;
  std::string hostname = "gander";
  // The egress broker decides connect/send; with namespaces the init hands over its sockets.
  bool egress = false;
  std::string cwd;
  std::string exec_path;  // absolute, resolved by the parent
  std::vector<std::string> argv;
  std::vector<std::string> envp;  // NAME=value
  int stdin_fd = 0;               // the extension's ends of the relay pipes
  int stdout_fd = 1;
  int stderr_fd = 2;
  // Readable once gander is told to end (an unread signalfd of its held termination signals):
  // the waits for the init's set-up reports watch it too, so a root that hangs while it is
  // built (a bind mount of a hung FUSE or NFS path) does not hold gander. -1: not watched.
  int stop_fd = -1;
  // gander's own work that does not depend on how the start ends, done while the init builds
  // the sandbox (~1 ms in which gander would only wait for its report): called once, after
  // the clone. Never in the child.
  std::function<void()> while_building;
  // The seccomp program, compiled after the clone, while the init builds the sandbox, instead
  // of being given in `seccomp` (its ~0.2 ms then leave the start's path): StartSandbox sends
  // its instructions to the init over the sync socket, for the extension to load, and returns
  // the whole program in SandboxProcess::seccomp. `seccomp.notify` says beforehand whether it
  // notifies (the extension then hands over a listener). An error ends the start.
  std::function<Result<SeccompProgram>()> compile_seccomp;
};

// The sandbox's mount namespace, held by gander from the start where the kernel can let it go
// in the background (common/background_close.h). The last reference to a mount namespace waits
// for an RCU grace period when it goes (synchronize_rcu_expedited, 0.1-0.5 ms here): dropped by
// the init's exit, as it would be, it delays the init's reaping, which gander's exit waits for.
// Released, a kernel worker drops it, shortly after or once gander is gone. Nothing runs in it
// by then: it only holds the sandbox's mounts a few ms longer.
class HeldMountNamespace {
 public:
  HeldMountNamespace() = default;
  HeldMountNamespace(HeldMountNamespace&&) = default;
  HeldMountNamespace& operator=(HeldMountNamespace&& other) noexcept;
  ~HeldMountNamespace() { Release(); }
  // Takes the mount namespace of `pid` (gander's child), where it is worth holding.
  static HeldMountNamespace Of(pid_t pid);
  explicit operator bool() const { return static_cast<bool>(ns_); }
  void Release();

 private:
  UniqueFd ns_;
};

// What the parent learns from a started sandbox.
struct SandboxProcess {
  pid_t pid = -1;  // the sandbox init, in gander's pid namespace
  UniqueFd pidfd;  // pidfd of the init: poll for exit, send signals
  // The extension's pid as the init sees it (in the sandbox's pid namespace, if any): from the
  // listener's report (before the extension's first notification), then the start report.
  pid_t extension_pid = -1;
  bool namespaces = false;
  std::optional<SeccompProgram> seccomp;  // what spec.compile_seccomp made
  // With seccomp notification: the listener, received before the extension's execve. The
  // start is then confirmed (or its failure reported) later on `sync`: see ReadStartReport.
  UniqueFd listener;
  // StartSandbox returned once the sandbox's root and network were up (the egress sockets'
  // report), before the listener: AwaitListener receives it. The caller meanwhile prepares what
  // serves it, while the init forks the extension and applies Landlock and seccomp.
  bool listener_pending = false;
  UniqueFd sync;
  // With spec.egress and namespaces: sockets in the sandbox's network namespace.
  network::EgressSockets egress;
  bool started = false;  // the extension's execve is confirmed
  // The init's report of the extension's exit code, sent once nothing but the init is left
  // and before its own exit (ReadExitReport): the run's end need not wait for the kernel's
  // teardown of the sandbox to begin. What needs the init gone waits for it (InitRemains).
  std::optional<int> reported_exit;
  // The run's cgroup, when spec.cgroup offered one: emptied (SIGKILL) and removed when this
  // goes, after the init.
  RunCgroup cgroup;
  HeldMountNamespace mount_ns;
};

// The egress sockets the init hands over, in this order: bit i of the report's detail says
// whether slot i is among its fds.
inline constexpr UniqueFd network::EgressSockets::*kEgressSlots[] = {
    &network::EgressSockets::relay_v4,  &network::EgressSockets::relay_v6,
    &network::EgressSockets::park_v4,   &network::EgressSockets::park_v6,
    &network::EgressSockets::refuse_v4, &network::EgressSockets::refuse_v6,
    &network::EgressSockets::dns_udp,   &network::EgressSockets::dns_tcp};
inline constexpr int kEgressSlotCount = static_cast<int>(std::size(kEgressSlots));

// Why a sandbox could not be started: the child's step that failed (child_step.h) and its
// errno, or nothing when the start failed otherwise (the init died, the parent's own set-up).
struct StartFailure {
  std::optional<ChildStep> step;
  int err = 0;
  std::string where;  // the mount target at fault, with kMount

  // gander was told to end (spec.stop_fd) before the sandbox ran: the init was killed, no step
  // failed.
  bool stopped = false;

  bool reported() const { return step.has_value(); }
  bool exec_failed() const { return step == ChildStep::kExec; }  // the command itself
  // "mount /x" or "execve": the step as people read it.
  std::string Describe() const;
};

// Returns the running sandbox, or an Error whose message names the failed step (the code is
// the errno), `failure` saying which. A clone refused (user namespaces unavailable here) is
// Error{code, "clone"} with failure->step kClone, so the caller may degrade
// (NamespacesRefused): every step that can say so comes before the return. With egress sockets
// it returns when they arrive, with `listener_pending`. When spec.stop_fd becomes readable
// first, the init is killed and waited for, and `failure->stopped` is set.
Result<SandboxProcess> StartSandbox(const SandboxSpec& spec, StartFailure* failure);

// Receives the listener StartSandbox left pending (or the start report, or a failure). True
// when it came (or the extension is running); false with `failure` set when a step failed,
// with step kListener and EPIPE when the init is gone; false with failure->stopped when
// spec.stop_fd became readable first (the init is left to the caller).
bool AwaitListener(SandboxProcess& process, const SandboxSpec& spec, StartFailure* failure);

// Reads the report that confirms the start once the listener arrived first. Returns true when
// the extension is running (sets process.started and extension_pid); false with `failure`
// set when it could not be executed; false with failure->step empty when nothing came (the
// init is gone).
bool ReadStartReport(SandboxProcess& process, const SandboxSpec& spec, StartFailure* failure);

// Reads the init's next message once the extension runs: its exit report sets
// process.reported_exit (an exit code, 0-255). False when nothing more will come (the report
// came, or the init is gone); anything else on the socket is ignored.
bool ReadExitReport(SandboxProcess& process);

// What of a sandbox must outlive its init: the init's pidfd, to reap it, the run's cgroup,
// removed once the init is gone, and the held mount namespace, released after both. Taken at
// the run's end (TakeInitRemains), so the rest of the sandbox (our descriptors, the listener,
// the egress sockets, the private directories) goes while the init exits, not after that.
struct InitRemains {
  UniqueFd pidfd;
  RunCgroup cgroup;
  HeldMountNamespace mount_ns;

  // Waits until the init has exited (and reaps it), if it was not reaped yet, then removes
  // the cgroup and releases the mount namespace. The init is SIGKILLed first: after its exit
  // report that changes nothing; one that did not report is there only if the loop broke off,
  // and goes now.
  void AwaitExit();
};
InitRemains TakeInitRemains(SandboxProcess& process);

}  // namespace gander::sandbox
