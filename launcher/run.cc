// `gander run`, as a sequence of named stages (launcher/run/): prepare, compile the policy once,
// start with the isolation fallback, open sinks, watch, restart (behind the relay), finish.
#include "launcher/run.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

#include "launcher/run/prepare.h"
#include "launcher/run/restart.h"
#include "launcher/run/sinks.h"
#include "launcher/run/start.h"
#include "launcher/run/watch.h"
#include "monitor/supervisor.h"

namespace gander::launcher {
namespace {

// Stage "finish": what was still in flight when the extension exited ends with its events, the
// sinks are closed, and gander's exit status is the extension's, or the start failure's.
int Finish(Session& s, int status) {
  Prepared& p = s.p;
  Extension& x = *s.current;
  // An init that reported the exit code with namespaces is all that is left of the sandbox,
  // and on its way out: all but its pidfd, cgroup and mount namespace go while it exits, the
  // private directories too (a bind mount in its namespace keeps nothing of them busy on the
  // host). Without that report, or without a pid namespace, something of the extension may
  // still run (a process outside the init's tree, in the cgroup): the cgroup is emptied and
  // the init reaped first, before the workspace guard's undo and anything else it could race.
  const bool init_alone = x.sandbox.namespaces && x.sandbox.reported_exit.has_value();
  sandbox::InitRemains init = sandbox::TakeInitRemains(x.sandbox);
  if (!init_alone) init.AwaitExit();
  // Connections still closing when the extension exited end now, each with its event.
  EndEgress(x, std::chrono::milliseconds(500));
  if (x.strace) ReadStrace(s, x);           // what gVisor wrote before it exited
  s.rpc.FailInFlight("the session ended");  // calls never answered end as `aborted` events
  p.secrets->RevokeAll();                   // now, so its events reach the audit log
  p.secrets->hooks = {};

  PublishCounts(s, x);
  UndoWorkspaceWrites(s);  // only the exiting init is left: nothing in it races the undo
  const sandbox::StartFailure failure = x.exec_failure;  // a copy: the extension goes below
  if (s.stopped_by != 0) {
    s.queue.Push(Lifecycle(p.name, events::LifecyclePhase::kStop,
                           "told to end while the sandbox was being built"));
  } else if (failure.reported()) {
    s.queue.Push(
        Lifecycle(p.name, events::LifecyclePhase::kStop,
                  "could not start: " + failure.Describe() + ": " + std::strerror(failure.err)));
  } else {
    s.queue.Push(ExtensionExit(p, x.sandbox, status));
    s.queue.Push(Lifecycle(p.name, events::LifecyclePhase::kStop,
                           "exited with status " + std::to_string(status)));
  }
  // The collector persists and acknowledges the last events while the sandbox's remains go
  // (its descriptors, the seccomp listener, runsc, the private directories): the exit waits
  // for the later of the two, not for their sum.
  StartClosingSinks(s);
  s.previous.reset();
  s.current.reset();
  // Again: what did not fit the collector's socket at the first call (it was full) is sent
  // as soon as there is room, not only after the private directories are gone.
  StartClosingSinks(s);
  s.dirs.Remove();
  init.AwaitExit();
  CloseSinks(s);
  if (s.stopped_by != 0) return Report(StoppedWhileStarting(s.stopped_by));
  if (failure.reported()) {
    const Error error{failure.err, "sandbox set-up failed at '" + failure.Describe() + "'"};
    return Report(StartFailureStop(failure, error, p.command.exec_path));
  }
  s.sinks->notice->OnExit(status);
  spdlog::info("{}: exited with status {}", p.name, status);
  return status;
}

}  // namespace

int Report(const Stop& stop) {
  spdlog::error("{}", stop.message);
  return stop.status;
}

int Run(const RunOptions& o) {
  monitor::HoldTerminationSignals();  // before anything is made that a signal would leave behind
  spdlog::debug("phase: arguments parsed");
  Prepared p;
  p.stop_signals = monitor::TerminationSignalFd();
  if (auto stop = Prepare(o, p)) return Report(*stop);
  if (auto stop = CompilePolicy(p, !o.no_namespaces)) return Report(*stop);
  spdlog::debug("phase: policy compiled");

  PrivateDirs private_dirs;
  Started started;
  if (auto stop = StartWithFallback(o, p, private_dirs, started)) return Report(*stop);

  Session s(o, p, private_dirs, std::move(started));
  OpenSinks(s);
  Redaction redaction(s);
  auto supervise = SuperviseFirst(s, redaction);
  if (!supervise) return Report({kExitSetupFailed, "egress: bad network policy"});
  Restarts restarts(s);
  supervise->restart = &restarts.control();
  for (auto& watch : p.secrets->Watches()) supervise->watches.push_back(std::move(watch));

  int status = monitor::Supervise(*supervise);
  return Finish(s, status);
}

}  // namespace gander::launcher
