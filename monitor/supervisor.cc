#include "monitor/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>

#include "common/clock.h"
#include "common/unique_fd.h"
#include "monitor/watch_thread.h"
#include "relay/line_relay.h"
#include "relay/rpc_monitor.h"

namespace gander::monitor {

sigset_t TerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, sig);
  return signals;
}

void HoldTerminationSignals() {
  sigset_t signals = TerminationSignals();
  // The watch threads' wake signal is for them alone: sent to the process (by anyone who may
  // signal gander), it interrupts a wait of theirs, never a write of the loop's.
  sigaddset(&signals, WatchThread::WakeSignal());
  sigprocmask(SIG_BLOCK, &signals, nullptr);
}

UniqueFd TerminationSignalFd() {
  sigset_t signals = TerminationSignals();
  return UniqueFd(signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));
}

int PendingTerminationSignal() {
  sigset_t pending;
  if (sigpending(&pending) != 0) return 0;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    if (sigismember(&pending, sig) == 1) return sig;
  }
  return 0;
}

namespace {

constexpr int64_t kNever = INT64_MAX;

// The shutdown sequence: each step happens once, at its deadline or earlier when asked.
class Shutdown {
 public:
  Shutdown(int pidfd, pid_t kill_group, std::function<void()> terminate)
      : pidfd_(pidfd), kill_group_(kill_group), terminate_(std::move(terminate)) {}

  // A fresh extension replaced the old one: signal that one from now on.
  void Retarget(int pidfd, pid_t kill_group) {
    pidfd_ = pidfd;
    kill_group_ = kill_group;
  }

  void TermAt(int64_t when) { term_at_ = std::min(term_at_, when); }
  bool Scheduled() const { return term_at_ != kNever || kill_at_ != kNever; }
  void KillAt(int64_t when) { kill_at_ = std::min(kill_at_, when); }
  int64_t NextDeadline() const {
    return std::min(term_sent_ ? kNever : term_at_, kill_sent_ ? kNever : kill_at_);
  }
  void Fire(int64_t now) {
    if (!term_sent_ && now >= term_at_) {
      term_sent_ = true;
      if (terminate_) {
        terminate_();
      } else {
        Signal(SIGTERM);
      }
    }
    if (!kill_sent_ && now >= kill_at_) {
      kill_sent_ = true;
      Signal(SIGKILL);
      if (kill_group_ > 0) kill(-kill_group_, SIGKILL);
    }
  }

 private:
  void Signal(int sig) { syscall(SYS_pidfd_send_signal, pidfd_, sig, nullptr, 0); }

  int pidfd_;
  pid_t kill_group_;
  std::function<void()> terminate_;
  int64_t term_at_ = kNever;
  int64_t kill_at_ = kNever;
  bool term_sent_ = false;
  bool kill_sent_ = false;
};

int ExitStatus(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return info.si_status;
  return 128 + info.si_status;  // CLD_KILLED, CLD_DUMPED
}

// gander's own termination signals arrive through a signalfd, in the loop; one that came
// before (HoldTerminationSignals) is read there too.
UniqueFd BlockTerminationSignals() {
  HoldTerminationSignals();
  signal(SIGPIPE, SIG_IGN);  // a closed stdout shows up as EPIPE
  return TerminationSignalFd();
}

// The poll set of one loop turn, in this order; the watches follow from kCount on.
enum { kClientIn, kChildIn, kChildOut, kClientOut, kChildErr, kClientErr, kPidfd, kSignal, kCount };

// The three relays between Goose and the extension, and gander's end of the extension's stdin.
struct Relays {
  relay::LineRelay& up;    // Goose -> extension
  relay::LineRelay& down;  // extension -> Goose
  relay::LineRelay& err;
  const bool relay_err;
  UniqueFd& child_in;
};

// The extension being watched: what to signal and reap, where its output comes from, and
// whether (and with which status) it has ended.
struct Running {
  int pidfd;
  pid_t kill_group;
  int child_out_fd;
  int child_err_fd;
  const std::optional<int>* reported_exit;
  bool exited = false;
  int status = 0;
  int64_t drain_deadline = kNever;

