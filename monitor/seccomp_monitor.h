// The seccomp listener's side of the supervisor loop: receive one notification, decide on a
// copy of what it points at, answer, and turn it into events. Denied syscalls are reported
// before their errno is returned; watched file syscalls are recorded and continued (the mount
// view and Landlock enforce, so a thread racing to change the path gains nothing); in census
// mode every syscall is counted by name.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "monitor/denied_syscalls.h"
#include "monitor/event.h"
#include "monitor/event_queue.h"
#include "monitor/path_classifier.h"
#include "monitor/path_resolver.h"
#include "monitor/seccomp_notify.h"
#include "monitor/watched_syscalls.h"

namespace gander::monitor {

// /proc/PID as seen from gander: paths inside a pivot_root'ed sandbox come back as the
// sandbox sees them (the kernel writes them relative to the sandbox's root).
class Processes {
 public:
  virtual ~Processes() = default;
  virtual std::unique_ptr<ProcessView> View(pid_t pid) = 0;
  virtual std::string Executable(pid_t pid) = 0;  // "" when unknown
};

class ProcfsProcesses final : public Processes {
 public:
  std::unique_ptr<ProcessView> View(pid_t pid) override;
  std::string Executable(pid_t pid) override;
};

struct SeccompMonitorConfig {
  std::string extension;
  ClassifierRules rules{std::vector<ClassifierRule>{}};
  std::vector<DeniedSyscall> denials;  // the table the filter was compiled from
  FilesWatch files = FilesWatch::kOpens;
  bool census = false;         // learn mode: every syscall notifies and is counted
  bool log_all_files = false;  // learn mode: every file event, not only the notable ones
};

class SeccompMonitor {
 public:
  SeccompMonitor(Unotify& unotify, TargetMemory& memory, Processes& processes,
                 SeccompMonitorConfig config, BoundedEventQueue& queue);

  // Receives one notification and answers it. False when the listener is gone (every
  // process of the sandbox exited) or broken.
  bool HandleOne();

  // One kCounted SyscallEvent per syscall seen since the last call (the census, or the
  // watched and denied syscalls outside learn mode).
  void PublishCounts();

  // "census" (every syscall) or "watched" (the watched and denied ones).
  const char* accounting() const { return config_.census ? "census" : "watched"; }
  uint64_t handled() const { return handled_; }

  // The decision on one notification, without the kernel: the response and the events.
  // Public for tests.
  Response Decide(const Notification& n, std::vector<Event>& events);

 private:
  Event BaseEvent(pid_t pid);
  void DecideFile(const Notification& n, const WatchedSyscall& w, std::vector<Event>& events);
  std::string Executable(pid_t pid);
  const std::string& Name(int nr);

  Unotify& unotify_;
  TargetMemory& memory_;
  Processes& processes_;
  SeccompMonitorConfig config_;
  BoundedEventQueue& queue_;
  std::unordered_map<int, const WatchedSyscall*> watched_;
  std::unordered_multimap<int, const DeniedSyscall*> denied_;
  std::unordered_map<int, std::string> names_;
  std::unordered_map<pid_t, std::string> executables_;
  std::map<int, uint64_t> counts_;  // since the last PublishCounts
  uint64_t handled_ = 0;
};

}  // namespace gander::monitor
