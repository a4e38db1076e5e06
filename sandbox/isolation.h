// What the kernel allows here and which isolation level a run gets. The probe touches the
// kernel; choosing and explaining the level is pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sandbox/child_step.h"

namespace gander::sandbox {

// Ordered: each level includes the ones below it.
enum class IsolationLevel {
  kBasic = 0,  // empty environment, no_new_privs, new session, fds closed, rlimits
  kSeccomp,    // + the syscall filter
  kLandlock,   // + Landlock filesystem rules (no namespaces)
  kFull,       // + user, mount, pid, net, ipc, uts, cgroup namespaces
};
const char* LevelName(IsolationLevel level);
Result<IsolationLevel> ParseLevel(const std::string& name);

struct KernelFeatures {
  std::string release;
  bool user_namespaces = false;
  std::string user_namespaces_detail;                  // why not, when refused
  std::optional<ChildReport> user_namespaces_failure;  // the probe's step and errno
  int landlock_abi = 0;
  bool seccomp_filter = false;
  bool seccomp_user_notif = false;
  bool pid_max_per_namespace = false;  // Linux 6.14+: a process cap that binds root too
  std::vector<std::string> notes;      // sysctls and restrictions worth knowing
};

// Probes the running kernel. With `try_user_namespaces` a short-lived child tries to create
// the namespaces gander uses and to mount inside them (as AppArmor's restriction lets the
// namespace be created but not used).
KernelFeatures ProbeKernel(bool try_user_namespaces);

// The level a sandbox with these layers in force provides.
IsolationLevel LevelOf(bool namespaces, bool landlock, bool seccomp);

// How the network is confined (docs/sandbox.md, "Network"):
enum class EgressMode {
  kNone,         // no seccomp notification, or neither namespaces nor Landlock ABI 4:
                 // no network (socket() refused for IPv4 and IPv6 without namespaces)
  kBrokerOnly,   // no network namespace: the broker sees every connect and send on the
                 // host's network, Landlock refuses the extension's own TCP connect and bind
  kNetnsBroker,  // an empty network namespace behind the broker, the DNS stub in it
};
EgressMode EgressModeOf(bool namespaces, int landlock_abi, bool seccomp_notify);
const char* EgressModeName(EgressMode mode);

}  // namespace gander::sandbox
