#include "monitor/watch_thread.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <system_error>

namespace gander::monitor {

template <class WantsIn>
void TurnLock::GiveWay(WantsIn other_wants_in) const {
  if (!other_wants_in()) return;
  const auto until = std::chrono::steady_clock::now() + give_way_;
  while (other_wants_in() && std::chrono::steady_clock::now() < until) sched_yield();
}

void TurnLock::lock() {
  // Said before waiting: a watch thread that is not counted in yet gives way from here on,
  // and one that is has its one turn first (it counts itself out once it holds the mutex).
  loop_waiting_.store(true, std::memory_order_release);
  GiveWay([this] { return watches_waiting_.load(std::memory_order_acquire) > 0; });
  mutex_.lock();
  loop_waiting_.store(false, std::memory_order_release);
}

void TurnLock::LockForWatch() {
  GiveWay([this] { return loop_waiting_.load(std::memory_order_acquire); });
  watches_waiting_.fetch_add(1, std::memory_order_acq_rel);
  mutex_.lock();
  watches_waiting_.fetch_sub(1, std::memory_order_acq_rel);
}

std::shared_ptr<WatchThread> WatchThread::TryStart(Watch watch, TurnLock& lock,
                                                   const std::function<void()>* after_turn) {
  std::shared_ptr<WatchThread> t = TryStandby();
  if (t) t->Serve(std::move(watch), lock, after_turn);
  return t;
}

int WatchThread::WakeSignal() {
  static const int signal = [] {
    // Not a real-time signal: a thread-directed one of those fails (EAGAIN) once the user's
    // RLIMIT_SIGPENDING is used up, which anything of that user can do; a standard signal is
    // at worst already pending. SIGURG: its default is to be ignored, and gander asks for it
    // on no socket.
    const int sig = SIGURG;
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, nullptr);  // no SA_RESTART: the blocked call returns EINTR
    return sig;
  }();
  return signal;
}

std::shared_ptr<WatchThread> WatchThread::TryStandby() {
  WakeSignal();  // its handler installed before any thread could be sent it
  UniqueFd stop(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  UniqueFd go(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  UniqueFd done(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop || !go || !done) return nullptr;
  std::shared_ptr<WatchThread> t(new WatchThread(std::move(stop), std::move(go), std::move(done)));
  // Every signal blocked in the thread from its first instruction (it inherits the mask it is
  // made with): a process-directed signal goes to a thread that does not block it, and this one
  // is made before the supervisor loop blocks SIGTERM, SIGINT and SIGHUP for its signalfd. With
  // them open here, a SIGTERM (Goose's PDEATHSIG, a user's kill) ended gander on the spot,
  // without tearing its sandbox down.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    t->thread_ = std::thread([raw = t.get()] {
      if (raw->WaitForWatch()) raw->Run();
      uint64_t one = 1;
      (void)!write(raw->done_.get(), &one, sizeof(one));
    });
  } catch (const std::system_error&) {  // EAGAIN: no thread to be had (RLIMIT_NPROC)
    t = nullptr;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

WatchThread::WatchThread(UniqueFd stop, UniqueFd go, UniqueFd done)
    : stop_(std::move(stop)), go_(std::move(go)), done_(std::move(done)) {}

void WatchThread::Serve(Watch watch, TurnLock& lock, const std::function<void()>* after_turn) {
  watch_ = std::move(watch);
  lock_ = &lock;
  after_turn_ = after_turn;
  uint64_t one = 1;
  (void)!write(go_.get(), &one, sizeof(one));  // the eventfd's write orders the stores above
}

// Parked until Serve or Stop; true when there is a watch to serve.
bool WatchThread::WaitForWatch() {
  pollfd fds[2] = {{go_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
  for (;;) {
    int ready = poll(fds, 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || fds[1].revents) return false;
    uint64_t n = 0;
    if (fds[0].revents && read(go_.get(), &n, sizeof(n)) == sizeof(n)) return true;
  }
}

// Waits for the watch: the revents for its callback, 0 to wait again, -1 to return.
short WatchThread::Wait() {
  if (watch_.await) {
    int got = watch_.await();
    if (stopping_.load()) return -1;
    return got > 0 ? POLLIN : got < 0 ? POLLHUP : 0;
  }
  pollfd fds[2] = {{watch_.fd, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
  int ready = poll(fds, 2, -1);
  if (ready < 0) {
    // Not with two fds on the stack: the watch ends as a hung-up one would.
    return errno == EINTR ? 0 : -1;
  }
  if (fds[1].revents) return -1;
  return fds[0].revents;
}

void WatchThread::Run() {
  if (watch_.await) {
    // Let in for the thread's whole life, not around each wait: two sigprocmask calls per
    // notification cost ~1 us of its ~18 here. So a wake signal can also land in a callback
    // (a connect or write of the egress broker, a log line) and fail it with EINTR: Join's only
    // once the thread is being stopped, and one sent to gander's process only by someone
    // allowed to signal gander (SIGKILL included); everywhere else it is held.
    sigset_t wake;
    sigemptyset(&wake);
    sigaddset(&wake, WakeSignal());
    pthread_sigmask(SIG_UNBLOCK, &wake, nullptr);
  }
  for (;;) {
    short revents = Wait();
    if (revents < 0) return;
    if (revents == 0) continue;
    lock_->LockForWatch();
    std::lock_guard<TurnLock> held(*lock_, std::adopt_lock);
    if (stopping_.load()) return;  // Stop was called while this thread waited for the lock
    bool more = watch_.on_ready(revents);
    if (after_turn_ && *after_turn_) (*after_turn_)();
    if (!more) return;
  }
}

void WatchThread::AskToStop() {
  stopping_.store(true);
  uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof(one));
}

// Joins a thread that was asked to stop. One blocked in its await is sent the wake signal, and
// sent it again every millisecond until it has returned: a signal that lands between two waits
// (before the thread saw `stopping_`) interrupts nothing.
void WatchThread::Join() {
  pollfd done{done_.get(), POLLIN, 0};
  while (watch_.await && poll(&done, 1, 0) == 0) {
    pthread_kill(thread_.native_handle(), WakeSignal());
    poll(&done, 1, 1);
  }
  thread_.join();
}

void WatchThread::Stop(std::unique_lock<TurnLock>& held) {
  if (!thread_.joinable()) return;
  AskToStop();
  held.unlock();  // the thread may be waiting for it: it then sees `stopping_` and returns
  Join();
  held.lock();
}

WatchThread::~WatchThread() {
  if (!thread_.joinable()) return;
  AskToStop();  // not stopped by its owner, who holds no lock then
  Join();
}

}  // namespace gander::monitor
