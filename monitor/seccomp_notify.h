// The kernel side of seccomp user notification, behind a small interface so that the
// decisions made on notifications (SeccompMonitor::Decide) are tested without a kernel, with
// the fakes of tests/unit/monitor/seccomp_monitor_test.cc.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gander::monitor {

// One notification, copied out of the kernel's struct.
struct Notification {
  uint64_t id = 0;
  pid_t pid = 0;  // in gander's pid namespace
  int nr = -1;    // syscall number (native ABI: foreign ABIs never get here)
  uint64_t args[6] = {};
};

// How to answer: let the syscall run (the kernel re-reads user memory: only for syscalls
// whose enforcement lies elsewhere), or return from it without running it: with an errno, or
// with 0 when `error` is 0 (the supervisor did the work itself, e.g. a brokered connect).
struct Response {
  bool continue_syscall = true;
  int error = 0;          // errno to return when !continue_syscall; 0: the syscall returns 0
  bool deferred = false;  // not answered now: the egress broker answers it later
};

class Unotify {
 public:
  virtual ~Unotify() = default;
  virtual Result<Notification> Receive() = 0;
  // False when the target died in the meantime (ENOENT): nothing to answer.
  virtual bool Send(uint64_t id, const Response& response) = 0;
  // Is the notification still pending (its thread alive and waiting)? Checked after opening
  // the target by pid, so that a recycled pid is never mistaken for it.
  virtual bool IdValid(uint64_t /*id*/) { return true; }
  // Has every process that could notify gone (the listener hung up)? Asked when a Receive
  // found nothing: a target killed while it waited leaves nothing to receive too.
  virtual bool Gone() { return false; }
};

// The real thing, over a listener fd. Turns on synchronous wake-up (Linux 6.6+) when the
// kernel has it: supervisor and target then hand the CPU to each other directly.
class KernelUnotify final : public Unotify {
 public:
  explicit KernelUnotify(UniqueFd listener);
  // Without a listener yet: what answers through it can be built before it arrives (Attach).
  KernelUnotify() = default;
  void Attach(UniqueFd listener);
  int fd() const { return listener_.get(); }
  bool sync_wake_up() const { return sync_wake_up_; }
  Result<Notification> Receive() override;
  bool Send(uint64_t id, const Response& response) override;
  bool IdValid(uint64_t id) override;
  bool Gone() override;

 private:
  UniqueFd listener_;
  bool sync_wake_up_ = false;
};

// The target's memory: the paths and structs a notification points at. Read once, into our
// own copy, and decided on that copy.
class TargetMemory {
 public:
  virtual ~TargetMemory() = default;
  // A NUL-terminated string of at most `max` bytes; nullopt when unreadable; `truncated` when
  // no NUL came within `max`.
  virtual std::optional<std::string> ReadString(pid_t pid, uint64_t address, size_t max,
                                                bool* truncated) = 0;
  virtual bool ReadBytes(pid_t pid, uint64_t address, void* out, size_t size) = 0;
};

// process_vm_readv, page by page so that a string ending just before an unmapped page still
// reads.
class KernelTargetMemory final : public TargetMemory {
 public:
  std::optional<std::string> ReadString(pid_t pid, uint64_t address, size_t max,
                                        bool* truncated) override;
  bool ReadBytes(pid_t pid, uint64_t address, void* out, size_t size) override;
};

}  // namespace gander::monitor
