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

#include "common/unique_fd.h"
#include "monitor/stdio_relay.h"

namespace gander::monitor {
namespace {

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

constexpr int64_t kNever = INT64_MAX;

// The shutdown sequence: each step happens once, at its deadline or earlier when asked.
class Shutdown {
 public:
  Shutdown(int pidfd, pid_t kill_group) : pidfd_(pidfd), kill_group_(kill_group) {}

  void TermAt(int64_t when) { term_at_ = std::min(term_at_, when); }
  void KillAt(int64_t when) { kill_at_ = std::min(kill_at_, when); }
  int64_t NextDeadline() const {
    return std::min(term_sent_ ? kNever : term_at_, kill_sent_ ? kNever : kill_at_);
  }
  void Fire(int64_t now) {
    if (!term_sent_ && now >= term_at_) {
      term_sent_ = true;
      Signal(SIGTERM);
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
  int64_t term_at_ = kNever;
  int64_t kill_at_ = kNever;
  bool term_sent_ = false;
  bool kill_sent_ = false;
};

int ExitStatus(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return info.si_status;
  return 128 + info.si_status;  // CLD_KILLED, CLD_DUMPED
}

}  // namespace

int Supervise(const SupervisorOptions& options) {
  // gander's own termination signals arrive through a signalfd, in the loop.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, sig);
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed stdout shows up as EPIPE
  UniqueFd signal_fd(signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));

  UniqueFd child_in(options.child_in);
  ByteRelay up(options.client_in, options.child_in);      // Goose -> extension
  ByteRelay down(options.child_out, options.client_out);  // extension -> Goose
  Shutdown shutdown(options.pidfd, options.kill_group);
  bool exited = false;
  int status = 0;
  int64_t drain_deadline = kNever;

  auto client_gone = [&](int64_t now) {
    shutdown.TermAt(now + options.term_after_eof_ms);
    shutdown.KillAt(now + options.kill_after_eof_ms);
  };

  std::vector<Watch> watches = options.watches;
  std::vector<pollfd> fds;
  while (!exited || !down.Finished()) {
    enum { kClientIn, kChildIn, kChildOut, kClientOut, kPidfd, kSignal, kCount };
    fds.assign({
        {up.WantsRead() ? options.client_in : -1, POLLIN, 0},
        {up.WantsWrite() && child_in ? child_in.get() : -1, POLLOUT, 0},
        {down.WantsRead() ? options.child_out : -1, POLLIN, 0},
        {down.WantsWrite() ? options.client_out : -1, POLLOUT, 0},
        {exited ? -1 : options.pidfd, POLLIN, 0},
        {signal_fd.get(), POLLIN, 0},
    });
    for (const Watch& w : watches) fds.push_back({w.fd, POLLIN, 0});
    int64_t now = NowMs();
    int64_t deadline = std::min(shutdown.NextDeadline(), drain_deadline);
    int timeout = deadline == kNever ? -1 : static_cast<int>(std::max<int64_t>(0, deadline - now));
    int ready = poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) break;
    now = NowMs();

    if (fds[kClientIn].revents) {
      bool was_open = !up.input_closed();
      up.OnReadable();
      if (was_open && up.input_closed()) client_gone(now);
    }
    if (fds[kChildIn].revents & (POLLERR | POLLHUP)) {
      up.BreakOutput();  // the extension closed its stdin: Goose's bytes have nowhere to go
    } else if (fds[kChildIn].revents) {
      up.OnWritable();
    }
    // Goose's stdin is done and every byte reached the extension: pass the EOF on.
    if (up.Finished() && child_in) child_in.Reset();
    if (fds[kChildOut].revents) down.OnReadable();
    if (fds[kClientOut].revents & (POLLERR | POLLHUP)) {
      down.BreakOutput();
    } else if (fds[kClientOut].revents) {
      down.OnWritable();
    }
    if (down.output_broken() && !up.input_closed()) client_gone(now);  // Goose went away

    if (fds[kSignal].revents) {
      signalfd_siginfo info;
      while (read(signal_fd.get(), &info, sizeof(info)) == sizeof(info)) {
        shutdown.TermAt(now);
        shutdown.KillAt(now + options.kill_after_signal_ms);
      }
    }
    if (fds[kPidfd].revents) {
      siginfo_t info{};
      if (waitid(static_cast<idtype_t>(P_PIDFD), options.pidfd, &info, WEXITED) == 0) {
        exited = true;
        status = ExitStatus(info);
        // Every writer of the extension's stdout is gone with the init's namespace; without
        // one, an escaped grandchild could hold it open: do not wait for it forever.
        drain_deadline = now + 1000;
      }
    }
    for (size_t i = 0; i < watches.size(); ++i) {
      short revents = fds[kCount + i].revents;
      if (watches[i].fd >= 0 && revents && !watches[i].on_ready(revents)) {
        watches[i].fd = -1;  // poll ignores negative fds
      }
    }
    if (options.after_turn) options.after_turn();
    shutdown.Fire(now);
    if (exited && now >= drain_deadline) break;
  }
  // Flush what is still buffered for Goose; stdout is blocking, so this finishes.
  while (down.WantsWrite()) down.OnWritable();
  return status;
}

}  // namespace gander::monitor
