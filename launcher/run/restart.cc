// Stage "restart" of `gander run`.
#include "launcher/run/restart.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "launcher/run/watch.h"

namespace gander::launcher {

Restarts::Restarts(Session& s) : s_(s) {
  control_.rpc = &s.rpc;
  control_.start = [this] { return Start(); };
  control_.on_restart = [this](const std::string& reason, bool ok) { OnRestart(reason, ok); };
  s.p.secrets->hooks.restart = [this](const std::string& reason) { control_.requested = reason; };
  s.p.secrets->hooks.report = [&s](const std::string& detail) {
    s.queue.Push(Lifecycle(s.p.name, events::LifecyclePhase::kSecret, detail));
  };
}

std::optional<monitor::ExtensionHandles> Restarts::Start() {
  Prepared& p = s_.p;
  began_ms_ = relay::MonotonicNowMs();
  // The old init is reaped (the loop killed it): its cgroup is emptied now, before the undo
  // below, which a process of it outside the init's tree would race (without namespaces), and
  // its mount namespace goes; its broker's connections end with their events.
  Extension& old = *s_.current;
  sandbox::TakeInitRemains(old.sandbox).AwaitExit();
  EndEgress(old, std::chrono::milliseconds(0));
  PublishCounts(s_, *s_.current);
  s_.queue.Push(ExtensionExit(p, s_.current->sandbox, 128 + SIGKILL));  // the loop just killed it
  UndoWorkspaceWrites(s_);  // before the fresh sandbox binds what it finds
  // A new run cgroup name (the one being left is removed with its sandbox) and the rules for it.
  if (auto stop = CompilePolicy(p, s_.use_namespaces)) {
    spdlog::error("{}: restart: {}", p.name, stop->message);
    return std::nullopt;
  }
  sandbox::StartFailure failure;
  auto fresh = StartExtension(p, s_.use_namespaces, s_.dirs, &failure);
  if (!fresh && failure.stopped) {
    s_.stopped_by = StoppedBy();
    return std::nullopt;
  }
  if (!fresh) {
    spdlog::error("{}: restart: {}{}", p.name, fresh.error().Describe(),
                  failure.reported() ? " (at '" + failure.Describe() + "')" : "");
    return std::nullopt;
  }
  auto watches = WatchExtension(s_, **fresh, true);
  if (!watches) {
    syscall(SYS_pidfd_send_signal, (*fresh)->sandbox.pidfd.get(), SIGKILL, nullptr, 0);
    siginfo_t info{};
    waitid(static_cast<idtype_t>(P_PIDFD), (*fresh)->sandbox.pidfd.get(), &info, WEXITED);
    return std::nullopt;
  }
  s_.previous = std::move(s_.current);
  s_.current = std::move(fresh).value();
  Extension& x = *s_.current;
  return monitor::ExtensionHandles{.child_in = x.to_child.Release(),
                                   .child_out = x.from_child.get(),
                                   .child_err = x.from_child_err.get(),
                                   .pidfd = x.pidfd(),
                                   .kill_group = x.KillGroup(),
                                   .watches = std::move(*watches),
                                   .reported_exit = x.ReportedExit()};
}

void Restarts::OnRestart(const std::string& reason, bool ok) {
  const Prepared& p = s_.p;
  int64_t ms = relay::MonotonicNowMs() - began_ms_;
  if (ok) {
    spdlog::info("{}: restarted behind the relay ({}): a fresh sandbox in {} ms", p.name, reason,
                 ms);
    events::Event e = Lifecycle(p.name, events::LifecyclePhase::kRestart, reason);
    if (pid_t pid = s_.current->sandbox.extension_pid; pid > 0) {
      (s_.current->sandbox.namespaces ? e.sandbox_pid : e.pid) = pid;
    }
    s_.queue.Push(std::move(e));
  } else if (s_.stopped_by != 0) {
    spdlog::info("{}: told to end during the restart behind the relay ({})", p.name, reason);
    s_.queue.Push(Lifecycle(p.name, events::LifecyclePhase::kRestart,
                            reason + "; told to end before the fresh extension started"));
  } else {
    spdlog::error("{}: the restart behind the relay ({}) failed: the extension is gone", p.name,
                  reason);
    s_.queue.Push(Lifecycle(p.name, events::LifecyclePhase::kRestart,
                            reason + "; the fresh extension could not be started"));
  }
  p.secrets->OnRestarted();
}

}  // namespace gander::launcher
