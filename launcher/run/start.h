// Stage "start" of `gander run`: one sandbox (native or gVisor) with its stdio on fresh pipes,
// and the first start's fallback to no namespaces where the kernel refuses them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/run/prepare.h"
#include "monitor/seccomp_monitor.h"
#include "monitor/watch_thread.h"
#include "network/egress.h"
#include "sandbox/gvisor/runsc.h"
#include "sandbox/gvisor/strace.h"
#include "sandbox/isolation.h"
#include "sandbox/sandbox.h"

namespace gander::launcher {

// Private directories on the host, for a run without a mount namespace; removed at exit.
// MakeSmall is for the few small files of a start (the egress resolv.conf and hosts): on
// /dev/shm when it is a tmpfs, since creating and unlinking them on an ext4 /tmp at every
// start cost ~5 % of a /bin/true run's CPU (inode allocation, issue 20).
class PrivateDirs {
 public:
  ~PrivateDirs() { Remove(); }
  // Removes the directories made (once their sandbox is gone).
  void Remove();
  Result<std::string> Make(const std::string& name) { return Make(name, "/tmp", base_); }
  Result<std::string> MakeSmall(const std::string& name);

 private:
  Result<std::string> Make(const std::string& name, const char* parent, std::string& base);

  std::string base_, small_base_;
  int count_ = 0;
};

// One running extension: its sandbox, our ends of its stdio and what watches it. A restart
// behind the relay (a refreshed environment secret) replaces it with a fresh one.
struct Extension {
  std::optional<sandbox::SandboxSpec> spec;
  sandbox::SandboxProcess sandbox;
  UniqueFd to_child, from_child, from_child_err;  // to_child goes to the supervisor loop
  sandbox::StartFailure exec_failure;             // reported on the sync socket after the start
  std::unique_ptr<monitor::KernelUnotify> unotify;
  // The thread that will wait on the seccomp listener, made while the sandbox was built.
  std::shared_ptr<monitor::WatchThread> standby;
  std::unique_ptr<network::Egress> egress;
  std::unique_ptr<monitor::SeccompMonitor> seccomp_monitor;
  // The gVisor backend: runsc (killed, its files removed, when this goes) and what maps its
  // strace log onto events.
  std::unique_ptr<sandbox::gvisor::GvisorRun> gvisor;
  std::unique_ptr<sandbox::gvisor::StraceMapper> strace;
  std::vector<std::pair<std::string, std::string>> root_symlinks;  // of the gVisor root

  int pidfd() const { return gvisor ? gvisor->pidfd() : sandbox.pidfd.get(); }
  // The native init's exit report (SupervisorOptions::reported_exit); none under gVisor.
  const std::optional<int>* ReportedExit() const {
    return gvisor ? nullptr : &sandbox.reported_exit;
  }
  // Without a pid namespace, SIGKILL of the init does not take its children with it.
  pid_t KillGroup() const { return sandbox.namespaces ? -1 : sandbox.extension_pid; }
};

// Plans and starts one sandbox with its stdio on fresh pipes: the extension's stderr goes
// through the relay too (secret redaction). The environment is built from the secrets' current
// values.
Result<std::unique_ptr<Extension>> StartExtension(const Prepared& p, bool use_namespaces,
                                                  PrivateDirs& dirs,
                                                  sandbox::StartFailure* failure);

// The first start, and how it ended up.
struct Started {
  std::unique_ptr<Extension> extension;
  bool use_namespaces = true;
  sandbox::IsolationLevel level = sandbox::IsolationLevel::kBasic;
};

// Stage "start": the first sandbox at the isolation --require allows, falling back to no
// namespaces (and compiling the policy again for that) where the kernel refuses them.
std::optional<Stop> StartWithFallback(const RunOptions& options, Prepared& p, PrivateDirs& dirs,
                                      Started& out);

// The signal gander was told to end by while a sandbox was being built (failure.stopped): the
// one pending (monitor::PendingTerminationSignal), SIGTERM when none is left.
int StoppedBy();
// The stop of a run told to end by `signal` while its sandbox was being built: 128 + the
// signal. (Once the extension runs, the signal is passed on to it as SIGTERM and gander's
// status is the extension's.)
Stop StoppedWhileStarting(int signal);

// gander's exit status for a start that failed at `failure` (computed once, here): the
// command missing 127, not executable 126, the sandbox's set-up 125.
Stop StartFailureStop(const sandbox::StartFailure& failure, const Error& error,
                      const std::string& exec_path);

}  // namespace gander::launcher