  // The extension's end, from the init's pidfd or its report.
  void Exited(int exit_status, int64_t now) {
    exited = true;
    status = exit_status;
    // Every writer of the extension's stdout is gone with the init's namespace; without
    // one, an escaped grandchild could hold it open: do not wait for it forever.
    drain_deadline = now + 1000;
  }
};

// Moves bytes as far as this turn's poll results allow, each direction in turn.
void RelayTurn(const std::vector<pollfd>& fds, Relays& r, int64_t now,
               const std::function<void(int64_t)>& client_gone) {
  if (fds[kClientIn].revents) {
    bool was_open = !r.up.input_closed();
    r.up.OnReadable();
    if (was_open && r.up.input_closed()) client_gone(now);
  }
  if (fds[kChildIn].revents & (POLLERR | POLLHUP)) {
    r.up.BreakOutput();  // the extension closed its stdin: Goose's bytes have nowhere to go
  } else if (fds[kChildIn].revents) {
    r.up.OnWritable();
  }
  // Goose's stdin is done and every byte reached the extension: pass the EOF on.
  if (r.up.Finished() && r.child_in) r.child_in.Reset();
  if (fds[kChildOut].revents) r.down.OnReadable();
  if (fds[kClientOut].revents & (POLLERR | POLLHUP)) {
    r.down.BreakOutput();
  } else if (fds[kClientOut].revents) {
    r.down.OnWritable();
  }
  if (r.down.output_broken() && !r.up.input_closed()) client_gone(now);  // Goose went away
  if (r.relay_err) {
    if (fds[kChildErr].revents) r.err.OnReadable();
    if (fds[kClientErr].revents & (POLLERR | POLLHUP)) {
      r.err.BreakOutput();
    } else if (fds[kClientErr].revents) {
      r.err.OnWritable();
    }
    r.err.OnTimer(now);
    if (r.err.WantsWrite()) r.err.OnWritable();
  }
  r.down.OnTimer(now);
  // Bytes made ready by this turn's reads go out now rather than after another poll.
  if (r.down.WantsWrite() && !fds[kClientOut].revents) r.down.OnWritable();
  if (r.up.WantsWrite() && r.child_in && !fds[kChildIn].revents) r.up.OnWritable();
}

// The watches served by threads of their own (Watch::own_thread), and the loop's lock, which
// the loop holds except while it waits in poll.
struct Threads {
  explicit Threads(const std::function<void()>* after) : after_turn(after) {}
  TurnLock lock;
  std::vector<std::shared_ptr<WatchThread>> running;  // destroyed after `held` lets go
  std::unique_lock<TurnLock> held{lock};
  const std::function<void()>* after_turn;

