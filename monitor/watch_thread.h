// A watch served by a thread of its own (Watch::own_thread): the thread waits on the watch's
// fd alone and runs its callback, then the loop's after_turn, with the supervisor loop's lock
// held. The loop holds that lock for its whole turn and lets go of it only while it waits in
// poll, so the loop's state (the relay, the tool-call tracker, the event queue and its sinks,
// the egress broker) is still touched by one thread at a time, in the same steps as before.
//
// Why: the seccomp listener is one fd among a dozen in the loop's poll set, which the kernel
// registers and unregisters at every wait (a microsecond or two per notification on a VM);
// waited on alone, with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, the notifying thread hands the CPU
// straight to this one and back. A watch with an `await` (the listener's: blocked in NOTIF_RECV,
// no poll at all) is woken for Stop by WakeSignal(), let in by that thread alone and sent to it
// until it has returned: a signal that comes between two waits is simply sent again.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "common/unique_fd.h"
#include "monitor/supervisor.h"

namespace gander::monitor {

// The supervisor loop's lock, taken in turns. A watch thread that wants the lock has a
// notification in hand, so a process of the sandbox is blocked until its turn ends. With a
// plain mutex the loop won that race: it takes the lock again as soon as its poll returns,
// while the watch thread that the loop's unlock woke is still being scheduled (50-150 us on
// this project's VM, the extension's execve waiting meanwhile, in half of all starts). And a
// watch thread with the next notification already pending could take the lock back before
// the woken loop ran, turn after turn, keeping the relay, the signals and the pidfd waiting.
// So each side that wants the lock says so, and the other gives way for one turn: the loop
// waits for a watch thread already counted in, a watch thread waits while the loop wants in.
// Each gives way for `give_way` at most: a side that is not scheduled (a host under load)
// holds the other up no longer than that, and then the plain mutex decides.
class TurnLock {
 public:
  explicit TurnLock(std::chrono::microseconds give_way = std::chrono::microseconds(500))
      : give_way_(give_way) {}
  // The loop's side (Lockable, for std::unique_lock).
  void lock();
  void unlock() { mutex_.unlock(); }
  // A watch thread's side.
  void LockForWatch();
  // Watch threads counted in (waiting for the mutex or about to); for tests.
  int watches_waiting() const { return watches_waiting_.load(); }

 private:
  // Yields while the other side wants in (`other_wants_in()`), for give_way_ at most.
  template <class WantsIn>
  void GiveWay(WantsIn other_wants_in) const;

  std::mutex mutex_;
  std::atomic<int> watches_waiting_{0};
  std::atomic<bool> loop_waiting_{false};
  const std::chrono::microseconds give_way_;
};

class WatchThread {
 public:
  // Interrupts a thread blocked in its watch's await (a handler that does nothing, installed
  // without SA_RESTART, so the blocking call fails with EINTR). Unblocked only by such a
  // thread; held everywhere else (monitor::HoldTerminationSignals).
  static int WakeSignal();

  // Starts the thread; nullptr when no thread (or its stop eventfd) can be had: the caller
  // then polls the watch in its loop as before.
  static std::shared_ptr<WatchThread> TryStart(Watch watch, TurnLock& lock,
                                               const std::function<void()>* after_turn);
  // Starts a thread that waits for its watch (Serve), so that a thread is already running when
  // the watch's fd arrives: the seccomp listener's first notification (the extension's execve)
  // then waits for a wake-up, not for a new thread's first scheduling (0.2 ms on a quiet host,
  // milliseconds on a busy one). Made while the sandbox is being built.
  static std::shared_ptr<WatchThread> TryStandby();
  // Gives a standby thread its watch (once); the thread serves it from then on, as TryStart's.
  void Serve(Watch watch, TurnLock& lock, const std::function<void()>* after_turn);
  WatchThread(const WatchThread&) = delete;
  WatchThread& operator=(const WatchThread&) = delete;
  // Stops the thread. Called with `lock` held (by `held`): it is let go of while the thread
  // finishes its callback, and held again on return. The callback is not called after this.
  void Stop(std::unique_lock<TurnLock>& held);
  ~WatchThread();

  bool extension() const { return watch_.extension; }

 private:
  WatchThread(UniqueFd stop, UniqueFd go, UniqueFd done);
  bool WaitForWatch();
  void Run();
  short Wait();
  void AskToStop();
  void Join();

  Watch watch_;
  TurnLock* lock_ = nullptr;
  const std::function<void()>* after_turn_ = nullptr;  // may be empty
  UniqueFd stop_;                                      // an eventfd: readable once Stop is called
  UniqueFd go_;    // an eventfd: readable once Serve gave the watch
  UniqueFd done_;  // an eventfd: readable once the thread's function has returned
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace gander::monitor
