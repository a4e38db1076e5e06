// What the running stages of `gander run` share once the first sandbox is up: the prepared run,
// how it was started, the event queue, the relay's RPC monitor and the extension (the current
// one, and the one a restart replaced).
#pragma once

#include <memory>
#include <string>

#include "events/event_queue.h"
#include "launcher/run/prepare.h"
#include "launcher/run/start.h"
#include "monitor/seccomp_monitor.h"
#include "relay/rpc_monitor.h"

namespace gander::launcher {

struct Sinks;  // launcher/run/sinks.h

// The relay's line limit, both ways.
inline constexpr size_t kMaxLine = 64u << 20;

struct Session {
  Session(const RunOptions& o, Prepared& prepared, PrivateDirs& private_dirs, Started started);
  ~Session();

  const RunOptions& options;
  Prepared& p;
  PrivateDirs& dirs;
  const bool use_namespaces;
  const sandbox::IsolationLevel level;
  const std::string accounting;  // how syscalls are accounted for ("watched", "census", ...)
  // Declared (so destroyed) in the order the single function had them: the extension outlives
  // the queue and the memory readers its broker holds references to.
  std::unique_ptr<Extension> current;
  events::BoundedEventQueue queue{8192};
  std::unique_ptr<Sinks> sinks;
  relay::RpcMonitor rpc;
  monitor::KernelTargetMemory memory;
  monitor::ProcfsProcesses processes;
  // The extension a restart replaced: kept until the next restart, since the loop may still
  // hold its fds for the rest of the turn.
  std::unique_ptr<Extension> previous;
  // Told to end (SIGTERM, SIGINT, SIGHUP) while a sandbox was being built, first or at a
  // restart: that signal, and gander exits 128 + it. 0: not so.
  int stopped_by = 0;
};

// An event of the run's own life (start, relay, restart, secret, stop).
events::Event Lifecycle(const std::string& name, events::LifecyclePhase what, std::string detail);

// Puts back what the extension changed or created among the workspace's git and direnv
// entries (sandbox/workspace_guard.h), once its sandbox is gone: each undone entry is a refused
// file write in the metrics and the audit log and a line on stderr.
void UndoWorkspaceWrites(Session& s);

// The `process` exit event of the extension (`status`: its exit code, or 128+N for signal N).
events::Event ExtensionExit(const Prepared& p, const sandbox::SandboxProcess& sandbox, int status);

}  // namespace gander::launcher
