// The supervisor loop: one poll loop (and the threads of Watch::own_thread, which take turns
// with it under one lock) that relays stdio between Goose and the extension,
// watches the sandbox init through its pidfd, turns gander's own signals and stdin EOF into
// the shutdown sequence Goose expects, and returns the extension's exit status.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "relay/line_relay.h"

namespace gander::monitor {

// Another fd the loop polls: the seccomp listener, the sandbox's sync socket. The callback
// runs with poll's revents when it is readable or hung up; it returns false to stop polling
// the fd (it must, on a hang-up with nothing left to read, or the loop would spin).
class WatchThread;  // monitor/watch_thread.h

struct Watch {
  int fd = -1;
  std::function<bool(short revents)> on_ready;
  // Belongs to one running extension (its seccomp listener, its sync socket, its egress
  // broker): dropped at a restart, before the fresh extension is started, so the caller may
  // then free what the callback uses. ExtensionHandles::watches get it set.
  bool extension = false;
  // Served by a thread of its own rather than the loop's poll (monitor/watch_thread.h): the
  // callback, then after_turn, run there with the loop's lock held, so one thread at a time
  // touches what they share. For the seccomp listener, whose every notification waits. Only
  // for an extension's watches (`extension`): a restart lets go of the lock while it stops
  // them, so another thread's callback could run in the middle of it.
  bool own_thread = false;
  // With own_thread: how that thread waits, instead of in poll on `fd`. Blocks without the
  // loop's lock until there is something for on_ready (1, which is then called with POLLIN),
  // nothing yet (0: asked again), or never will be (-1: on_ready gets POLLHUP). The seccomp
  // listener's: a thread blocked in NOTIF_RECV is handed the CPU by the notifying thread
  // (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) and skips a poll per notification. Interrupted by a
  // signal of the thread's own when the thread is stopped (monitor/watch_thread.h).
  std::function<int()> await = nullptr;
  // A thread already running for it (WatchThread::TryStandby), or none: one is started then.
  std::shared_ptr<WatchThread> thread = nullptr;
};

}  // namespace gander::monitor
namespace gander::relay {
class RpcMonitor;
}  // namespace gander::relay
namespace gander::monitor {

// What the loop needs of one running extension (the first is given in SupervisorOptions).
struct ExtensionHandles {
  int child_in = -1;   // owned by the loop from then on
  int child_out = -1;  // the caller keeps these three open until Supervise returns
  int child_err = -1;
  int pidfd = -1;
  pid_t kill_group = -1;
  std::vector<Watch> watches;                         // e.g. the new sandbox's seccomp listener
  const std::optional<int>* reported_exit = nullptr;  // as SupervisorOptions::reported_exit
};

// Restart behind the relay (for secrets that expire): set `requested` (from a watch callback
// or after_turn); at the end of that loop turn the extension is SIGKILLed (its process group
// too, without a pid namespace) and reaped, its watches are dropped, every
// request in flight is answered with a JSON-RPC error (-32603), a fresh extension is started
// with `start`, the client's initialize and initialized are replayed to it, its answer to that
// initialize is swallowed, and relaying continues. Goose sees only the failed requests.
struct RestartControl {
  std::optional<std::string> requested;  // the reason; cleared when acted on
  std::function<std::optional<ExtensionHandles>()> start;
  relay::RpcMonitor* rpc = nullptr;  // the relay's observer (required)
  std::function<void(const std::string& reason, bool ok)> on_restart;
  int restarts = 0;
};

struct SupervisorOptions {
  int client_in = 0;   // Goose -> gander
  int client_out = 1;  // gander -> Goose (nothing but the extension's bytes goes here)
  int child_in = -1;   // gander -> extension (owned: closed on client EOF)
  int child_out = -1;  // extension -> gander
  // The extension's stderr (gander <- extension), relayed line by line to client_err through
  // `stderr_rewriter`; -1 when the extension writes to gander's stderr directly.
  int child_err = -1;
  int client_err = 2;
  // Framing, size limit and buffer bounds of each direction.
  relay::LineRelayOptions up{};    // Goose -> extension
  relay::LineRelayOptions down{};  // extension -> Goose
  relay::LineRelayOptions err{};   // extension's stderr -> gander's stderr
  // Each complete line of each direction, before it is forwarded (the JSON-RPC tracker).
  relay::LineObserver* client_observer = nullptr;
  relay::LineObserver* server_observer = nullptr;
  // Secret redaction on the way out.
  relay::StreamRewriter* stdout_rewriter = nullptr;
  relay::StreamRewriter* stderr_rewriter = nullptr;
  int pidfd = -1;  // the sandbox init
  // The extension's exit code as the init reported it before its own exit (set by a watch's
  // callback): the loop takes it as the end, without waiting for the init's pidfd. Supervise
  // may then return while the init is still exiting: the caller waits for it where needed.
  const std::optional<int>* reported_exit = nullptr;
  // Without a pid namespace, SIGKILL of the init does not take the tree with it: the
  // extension's process group is killed too.
  pid_t kill_group = -1;
  // After stdin EOF: SIGTERM to the whole sandbox after term_after_eof_ms, SIGKILL after
  // kill_after_eof_ms; Goose kills at 3 s, so both stay well inside.
  int term_after_eof_ms = 1000;
  int kill_after_eof_ms = 2500;
  // After gander itself gets SIGTERM/SIGINT/SIGHUP: SIGTERM now, SIGKILL after this.
  int kill_after_signal_ms = 1500;
  // How the SIGTERM step reaches the extension; unset: SIGTERM to the init's pidfd. (The
  // gVisor backend asks runsc to signal every process in its sandbox.) SIGKILL always goes to
  // the pidfd.
  std::function<void()> terminate;
  // When set, a client EOF that comes before it returns true starts the SIGTERM/SIGKILL
  // countdown only once it does (checked every loop turn): a sandbox that takes a while to
  // start (gVisor: 0.3-2 s) is not killed before its extension ran. gander itself still dies
  // with Goose's SIGKILL, and the sandbox with it.
  std::function<bool()> started;
  std::vector<Watch> watches;
  // Runs once per loop turn, after the events of the turn (e.g. drain the event queue).
  std::function<void()> after_turn;
  // Runs once per loop turn right after poll, before the relay reads: for an event source
  // that lags the extension's stdout (gVisor's strace log: a syscall's line is written before
  // the answer that follows it), so its events get the tool call still in flight.
  std::function<void()> before_relay;
  RestartControl* restart = nullptr;
  // Called once at the end with each direction's counts (up, down, stderr).
  std::function<void(const relay::LineRelayStats& up, const relay::LineRelayStats& down,
                     const relay::LineRelayStats& err)>
      on_relay_done;
};

// Runs until the init exited and the extension's output is drained. Returns the exit status
// gander should exit with: the extension's, or 128+N when it was killed by signal N. On
// return, client_out is closed (replaced by /dev/null) so that Goose sees EOF at once.
int Supervise(const SupervisorOptions& options);

// Holds SIGTERM, SIGINT and SIGHUP pending for Supervise, which takes them from a signalfd.
// Called first thing by a run: one that comes while the sandbox is being built (Goose's
// PDEATHSIG, a user's kill) then tears it down in the loop's first turn, rather than ending
// gander on the spot with its private directories left behind. Whatever gander starts gets an
// empty mask back before its exec.
void HoldTerminationSignals();
// SIGTERM, SIGINT and SIGHUP: what HoldTerminationSignals holds for the loop's signalfd.
sigset_t TerminationSignals();
// A signalfd of the held termination signals that its owner only polls, never reads: readable
// while one is pending, which the loop then still takes (sandbox::SandboxSpec::stop_fd).
UniqueFd TerminationSignalFd();
// The held termination signal pending for gander (SIGTERM first, then SIGINT, then SIGHUP),
// or 0.
int PendingTerminationSignal();

}  // namespace gander::monitor