  // Moves each own_thread watch of `watches` to a thread; one that gets none stays polled.
  void Start(std::vector<Watch>& watches) {
    std::erase_if(watches, [this](Watch& w) {
      if (!w.own_thread || w.fd < 0) return false;
      if (!FirstTurnHere(w)) return true;  // the watch ended in it
      std::shared_ptr<WatchThread> t = std::move(w.thread);
      if (t) {
        t->Serve(w, lock, after_turn);
      } else {
        t = WatchThread::TryStart(w, lock, after_turn);
      }
      if (!t) return false;
      running.push_back(std::move(t));
      return true;
    });
  }
  // A watch that is readable already gets its first turn on this thread, which holds the lock:
  // the seccomp listener of an extension just started has the extension's execve waiting, as
  // a rule, and its thread would have to be woken for it first (~0.1 ms on this project's
  // VM, the execve waiting meanwhile). False when the watch ended in that turn.
  bool FirstTurnHere(Watch& w) {
    pollfd ready{w.fd, POLLIN, 0};
    if (poll(&ready, 1, 0) != 1 || !(ready.revents & POLLIN)) return true;
    bool more = w.on_ready(POLLIN);
    if (after_turn && *after_turn) (*after_turn)();
    return more;
  }
  // Stops the threads of the extension's watches (all of them when `all`).
  void Stop(bool all) {
    std::erase_if(running, [&](std::shared_ptr<WatchThread>& t) {
      if (!all && !t->extension()) return false;
      t->Stop(held);
      return true;
    });
  }
};

// Acts on RestartControl::requested (supervisor.h) at the end of a loop turn.
void RestartExtension(RestartControl& rc, Relays& r, Running& ext, Shutdown& shutdown,
                      std::vector<Watch>& watches, Threads& threads, int64_t now) {
  std::string reason = std::move(*rc.requested);
  rc.requested.reset();
  // The old extension goes first, whole (its sandbox's pid namespace with it, or its
  // process group without one), and what watched it with it.
  syscall(SYS_pidfd_send_signal, ext.pidfd, SIGKILL, nullptr, 0);
  if (ext.kill_group > 0) kill(-ext.kill_group, SIGKILL);
  siginfo_t info{};
  waitid(static_cast<idtype_t>(P_PIDFD), ext.pidfd, &info, WEXITED);
  threads.Stop(false);
  std::erase_if(watches, [](const Watch& w) { return w.extension; });
  std::optional<ExtensionHandles> fresh = rc.start ? rc.start() : std::nullopt;
  if (!fresh) {
    ext.exited = true;  // nothing left to relay for: end as if it had exited
    ext.status = ExitStatus(info);
    ext.drain_deadline = now;
    if (rc.on_restart) rc.on_restart(reason, false);
    return;
  }
  ++rc.restarts;
  std::string errors = rc.rpc ? rc.rpc->FailInFlight("gander: the extension was restarted (" +
                                                     reason + "); the request was not completed")
                              : "";
  std::string replay = rc.rpc ? rc.rpc->HandshakeReplay() : "";
  r.down.SwitchInput(fresh->child_out);
  r.down.Inject(errors);
  if (r.relay_err) r.err.SwitchInput(fresh->child_err);
  r.child_in.Reset(fresh->child_in);
  r.up.SwitchOutput(fresh->child_in, replay);
  ext.pidfd = fresh->pidfd;
  ext.kill_group = fresh->kill_group;
  ext.reported_exit = fresh->reported_exit;
  shutdown.Retarget(fresh->pidfd, fresh->kill_group);
  for (Watch& w : fresh->watches) w.extension = true;
  threads.Start(fresh->watches);
  for (Watch& w : fresh->watches) watches.push_back(std::move(w));
  ext.child_out_fd = fresh->child_out;
  ext.child_err_fd = fresh->child_err;
  if (rc.on_restart) rc.on_restart(reason, true);
}

// Flushes what is still buffered for Goose (stdout may be a blocking pipe: wait for room),
// then closes it so Goose sees the extension is gone even while gander finishes its own work.
void FlushToClient(Relays& r) {
  for (relay::LineRelay* out : {&r.down, &r.err}) {
    if (out == &r.err && !r.relay_err) continue;
    out->CloseInput();
    while (out->WantsWrite()) {
      pollfd p{out->out(), POLLOUT, 0};
      if (poll(&p, 1, 1000) <= 0 || (p.revents & (POLLERR | POLLHUP))) break;
      out->OnWritable();
    }
  }
}

}  // namespace

