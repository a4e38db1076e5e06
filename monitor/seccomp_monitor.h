// The seccomp listener's side of the supervisor loop: receive one notification, decide on a
// copy of what it points at, answer, and turn it into events. Denied syscalls are reported
// before their errno is returned; watched file syscalls are recorded and continued (the mount
// view and Landlock enforce, so a thread racing to change the path gains nothing); in census
// mode every syscall is counted by name.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "common/unique_fd.h"
#include "events/event.h"
#include "events/event_queue.h"
#include "monitor/network_handler.h"
#include "monitor/path_classifier.h"
#include "monitor/path_resolver.h"
#include "monitor/seccomp_notify.h"
#include "policies/denied_syscalls.h"
#include "policies/watched_syscalls.h"
#include "relay/tool_call_tracker.h"

namespace gander::monitor {

// /proc/PID as seen from gander: paths inside a pivot_root'ed sandbox come back as the
// sandbox sees them (the kernel writes them relative to the sandbox's root).
// Who a notification's thread belongs to.
struct ProcessIdentity {
  pid_t pid = 0;                       // the process (thread group), as gander sees it
  std::optional<int32_t> sandbox_pid;  // the same inside the sandbox's pid namespace
  std::string executable;              // "" when unknown
};

class Processes {
 public:
  virtual ~Processes() = default;
  // `tid` is the notifying thread; the view answers for its process.
  virtual std::unique_ptr<ProcessView> View(pid_t tid) = 0;
  virtual ProcessIdentity Identify(pid_t tid) = 0;
  // The target of a symlink at `path` as the process sees its filesystem, nullopt when
  // `path` is not a symlink (read through /proc/TID/root, i.e. in the sandbox's view).
  virtual std::optional<std::string> ReadLinkInView(pid_t tid, const std::string& path) = 0;
  // The same lookup from a handle on the sandbox's root, opened once (OpenRoot): every
  // process of a sandbox has the same root for good (chroot, pivot_root, mount and setns are
  // denied), and a walk from an open directory skips /proc/TID/root's procfs lookups and
  // access checks at every path (a few microseconds per notification). An invalid handle:
  // not available, ReadLinkInView is used.
  virtual UniqueFd OpenRoot(pid_t /*tid*/) { return {}; }
  virtual std::optional<std::string> ReadLinkInRoot(int /*root*/, const std::string& /*path*/) {
    return std::nullopt;
  }
};

class ProcfsProcesses final : public Processes {
 public:
  std::unique_ptr<ProcessView> View(pid_t tid) override;
  ProcessIdentity Identify(pid_t tid) override;
  std::optional<std::string> ReadLinkInView(pid_t tid, const std::string& path) override;
  UniqueFd OpenRoot(pid_t tid) override;
  std::optional<std::string> ReadLinkInRoot(int root, const std::string& path) override;

 private:
  std::optional<std::string> root_;  // the sandbox's root, read at the first notification
};

// Is a file event worth a line in the audit log outside learn mode? Everything outside the
// workspace that is not a plain read of what the policy grants. (Also used by the gVisor
// backend's strace reader.)
bool NotableFileEvent(const events::FileEvent& e);
// Does the sandbox refuse this access (outside or denied path, or a change to a read-only
// grant)?
bool RefusedBySandbox(events::FileAccess access, events::PathClass path_class);

struct SeccompMonitorConfig {
  std::string extension;
  ClassifierRules rules{std::vector<ClassifierRule>{}};  // what the sandbox enforces
  // `--mode monitor`: the policy on trial. Accesses the sandbox allows but it would refuse
  // are recorded as would_deny, with its path class.
  std::optional<ClassifierRules> trial;
  std::vector<policies::DeniedSyscall> denials;  // the table the filter was compiled from
  // Syscall numbers `syscalls.allow` leaves out: denied with `unlisted_errno`, reported.
  std::set<int> unlisted;
  int unlisted_errno = 0;
  policies::FilesWatch files = policies::FilesWatch::kOpens;
  bool census = false;          // learn mode: every syscall notifies and is counted
  bool log_all_files = false;   // learn mode: every file event, not only the notable ones
  bool log_home = false;        // also every file event in the private home (install runs)
  std::string home, workspace;  // for the events' path labels (NormaliseForLabel)
  // The extension's pid (inside the sandbox's pid namespace when `namespaces`), once the
  // launcher knows it: its exit is the launcher's to report, with the status wait returns.
  const pid_t* extension_pid = nullptr;
  bool namespaces = true;
  // The stdio relay's tracker: which tool call each event belongs to (and per-call counts).
  // Null: every event says `startup`.
  relay::ToolCallTracker* tool_calls = nullptr;
  // connect, sendto, sendmsg and sendmmsg go here (the egress broker); nullptr: not watched.
  NetworkHandler* network = nullptr;
  // Count the notified syscalls (published as `counted` syscall events). Off under gVisor:
  // the notifications come from runsc's sentry, not from the extension.
  bool count_syscalls = true;
};

class SeccompMonitor {
 public:
  SeccompMonitor(Unotify& unotify, TargetMemory& memory, Processes& processes,
                 SeccompMonitorConfig config, events::BoundedEventQueue& queue);

  // Receives one notification and answers it. False when the listener is gone (every
  // process of the sandbox exited) or broken.
  bool HandleOne();
  // The watch thread's way in (Watch::await): waits in the kernel for the next notification,
  // without the loop's lock, and holds it for HandleOne. 1: one is held; 0: nothing (a
  // signal, or a target killed while it waited): wait again; -1: the listener is gone.
  int Await();

  // One kCounted SyscallEvent per syscall seen since the last call (the census, or the
  // watched and denied syscalls outside learn mode).
  void PublishCounts();

  // "census" (every syscall) or "watched" (the watched and denied ones).
  const char* accounting() const { return config_.census ? "census" : "watched"; }
  uint64_t handled() const { return handled_; }

  // The decision on one notification, without the kernel: the response and the events.
  // Public for tests.
  Response Decide(const Notification& n, std::vector<events::Event>& events);

 private:
  events::Event BaseEvent(pid_t pid);
  Response Deny(const Notification& n, int error, std::vector<events::Event>& events);
  events::Event ExecEvent(const Notification& n, const policies::WatchedSyscall& w);
  void DecideFile(const Notification& n, const policies::WatchedSyscall& w,
                  std::vector<events::Event>& events);
  void DecideExit(const Notification& n, std::vector<events::Event>& events);
  const ProcessIdentity& Identify(pid_t tid);
  const std::string& Name(int nr);

  Unotify& unotify_;
  std::optional<Notification> held_;  // received by Await, answered by the next HandleOne
  TargetMemory& memory_;
  Processes& processes_;
  SeccompMonitorConfig config_;
  events::BoundedEventQueue& queue_;
  std::unordered_map<int, const policies::WatchedSyscall*> watched_;
  std::unordered_multimap<int, const policies::DeniedSyscall*> denied_;
  std::unordered_map<int, std::string> names_;
  std::vector<std::string> label_anchors_;                 // deny rules: labels keep them whole
  std::unordered_map<int, std::string> network_nrs_;       // connect, sendto, ... by number
  std::unordered_map<pid_t, ProcessIdentity> identities_;  // by thread id
  std::map<int, uint64_t> counts_;                         // since the last PublishCounts
  // The sandbox's root, opened at the first symlink check (this monitor's sandbox only: a
  // restarted extension gets a fresh monitor).
  UniqueFd root_;
  bool root_opened_ = false;
  uint64_t handled_ = 0;
};

}  // namespace gander::monitor
