// The session of one `gander run` once its first sandbox is up, and the lifecycle events of
// the run's stages.
#include "launcher/run/session.h"

#include <spdlog/spdlog.h>

#include <cerrno>

#include "events/event_json.h"
#include "launcher/run/sinks.h"

namespace gander::launcher {

Session::Session(const RunOptions& o, Prepared& prepared, PrivateDirs& private_dirs,
                 Started started)
    : options(o),
      p(prepared),
      dirs(private_dirs),
      use_namespaces(started.use_namespaces),
      level(started.level),
      // Under gVisor with notification the egress broker accounts for the network too.
      accounting(p.gvisor() ? std::string(p.learn() ? "gvisor-census" : "gvisor-strace") +
                                  (p.notify ? "+broker" : "")
                 : !p.notify ? "none"
                 : p.learn() ? "census"
                             : "watched"),
      current(std::move(started.extension)),
      rpc(p.name, &queue, kMaxLine) {}

Session::~Session() = default;

events::Event Lifecycle(const std::string& name, events::LifecyclePhase what, std::string detail) {
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = name;
  e.payload = events::LifecycleEvent{what, std::move(detail)};
  return e;
}

void UndoWorkspaceWrites(Session& s) {
  const Prepared& p = s.p;
  // "20261207T211300Z", from the events' form (no gmtime_r, which loads the time zone).
  std::string stamp;
  for (char c : events::FormatRfc3339Micros(events::WallClockNowNs())) {
    if (c == '.') break;
    if (c != '-' && c != ':') stamp += c;
  }
  stamp += 'Z';
  const auto changes = sandbox::UndoWorkspaceChanges(p.workspace_snapshot, stamp);
  size_t said = 0;
  for (const auto& c : changes) {
    events::Event e;
    e.time_ns = events::WallClockNowNs();
    e.extension = p.name;
    e.payload = events::FileEvent{
        .syscall = "workspace_guard",
        .raw_path = c.path,
        .path = c.path,
        .path_class = events::PathClass::kWorkspace,
        .access = c.what == "created" ? events::FileAccess::kCreate : events::FileAccess::kWrite,
        .result = events::Verdict::kDenied,
        .error = EPERM};
    s.queue.Push(std::move(e));
    if (++said > 20) continue;
    std::string done = c.error.empty() ? (c.what == "created" ? "undone" : "the original is back")
                                       : "NOT undone (" + c.error + ")";
    if (!c.quarantine.empty()) done += "; what the extension left is now " + c.quarantine;
    if (!c.note.empty()) done += " (" + c.note + ")";
    spdlog::warn(
        "{}: the extension {} {}, which git or direnv would run commands from on your host "
        "outside any sandbox: {}",
        p.name, c.what, c.path, done);
  }
  if (said > 20) {
    spdlog::warn("{}: ... and {} more workspace entries undone (see the audit log)", p.name,
                 said - 20);
  }
}

// The `process` exit event of the extension (`status`: its exit code, or 128+N for signal N).
events::Event ExtensionExit(const Prepared& p, const sandbox::SandboxProcess& sandbox, int status) {
  events::Event exit = Lifecycle(p.name, events::LifecyclePhase::kStop, "");
  // The init reports the extension's pid as it sees it: inside the pid namespace, if any.
  if (sandbox.started && sandbox.extension_pid > 0) {
    (sandbox.namespaces ? exit.sandbox_pid : exit.pid) = sandbox.extension_pid;
  }
  events::ProcessEvent process{.action = events::ProcessAction::kExit, .path = p.command.exec_path};
  if (status > 128) {
    process.signal = status - 128;
  } else {
    process.exit_code = status;
  }
  exit.payload = process;
  return exit;
}

}  // namespace gander::launcher