int Supervise(const SupervisorOptions& options) {
  UniqueFd signal_fd = BlockTerminationSignals();
  // The watch threads first: the seccomp listener's may have the extension's execve waiting
  // already, which then gets its first turn right here (Threads::FirstTurnHere); otherwise
  // the thread's wake-up overlaps the relays' set-up. The lock is held from here until this
  // thread waits in poll.
  std::vector<Watch> watches = options.watches;
  Threads threads(&options.after_turn);
  threads.Start(watches);

  UniqueFd child_in(options.child_in);
  relay::LineRelay up(options.client_in, options.child_in, options.up,  // Goose -> extension
                      options.client_observer);
  relay::LineRelay down(options.child_out, options.client_out, options.down,  // extension -> Goose
                        options.server_observer, options.stdout_rewriter);
  relay::LineRelay err(options.child_err, options.client_err, options.err, nullptr,
                       options.stderr_rewriter);
  Relays relays{up, down, err, options.child_err >= 0, child_in};
  const bool relay_err = relays.relay_err;
  Running ext{options.pidfd, options.kill_group, options.child_out, options.child_err,
              options.reported_exit};
  Shutdown shutdown(options.pidfd, options.kill_group, options.terminate);

  bool eof_pending = false;  // the client left before the extension started (options.started)
  std::function<void(int64_t)> client_gone = [&](int64_t now) {
    if (options.started && !options.started()) {
      eof_pending = true;
      return;
    }
    shutdown.TermAt(now + options.term_after_eof_ms);
    shutdown.KillAt(now + options.kill_after_eof_ms);
  };
  auto outputs_done = [&] { return down.Finished() && (!relay_err || err.Finished()); };

  std::vector<pollfd> fds;
  while (!ext.exited || !outputs_done()) {
    fds.assign({
        {up.WantsRead() ? options.client_in : -1, POLLIN, 0},
        {up.WantsWrite() && child_in ? child_in.get() : -1, POLLOUT, 0},
        {down.WantsRead() ? ext.child_out_fd : -1, POLLIN, 0},
        {down.WantsWrite() ? options.client_out : -1, POLLOUT, 0},
        {relay_err && err.WantsRead() ? ext.child_err_fd : -1, POLLIN, 0},
        {relay_err && err.WantsWrite() ? options.client_err : -1, POLLOUT, 0},
        {ext.exited ? -1 : ext.pidfd, POLLIN, 0},
        {signal_fd.get(), POLLIN, 0},
    });
    for (const Watch& w : watches) fds.push_back({w.fd, POLLIN, 0});
    int64_t now = MonotonicMs();
    int64_t deadline = std::min({shutdown.NextDeadline(), ext.drain_deadline, down.HoldDeadline(),
                                 relay_err ? err.HoldDeadline() : kNever});
    int timeout = deadline == kNever ? -1 : static_cast<int>(std::max<int64_t>(0, deadline - now));
    threads.held.unlock();  // the watch threads' turns come only while this one waits
    int ready = poll(fds.data(), fds.size(), timeout);
    int poll_errno = errno;
    threads.held.lock();
    if (ready < 0 && poll_errno != EINTR) break;
    now = MonotonicMs();
    if (options.before_relay) options.before_relay();

    RelayTurn(fds, relays, now, client_gone);

    if (fds[kSignal].revents) {
      signalfd_siginfo info;
      while (read(signal_fd.get(), &info, sizeof(info)) == sizeof(info)) {
        shutdown.TermAt(now);
        shutdown.KillAt(now + options.kill_after_signal_ms);
      }
    }
    if (fds[kPidfd].revents) {
      siginfo_t info{};
      if (waitid(static_cast<idtype_t>(P_PIDFD), ext.pidfd, &info, WEXITED) == 0) {
        ext.Exited(ExitStatus(info), now);
      }
    }
    for (size_t i = 0; i < watches.size(); ++i) {
      short revents = fds[kCount + i].revents;
      if (watches[i].fd >= 0 && revents && !watches[i].on_ready(revents)) {
        watches[i].fd = -1;  // poll ignores negative fds
      }
    }
    if (!ext.exited && ext.reported_exit && *ext.reported_exit) {
      ext.Exited(**ext.reported_exit, now);
    }
    if (options.after_turn) options.after_turn();
    if (eof_pending && options.started()) {
      eof_pending = false;
      client_gone(now);
    }
    // Not once the extension is being ended (gander told to end, Goose gone): a fresh one
    // would only be ended in turn, or outlive the signal that asked for the end.
    if (RestartControl* rc = options.restart;
        rc && rc->requested && !ext.exited && !shutdown.Scheduled()) {
      RestartExtension(*rc, relays, ext, shutdown, watches, threads, now);
    }
    shutdown.Fire(now);
    if (ext.exited && now >= ext.drain_deadline) break;
  }
  threads.Stop(true);  // before the end's events: nothing runs beside this thread from here on
  FlushToClient(relays);
  if (options.on_relay_done) options.on_relay_done(up.stats(), down.stats(), err.stats());
  if (int null = open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) {
    dup2(null, options.client_out);
    close(null);
  }
  return ext.status;
}

}  // namespace gander::monitor
