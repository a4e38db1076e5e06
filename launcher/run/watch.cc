// Stage "watch" of `gander run`: the watchers of one extension and the supervisor's options.
#include "launcher/run/watch.h"

#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "common/background_close.h"
#include "common/path.h"
#include "launcher/run/sinks.h"
#include "monitor/watch_thread.h"
#include "policies/parser.h"
#include "sandbox/child_setup.h"

namespace gander::launcher {
namespace {

// How often the syscall counts are published while the extension runs.
constexpr auto kCountsInterval = std::chrono::seconds(5);

// The egress broker over the sockets the sandbox init handed over; nullptr when its host-side
// sockets cannot be opened (no network namespace).
std::unique_ptr<network::Egress> MakeEgress(const Prepared& p, sandbox::SandboxProcess& sandbox,
                                            monitor::Unotify& unotify,
                                            monitor::TargetMemory& memory,
                                            events::BoundedEventQueue& queue,
                                            relay::ToolCallTracker& tool_calls) {
  network::EgressConfig config;
  config.extension = p.name;
  config.matcher = p.compiled.network;  // compiled once, before the first clone
  config.namespaces = sandbox.namespaces;
  config.gvisor_hostinet = p.gvisor();  // see EgressConfig
  config.tool_calls = &tool_calls;
  if (sandbox.namespaces) config.sandbox_pid = sandbox.pid;
  config.trial = p.compiled.network_trial;
  if (p.policy.network.deny_errno) {
    config.deny_errno =
        policies::DenyErrnoValue(*p.policy.network.deny_errno).value_or(ECONNREFUSED);
  }
  // Test knobs: a short UDP idle time and a small flow table (egress_udp_tests).
  if (const char* ms = getenv("GANDER_UDP_IDLE_MS"); ms && std::atoi(ms) > 0) {
    config.udp_idle = std::chrono::milliseconds(std::atoi(ms));
  }
  if (const char* n = getenv("GANDER_UDP_MAX_FLOWS"); n && std::atoi(n) > 0) {
    config.max_udp_flows = static_cast<size_t>(std::atoi(n));
  }
  config.sockets = std::move(sandbox.egress);
  // No network namespace: the relay, park and refuse sockets on host loopback, and the DNS
  // stub's TCP listener there: the host's resolv.conf stays in force, and a TCP connect to
  // one of its nameservers on port 53 (RES_OPTIONS=use-vc, BuildSpec) reaches the stub.
  if (!sandbox.namespaces) {
    if (int err = network::OpenEgressSockets(config.sockets); err != 0) {
      spdlog::error("{}: egress sockets: {}", p.name, std::strerror(err));
      return nullptr;
    }
    OpenDnsStub(config.sockets, true);
    if (config.sockets.dns_tcp) {
      spdlog::info(
          "{}: egress broker only: DNS over TCP (RES_OPTIONS=use-vc, glibc resolvers) "
          "to the host's nameservers is served by the stub; UDP is refused",
          p.name);
    } else {
      spdlog::warn("{}: no DNS stub: names do not resolve", p.name);
    }
    for (const policies::NetworkRule& rule : p.policy.network.allow) {
      if (rule.protocol == policies::Protocol::kUdp) {
        spdlog::warn("{}: {}: protocol: udp has no effect without namespaces (UDP is refused)",
                     p.name, policies::FormatMark(rule.mark));
      }
    }
    config.nameservers = network::ParseNameservers(ReadFile("/etc/resolv.conf").value_or(""));
    config.hosts_file = network::ParseHostsFile(ReadFile("/etc/hosts").value_or(""));
  }
  return std::make_unique<network::Egress>(std::move(config), unotify, memory, queue);
}

// The monitor of the extension's seccomp listener, built before the listener comes: its
// set-up (the watched and denied syscalls' numbers) overlaps the init's last steps instead of
// holding up the extension's execve, whose notification waits for it.
std::unique_ptr<monitor::SeccompMonitor> MakeSeccompMonitor(Session& s, Extension& x) {
  const Prepared& p = s.p;
  monitor::SeccompMonitorConfig config{.extension = p.name,
                                       .rules = p.compiled.files,
                                       .trial = p.compiled.files_trial,
                                       .denials = x.spec->seccomp.denials,
                                       .unlisted = x.spec->seccomp.unlisted,
                                       .unlisted_errno = sandbox::kUnlistedErrno,
                                       .files = p.files,
                                       // under gVisor: the broker's notifications only
                                       .census = p.learn() && !x.gvisor,
                                       .log_all_files = p.learn(),
                                       .log_home = s.options.log_home,
                                       .home = p.home,
                                       .workspace = p.workspace,
                                       .extension_pid = &x.sandbox.extension_pid,
                                       .namespaces = x.sandbox.namespaces,
                                       .tool_calls = &s.rpc.tracker(),
                                       .count_syscalls = !x.gvisor};
  if (x.egress) config.network = x.egress.get();
  return std::make_unique<monitor::SeccompMonitor>(*x.unotify, s.memory, s.processes,
                                                   std::move(config), s.queue);
}

}  // namespace

bool ReadStrace(Session& s, Extension& x) {
  char buf[65536];
  std::vector<events::Event> events;
  for (;;) {
    ssize_t n = read(x.gvisor->strace_fd(), buf, sizeof(buf));
    if (n > 0) {
      x.strace->Feed({buf, static_cast<size_t>(n)}, events);
      continue;
    }
    for (auto& e : events) s.queue.Push(std::move(e));
    return n < 0 && errno == EAGAIN;
  }
}

// Everything that watches one extension: its start report on the sync socket (watched before
// the listener, so the extension's pid is known before any of its exits is decided), gVisor's
// strace log, its seccomp listener and egress broker. A listener the sandbox has not handed
// over yet (listener_pending) is awaited once the broker is built: the broker's set-up overlaps
// the init's last steps (the extension's fork, Landlock, seccomp) instead of following them.
std::optional<std::vector<monitor::Watch>> WatchExtension(Session& s, Extension& x,
                                                          bool restarted) {
  const Prepared& p = s.p;
  const bool listening = x.sandbox.listener || x.sandbox.listener_pending;
  std::shared_ptr<monitor::WatchThread> standby;
  if (listening) {
    x.unotify = std::make_unique<monitor::KernelUnotify>();
    // Made while the sandbox was built (StartExtension), so running by the time the listener
    // comes.
    standby = x.standby ? std::move(x.standby) : monitor::WatchThread::TryStandby();
  }
  if (listening && x.spec->egress) {
    x.egress = MakeEgress(p, x.sandbox, *x.unotify, s.memory, s.queue, s.rpc.tracker());
    if (!x.egress) return std::nullopt;
  }
  if (listening) x.seccomp_monitor = MakeSeccompMonitor(s, x);
  if (x.sandbox.listener_pending && !sandbox::AwaitListener(x.sandbox, *x.spec, &x.exec_failure)) {
    // The start failed after all, or gander was told to end meanwhile. The init is on its way
    // out, or, if only the listener went missing, about to run the extension unwatched; told
    // to end, it may hang in a step (a hung mount): it goes now, with the whole sandbox. Its
    // exit ends the run (or the restart), and Finish reports the step or the signal.
    if (x.exec_failure.stopped) s.stopped_by = StoppedBy();
    syscall(SYS_pidfd_send_signal, x.sandbox.pidfd.get(), SIGKILL, nullptr, 0);
    if (restarted && x.exec_failure.stopped) return std::nullopt;  // Restarts::OnRestart says
    if (restarted) {
      spdlog::error("{}: restart: sandbox set-up failed at '{}': {}", p.name,
                    x.exec_failure.Describe(), std::strerror(x.exec_failure.err));
      return std::nullopt;
    }
    x.seccomp_monitor.reset();
    x.egress.reset();
    x.unotify.reset();
    return std::vector<monitor::Watch>{};
  }

  std::vector<monitor::Watch> watches;
  // The init's sync socket: the start report (unless it came already), then the exit report.
  if (x.ReportedExit() && x.sandbox.sync) {
    watches.push_back({x.sandbox.sync.get(), [&s, ex = &x, restarted](short) {
                         if (ex->sandbox.started) return sandbox::ReadExitReport(ex->sandbox);
                         if (!sandbox::ReadStartReport(ex->sandbox, *ex->spec, &ex->exec_failure)) {
                           return false;
                         }
                         spdlog::info(
                             "{}: {}, isolation {} (namespaces {}, landlock ABI {}), mode "
                             "{}, accounting {}",
                             s.p.name, restarted ? "restarted" : "started",
                             sandbox::LevelName(s.level), s.use_namespaces ? "on" : "off",
                             s.p.landlock_abi, ModeName(s.p.mode), s.accounting);
                         return true;
                       }});
  }
  if (x.gvisor && x.gvisor->strace_fd() >= 0) {
    x.strace = std::make_unique<sandbox::gvisor::StraceMapper>(
        sandbox::gvisor::StraceMapperConfig{.extension = p.name,
                                            .rules = p.compiled.files,
                                            .trial = p.compiled.files_trial,
                                            .home = p.home,
                                            .workspace = p.workspace,
                                            .root_symlinks = x.root_symlinks,
                                            .files = p.files,
                                            .log_all_files = p.learn(),
                                            .census = p.learn(),
                                            .tool_calls = &s.rpc.tracker()});
    watches.push_back({x.gvisor->strace_fd(), [&s, ex = &x](short) { return ReadStrace(s, *ex); }});
  }
  if (!x.sandbox.listener) {
    x.seccomp_monitor.reset();
    return watches;
  }
  x.unotify->Attach(std::move(x.sandbox.listener));
  if (x.egress) {
    watches.push_back({x.egress->fd(), [ex = &x](short) {
                         ex->egress->OnReady();
                         return true;
                       }});
  }
  // POLLHUP: no process uses the filter any more (the sandbox is gone). A thread of its own
  // waits on the listener (Watch::own_thread): every notification's round trip skips the
  // loop's whole poll set; with sync wake-up it waits in NOTIF_RECV itself (Watch::await),
  // without a poll at all. (Sync wake-up came in Linux 6.6 with a receive that returns once
  // the sandbox is gone; before, a blocked receive only a signal ends.)
  std::function<int()> await;
  if (x.unotify->sync_wake_up()) await = [ex = &x] { return ex->seccomp_monitor->Await(); };
  watches.push_back({.fd = x.unotify->fd(),
                     .on_ready =
                         [ex = &x](short revents) {
                           if (revents & POLLIN) return ex->seccomp_monitor->HandleOne();
                           return false;
                         },
                     .own_thread = true,
                     .await = std::move(await),
                     .thread = std::move(standby)});
  return watches;
}

void EndEgress(Extension& x, std::chrono::milliseconds grace) {
  if (!x.egress) return;
  x.egress->Shutdown(grace);
  network::EgressSockets sockets = x.egress->TakeSockets();
  UniqueFd fds[sandbox::kEgressSlotCount];
  for (int i = 0; i < sandbox::kEgressSlotCount; ++i) {
    fds[i] = std::move(sockets.*sandbox::kEgressSlots[i]);
  }
  CloseInBackground(fds);
}

void PublishCounts(Session& s, Extension& x) {
  // Learn mode under gVisor: the strace census counts the sandbox's syscalls; the broker's
  // notifications are the sentry's host-side view of the same connects, not counted twice.
  if (x.seccomp_monitor && !(x.gvisor && s.p.learn())) x.seccomp_monitor->PublishCounts();
  if (x.strace) {
    for (auto& e : x.strace->TakeCounts()) s.queue.Push(std::move(e));
  }
}

// The MCP-aware stdio relay: the tracker labels every event with the tool call in flight and
// reports each call; injected secrets are redacted from stdout and stderr.
Redaction::Redaction(Session& s)
    : s_(s), stdout_(Secrets(), Events("stdout")), stderr_(Secrets(), Events("stderr")) {
  stdout_.SetJsonLines(true);                   // MCP's JSON-RPC lines stay valid JSON
  s.p.secrets->hooks.values_changed = [this] {  // a refresh: old and new values are redacted
    stdout_.SetSecrets(Secrets());
    stderr_.SetSecrets(Secrets());
  };
}

std::vector<relay::Secret> Redaction::Secrets() {
  std::vector<relay::Secret> out;
  for (auto& [name, value] : s_.p.secrets->Redactions()) {
    if (!relay::IsRedactable(value) && warned_.insert(name).second) {
      spdlog::warn(
          "{}: secret {} is not redacted from the extension's output: its value is too short "
          "or too common to be a secret ({}+ characters, not a plain word or number); if it is "
          "configuration, pass it with env.pass instead",
          s_.p.name, name, relay::kMinSecretBytes);
    }
    out.push_back({name, value});
  }
  return out;
}

std::function<void(const std::string&, uint64_t)> Redaction::Events(std::string channel) {
  return [this, channel](const std::string& secret, uint64_t count) {
    events::Event e = Lifecycle(s_.p.name, events::LifecyclePhase::kStart, "");
    e.tool_call = s_.rpc.tracker().Slot();
    e.payload = events::RedactionEvent{secret, channel, count};
    s_.queue.Push(std::move(e));
  };
}

std::optional<monitor::SupervisorOptions> SuperviseFirst(Session& s, Redaction& redaction) {
  monitor::SupervisorOptions supervise;
  supervise.up.max_line = supervise.down.max_line = kMaxLine;
  supervise.err.hold_lines = false;
  supervise.client_observer = &s.rpc.client_side();
  supervise.server_observer = &s.rpc.server_side();
  if (!redaction.out().empty()) supervise.stdout_rewriter = &redaction.out();
  if (!redaction.err().empty()) supervise.stderr_rewriter = &redaction.err();
  supervise.on_relay_done = [&s](const relay::LineRelayStats& up, const relay::LineRelayStats& down,
                                 const relay::LineRelayStats& err) {
    s.queue.Push(Lifecycle(
        s.p.name, events::LifecyclePhase::kRelay,
        fmt::format(
            "client_lines={} client_not_json={} client_oversize={} server_lines={} "
            "server_not_json={} server_oversize={} server_refused_by_client={} stderr_bytes={} "
            "tool_calls_unanswered={}",
            up.lines, up.non_json_lines, up.oversize_lines, down.lines, down.non_json_lines,
            down.oversize_lines, s.rpc.refused_server_lines(), err.bytes_in,
            s.rpc.tracker().tool_calls_in_flight())));
  };
  auto first = WatchExtension(s, *s.current, false);
  if (!first) return std::nullopt;
  for (auto& w : *first) {
    w.extension = true;
    supervise.watches.push_back(std::move(w));
  }
  Extension& x = *s.current;
  supervise.client_in = s.options.client_in;
  supervise.client_out = s.options.client_out;
  supervise.child_in = x.to_child.Release();
  supervise.child_out = x.from_child.get();
  supervise.child_err = x.from_child_err.get();
  supervise.pidfd = x.pidfd();
  supervise.reported_exit = x.ReportedExit();
  supervise.kill_group = x.KillGroup();
  if (s.p.gvisor()) {
    supervise.terminate = [&s] { s.current->gvisor->Terminate(); };
    supervise.started = [&s] { return !s.current->strace || s.current->strace->started(); };
    // The strace lines of a tool call are in the log before its answer on stdout: read them
    // first, so they are attributed to the call rather than to the idle time after it.
    supervise.before_relay = [&s] {
      if (s.current->strace) ReadStrace(s, *s.current);
    };
  }
  if (auto* collector = s.sinks->collector.get()) {
    // Acknowledgements, a lost connection, or the reconnection timer.
    supervise.watches.push_back({collector->fd(), [collector](short) {
                                   collector->OnReadable();
                                   return true;
                                 }});
  }
  // Syscall counts go out every few seconds, so metrics move while the extension runs.
  supervise.after_turn = [&s, due = std::chrono::steady_clock::now() + kCountsInterval]() mutable {
    if (std::chrono::steady_clock::now() >= due) {
      PublishCounts(s, *s.current);
      due = std::chrono::steady_clock::now() + kCountsInterval;
    }
    if (s.sinks->sink) s.queue.Drain(*s.sinks->sink, std::chrono::milliseconds(2));
  };
  return supervise;
}

}  // namespace gander::launcher
