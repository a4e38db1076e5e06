// Running an OCI bundle under gVisor's `runsc`, rootless and without a network, and cleaning
// up after it. Each run owns a directory (bundle, root view, runsc's state, the strace pipe)
// named after gander's pid; a gander that was SIGKILLed cannot remove its own, so every start
// first removes those of ganders that are gone.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "network/egress.h"
#include "sandbox/gvisor/bundle.h"

namespace gander::sandbox::gvisor {

inline constexpr const char* kRunscBinary = "runsc";
inline constexpr const char* kStraceAll = "*";
// Where `runsc --cgroupfs` mounts the sentry's cgroup hierarchies.
inline constexpr const char* kCgroupMountpoint = "/sys/fs/cgroup";

struct RunscOptions {
  std::string runsc = kRunscBinary;  // found through PATH unless absolute
  std::string platform;              // "" (runsc's default: ptrace) or "kvm"
  // Syscalls gVisor's strace reports to the debug log gander reads; empty: no strace;
  // {kStraceAll}: every syscall (learn mode's census).
  std::vector<std::string> strace_syscalls;
  // Egress through gander's broker: non-empty, runsc runs with --network=host (the sentry's
  // hostinet stack makes the host connects) in a fresh user and network namespace that has
  // only loopback, with this seccomp program installed before exec (connect and the send
  // family notify gander: SeccompOptions::broker_only). Empty: --network=none.
  std::vector<sock_filter> broker_filter;
  // Pass --oci-seccomp: runsc applies the bundle's linux.seccomp inside the sandbox.
  bool oci_seccomp = false;
};

// The argv that runs `container_id` from `bundle_dir`, its state under `state_dir`; with
// strace, the debug log (where strace lines go) is `debug_log`. Pure.
std::vector<std::string> RunscRunArgv(const RunscOptions& options, const std::string& state_dir,
                                      const std::string& bundle_dir,
                                      const std::string& container_id,
                                      const std::string& debug_log);

// One running sandbox. Destroying it kills what is left (SIGKILL to runsc, whose sandbox and
// gofer have PDEATHSIG) and removes the run directory.
class GvisorRun {
 public:
  ~GvisorRun();
  GvisorRun(const GvisorRun&) = delete;
  GvisorRun& operator=(const GvisorRun&) = delete;

  pid_t pid() const { return pid_; }  // `runsc run`, gander's child
  int pidfd() const { return pidfd_.get(); }
  int strace_fd() const { return strace_.get(); }  // the debug log's read end, or -1
  // With RunscOptions::broker_filter: the seccomp listener and the broker's sockets (relay,
  // park, refuse, DNS stub) in runsc's network namespace, for the caller to take.
  UniqueFd listener;
  network::EgressSockets egress;
  // SIGTERM to every process in the container (`runsc kill --all`), without waiting.
  void Terminate();

 private:
  friend Result<std::unique_ptr<GvisorRun>> StartGvisor(const BundleSpec&, const RunscOptions&, int,
                                                        int, int, const std::string&);
  GvisorRun() = default;
  void Reap();
  Status TakeBrokerFds(int sync);
  RunscOptions options_;
  std::string dir_, state_dir_, container_id_;
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd strace_;
  std::vector<pid_t> helpers_;  // `runsc kill` processes not yet reaped
};

// Writes the bundle under a fresh run directory and starts `runsc run` with the extension's
// stdio on stdin_fd/stdout_fd/stderr_fd. `name` only names the directory.
Result<std::unique_ptr<GvisorRun>> StartGvisor(const BundleSpec& spec, const RunscOptions& options,
                                               int stdin_fd, int stdout_fd, int stderr_fd,
                                               const std::string& name);

// The directory run directories live in: $XDG_RUNTIME_DIR/gander, else /tmp.
std::string RunDirBase();

// Removes the run directories whose gander is gone (named gander-gvisor-PID-*).
void RemoveStaleRunDirs(const std::string& base);

}  // namespace gander::sandbox::gvisor
