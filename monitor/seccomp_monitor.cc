#include "monitor/seccomp_monitor.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/path.h"

namespace gander::monitor {
namespace {

std::optional<std::string> ReadLink(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

// "Tgid:" and the last "NSpid:" field of /proc/TID/status, read with plain read(2)s
// (ReadFile) rather than through an ifstream: it is on the path of every exec and exit notification
// (the extension's own execve among them), and a stream's buffer, locale and line copies cost more
// than the reads. The whole file: NSpid comes after Groups, which a user with a few hundred
// supplementary groups grows past any fixed buffer. Only whole lines are parsed.
struct ProcStatus {
  pid_t tgid = 0;
  std::optional<int32_t> nspid;
};
ProcStatus ReadStatus(pid_t tid) {
  ProcStatus st;
  char path[32];
  snprintf(path, sizeof(path), "/proc/%d/status", tid);
  const std::string text = ReadFile(path).value_or("");
  auto numbers = [](std::string_view rest, auto&& each) {
    for (;;) {
      size_t start = rest.find_first_not_of(" \t");
      if (start == std::string_view::npos) return;
      rest.remove_prefix(start);
      int32_t value = 0;
      auto [end, err] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
      if (err != std::errc()) return;
      each(value);
      rest.remove_prefix(static_cast<size_t>(end - rest.data()));
    }
  };
  std::string_view rest = text;
  for (size_t eol; (eol = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(eol + 1)) {
    std::string_view line = rest.substr(0, eol);
    if (line.starts_with("Tgid:")) numbers(line.substr(5), [&](int32_t v) { st.tgid = v; });
    // the innermost namespace comes last
    if (line.starts_with("NSpid:")) numbers(line.substr(6), [&](int32_t v) { st.nspid = v; });
  }
  return st;
}

class ProcfsView final : public ProcessView {
 public:
  ProcfsView(pid_t tid, const std::optional<std::string>& root)
      : tid_(tid), base_("/proc/" + std::to_string(tid)), root_(root) {}
  // Read only when a /proc/<pid>/... path needs it: /proc/TID/status costs more than the
  // whole rest of a notification.
  std::optional<int> pid() const override {
    if (!sandbox_pid_) sandbox_pid_ = ReadStatus(tid_).nspid.value_or(-1);
    return *sandbox_pid_ >= 0 ? std::optional<int>(*sandbox_pid_) : std::nullopt;
  }
  Result<std::string> cwd() const override { return Link(base_ + "/cwd"); }
  Result<std::string> root() const override {
    if (root_) return *root_;
    return Link(base_ + "/root");
  }
  Result<std::string> fd_path(int fd) const override {
    return Link(base_ + "/fd/" + std::to_string(fd));
  }

 private:
  static Result<std::string> Link(const std::string& path) {
    auto target = ReadLink(path);
    if (!target) return ErrnoError("readlink " + path);
    return *target;
  }
  pid_t tid_;
  std::string base_;
  const std::optional<std::string>& root_;
  mutable std::optional<int> sandbox_pid_;
};

events::FileAccess OpenAccess(uint64_t flags, events::FileAccess fallback) {
  if (flags & O_CREAT) return events::FileAccess::kCreate;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) return events::FileAccess::kWrite;
  return fallback;
}

// "/proc/N/root/X" -> "X" ("/" for "/proc/N/root"); nullopt for any other path.
std::optional<std::string> InsideProcRoot(const std::optional<std::string>& path) {
  if (!path || !path->starts_with("/proc/")) return std::nullopt;
  std::string_view rest = std::string_view(*path).substr(6);
  size_t slash = rest.find('/');
  if (slash != std::string_view::npos && rest.substr(slash).starts_with("/root") &&
      rest.find_first_not_of("0123456789") == slash &&
      (rest.size() == slash + 5 || rest[slash + 5] == '/')) {
    std::string inside(rest.substr(slash + 5));
    return inside.empty() ? "/" : inside;
  }
  return std::nullopt;
}

}  // namespace

// Is a file event worth a line in the audit log outside learn mode? Everything outside the
// workspace that is not a plain read of what the policy grants: outside and denied paths,
// and changes to anything but the workspace and private directories.
bool NotableFileEvent(const events::FileEvent& e) {
  switch (e.path_class) {
    case events::PathClass::kOutside:
    case events::PathClass::kDenied:
    case events::PathClass::kUnknown:
      return true;
    case events::PathClass::kWorkspace:
    case events::PathClass::kPrivate:
    case events::PathClass::kAllowedWrite:
    case events::PathClass::kSystem:  // /proc, /dev: the sandbox's own (`> /dev/null` is no news)
      return false;
    case events::PathClass::kAllowedReadOnly:
      return e.access != events::FileAccess::kRead && e.access != events::FileAccess::kExec &&
             e.access != events::FileAccess::kStat;
  }
  return true;
}

// Is the event in the private tmpfs over the home directory (not a workspace inside it)?
bool InPrivateHome(const events::FileEvent& e, const std::string& home) {
  const std::string path = e.path.value_or(e.raw_path);
  return e.path_class == events::PathClass::kPrivate && !home.empty() && path.starts_with(home) &&
         (path.size() == home.size() || path[home.size()] == '/');
}

// Does the sandbox refuse this access? What lies outside the policy or under a deny rule,
// and any change to what the policy grants read-only (mounted read-only).
bool RefusedBySandbox(events::FileAccess access, events::PathClass path_class) {
  bool mutates = access != events::FileAccess::kRead && access != events::FileAccess::kExec &&
                 access != events::FileAccess::kStat;
  return path_class == events::PathClass::kOutside || path_class == events::PathClass::kDenied ||
         (mutates && path_class == events::PathClass::kAllowedReadOnly);
}

std::unique_ptr<ProcessView> ProcfsProcesses::View(pid_t tid) {
  // Every process of the sandbox has the same root, for good: chroot, pivot_root, mount and
  // setns are denied by the filter. Read it once (a readlink per path otherwise).
  if (!root_) root_ = ReadLink("/proc/" + std::to_string(tid) + "/root");
  return std::make_unique<ProcfsView>(tid, root_);
}

ProcessIdentity ProcfsProcesses::Identify(pid_t tid) {
  ProcStatus thread = ReadStatus(tid);
  ProcessIdentity id;
  id.pid = thread.tgid > 0 ? thread.tgid : tid;
  id.sandbox_pid = id.pid == tid ? thread.nspid : ReadStatus(id.pid).nspid;
  id.executable = ReadLink("/proc/" + std::to_string(id.pid) + "/exe").value_or("");
  return id;
}

std::optional<std::string> ProcfsProcesses::ReadLinkInView(pid_t tid, const std::string& path) {
  return ReadLink("/proc/" + std::to_string(tid) + "/root" + path);
}

UniqueFd ProcfsProcesses::OpenRoot(pid_t tid) {
  return UniqueFd(
      open(("/proc/" + std::to_string(tid) + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

std::optional<std::string> ProcfsProcesses::ReadLinkInRoot(int root, const std::string& path) {
  // "/proc/TID/root" + path walks `path` from the root's directory: so does a relative walk
  // from the open root (".." at the root and absolute links inside resolve alike).
  size_t start = path.find_first_not_of('/');
  if (start == std::string::npos) return std::nullopt;  // the root itself: not a link
  char buf[PATH_MAX];
  ssize_t n = readlinkat(root, path.c_str() + start, buf, sizeof(buf));
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

SeccompMonitor::SeccompMonitor(Unotify& unotify, TargetMemory& memory, Processes& processes,
                               SeccompMonitorConfig config, events::BoundedEventQueue& queue)
    : unotify_(unotify),
      memory_(memory),
      processes_(processes),
      config_(std::move(config)),
      queue_(queue) {
  for (const policies::WatchedSyscall& w : policies::WatchedSyscalls()) {
    int nr = seccomp_syscall_resolve_name(std::string(w.name).c_str());
    if (nr >= 0) watched_[nr] = &w;
  }
  label_anchors_ = (config_.trial ? *config_.trial : config_.rules).DenyPaths();
  if (config_.network) {
    for (const char* name : {"connect", "sendto", "sendmsg", "sendmmsg"}) {
      int nr = seccomp_syscall_resolve_name(name);
      if (nr >= 0) network_nrs_[nr] = name;
    }
  }
  for (const policies::DeniedSyscall& d : config_.denials) {
    int nr = seccomp_syscall_resolve_name(std::string(d.name).c_str());
    if (nr >= 0 && !d.silent) denied_.emplace(nr, &d);
  }
}

const std::string& SeccompMonitor::Name(int nr) {
  auto it = names_.find(nr);
  if (it != names_.end()) return it->second;
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  std::string text = name ? name : "syscall_" + std::to_string(nr);
  free(name);
  return names_.emplace(nr, std::move(text)).first->second;
}

const ProcessIdentity& SeccompMonitor::Identify(pid_t tid) {
  auto it = identities_.find(tid);
  if (it != identities_.end()) return it->second;
  if (identities_.size() > 4096) identities_.clear();  // ids are reused: stay bounded
  return identities_[tid] = processes_.Identify(tid);
}

events::Event SeccompMonitor::BaseEvent(pid_t tid) {
  const ProcessIdentity& id = Identify(tid);
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = config_.extension;
  e.pid = id.pid;
  e.sandbox_pid = id.sandbox_pid;
  e.executable = id.executable;
  if (config_.tool_calls) e.tool_call = config_.tool_calls->Slot();
  return e;
}

void SeccompMonitor::DecideFile(const Notification& n, const policies::WatchedSyscall& w,
                                std::vector<events::Event>& events) {
  std::unique_ptr<ProcessView> view = processes_.View(n.pid);
  bool empty_path = w.at_flags >= 0 && (n.args[w.at_flags] & AT_EMPTY_PATH);
  for (const policies::PathArg* arg : {&w.first, &w.second}) {
    // Exec is watched at every level for its process event; its file event needs `opens`.
    if (arg->path < 0 || config_.files == policies::FilesWatch::kOff) continue;
    events::FileEvent file;
    file.syscall = Name(n.nr);
    file.access = arg->access;
    if (w.open_flags >= 0) file.access = OpenAccess(n.args[w.open_flags], arg->access);
    if (w.open_how) {
      open_how how{};
      if (memory_.ReadBytes(n.pid, n.args[2], &how, sizeof(how.flags))) {
        file.access = OpenAccess(how.flags, arg->access);
      }
    }
    bool truncated = false;
    std::optional<std::string> raw =
        memory_.ReadString(n.pid, n.args[arg->path], PATH_MAX, &truncated);
    if (!raw) {
      file.error = EFAULT;
    } else {
      RawPath shown = RawPathForEvent(*raw);
      file.raw_path = shown.text;
      file.raw_path_truncated = shown.truncated || truncated;
      std::optional<std::string> dirfd_path;
      if (arg->dirfd >= 0 && static_cast<int>(n.args[arg->dirfd]) != AT_FDCWD) {
        auto dir = view->fd_path(static_cast<int>(n.args[arg->dirfd]));
        if (dir) dirfd_path = *dir;
      }
      // PATH_MAX bytes without a NUL: the resolver answers ENAMETOOLONG, as the kernel does.
      std::string_view text = *raw;
      ClassifiedPath classified =
          ResolveAndClassify(text, dirfd_path, *view, config_.rules, {.empty_path = empty_path});
      // Every process of the sandbox shares one root: /proc/N/root/X is X.
      if (std::optional<std::string> inside = InsideProcRoot(classified.path)) {
        classified = ResolveAndClassify(*inside, std::nullopt, *view, config_.rules);
      }
      // A symlink where the user can plant one (the workspace, private or writable
      // directories) is followed one step in the sandbox's view, so a link to ~/.ssh shows
      // as what it reaches.
      if (classified.path && (classified.path_class == events::PathClass::kWorkspace ||
                              classified.path_class == events::PathClass::kPrivate ||
                              classified.path_class == events::PathClass::kAllowedWrite)) {
        if (!root_opened_) {
          root_opened_ = true;
          root_ = processes_.OpenRoot(n.pid);
        }
        std::optional<std::string> target =
            root_ ? processes_.ReadLinkInRoot(root_.get(), *classified.path)
                  : processes_.ReadLinkInView(n.pid, *classified.path);
        if (target) {
          ClassifiedPath reached =
              ClassifySymlinkTarget(*classified.path, *target, *view, config_.rules);
          if (reached.path) classified = std::move(reached);
        }
      }
      file.path = classified.path;
      file.path_class = classified.path_class;
      file.error = classified.error;
    }
    // The notification only observes; the mount view and Landlock enforce. The verdict says
    // what they will do.
    file.result = RefusedBySandbox(file.access, file.path_class) ? events::Verdict::kDenied
                                                                 : events::Verdict::kAllowed;
    if (config_.trial && file.result == events::Verdict::kAllowed && file.path) {
      events::PathClass enforced = file.path_class;
      file.path_class = config_.trial->Classify(*file.path);
      // A private path of the trial shown from the host (learn mode's real home): a read
      // would find the trial's empty tmpfs instead.
      bool hidden =
          file.path_class == events::PathClass::kPrivate &&
          enforced != events::PathClass::kPrivate &&
          (file.access == events::FileAccess::kRead || file.access == events::FileAccess::kExec ||
           file.access == events::FileAccess::kStat);
      if (hidden || RefusedBySandbox(file.access, file.path_class)) {
        file.result = events::Verdict::kWouldDeny;
      }
    }
    if (config_.log_all_files || NotableFileEvent(file) ||
        (config_.log_home && InPrivateHome(file, config_.home))) {
      file.path_label = NormaliseForLabel(file.path.value_or(file.raw_path), config_.home,
                                          config_.workspace, label_anchors_);
      events::Event e = BaseEvent(n.pid);
      e.payload = std::move(file);
      events.push_back(std::move(e));
    }
  }
  if (w.first.access == events::FileAccess::kExec) {
    events.push_back(ExecEvent(n, w));
    identities_.erase(n.pid);  // the image is about to change
  }
}

// The process event of an exec: the path and up to kMaxArgvEntries arguments as passed.
events::Event SeccompMonitor::ExecEvent(const Notification& n, const policies::WatchedSyscall& w) {
  events::Event e = BaseEvent(n.pid);
  events::ProcessEvent exec;
  exec.action = events::ProcessAction::kExec;
  bool truncated = false;
  exec.path = memory_.ReadString(n.pid, n.args[w.first.path], PATH_MAX, &truncated).value_or("");
  uint64_t argv = n.args[w.first.path + 1];
  for (size_t i = 0; argv != 0 && i <= events::kMaxArgvEntries; ++i) {
    uint64_t pointer = 0;
    if (!memory_.ReadBytes(n.pid, argv + i * sizeof(pointer), &pointer, sizeof(pointer)) ||
        pointer == 0) {
      break;
    }
    if (i == events::kMaxArgvEntries) {
      exec.argv_truncated = true;
      break;
    }
    bool cut = false;
    exec.argv.push_back(
        memory_.ReadString(n.pid, pointer, events::kMaxArgBytes, &cut).value_or(""));
    exec.argv_truncated |= cut;
  }
  e.payload = std::move(exec);
  return e;
}

void SeccompMonitor::DecideExit(const Notification& n, std::vector<events::Event>& events) {
  events::Event e = BaseEvent(n.pid);
  identities_.erase(n.pid);  // the thread id may be reused
  // The extension's own exit is reported by the launcher, with the status its wait returns
  // (a kill by a signal included); this one would be a duplicate.
  pid_t own = config_.namespaces ? e.sandbox_pid.value_or(0) : e.pid.value_or(0);
  if (config_.extension_pid && *config_.extension_pid > 0 && own == *config_.extension_pid) {
    return;
  }
  events::ProcessEvent exit;
  exit.action = events::ProcessAction::kExit;
  exit.path = e.executable;
  exit.exit_code = static_cast<int>(n.args[0] & 0xff);
  e.payload = std::move(exit);
  events.push_back(std::move(e));
}

// Refuses the call with `error`, on record: a denied syscall event.
Response SeccompMonitor::Deny(const Notification& n, int error,
                              std::vector<events::Event>& events) {
  events::Event e = BaseEvent(n.pid);
  events::SyscallEvent s;
  s.name = Name(n.nr);
  s.nr = n.nr;
  s.error = error;
  s.action = events::SyscallAction::kDenied;
  e.payload = std::move(s);
  events.push_back(std::move(e));
  return Response{false, error};
}

Response SeccompMonitor::Decide(const Notification& n, std::vector<events::Event>& events) {
  if (config_.count_syscalls) ++counts_[n.nr];
  // The same patterns as the filter's: outside census mode only matching calls get here.
  auto [first, last] = denied_.equal_range(n.nr);
  for (auto it = first; it != last; ++it) {
    const policies::DeniedSyscall& denied = *it->second;
    if (!policies::Matches(denied, n.args)) continue;
    return Deny(n, denied.error, events);
  }
  if (config_.unlisted.contains(n.nr)) return Deny(n, config_.unlisted_errno, events);
  if (auto network = network_nrs_.find(n.nr); network != network_nrs_.end()) {
    std::optional<Response> answer =
        config_.network->OnSyscall(n, network->second, BaseEvent(n.pid), events);
    if (!answer) return Response{false, 0, true};
    return *answer;
  }
  if (auto watched = watched_.find(n.nr); watched != watched_.end()) {
    const policies::WatchedSyscall& w = *watched->second;
    if (w.exits) {
      DecideExit(n, events);
    } else if (static_cast<int>(w.level) <= static_cast<int>(config_.files)) {
      DecideFile(n, w, events);
    }
  }
  return Response{true, 0};
}

int SeccompMonitor::Await() {
  auto n = unotify_.Receive();
  if (n) {
    held_ = *n;
    return 1;
  }
  if (n.error().code == EINTR) return 0;
  if (n.error().code == ENOENT) return unotify_.Gone() ? -1 : 0;
  return -1;
}

bool SeccompMonitor::HandleOne() {
  std::optional<Notification> held = std::exchange(held_, std::nullopt);
  auto n = held ? Result<Notification>(*held) : unotify_.Receive();
  if (!n) {
    // ENOENT: the target died between poll and receive. Anything else: the listener is gone.
    return n.error().code == ENOENT || n.error().code == EINTR;
  }
  ++handled_;
  std::vector<events::Event> events;
  Response response = Decide(*n, events);
  // Recorded before the answer: a denial is never returned unreported.
  for (events::Event& e : events) {
    if (config_.tool_calls) config_.tool_calls->Attribute(e);
    queue_.Push(std::move(e));
  }
  // Decided on our copy. No NOTIF_ID_VALID first: the answer depends on the arguments only,
  // and SEND itself fails (ENOENT) when the target is gone. Its events stay: it made the
  // call. (A pid reused within these microseconds could only misname a path in the log, and
  // needs the sandbox to cycle through its whole pid range meanwhile.)
  if (!response.deferred) unotify_.Send(n->id, response);
  return true;
}

void SeccompMonitor::PublishCounts() {
  for (const auto& [nr, count] : counts_) {
    events::Event e;
    e.time_ns = events::WallClockNowNs();
    e.extension = config_.extension;
    events::SyscallEvent s;
    s.name = Name(nr);
    s.nr = nr;
    s.action = events::SyscallAction::kCounted;
    s.count = count;
    e.payload = std::move(s);
    queue_.Push(std::move(e));
  }
  counts_.clear();
}

}  // namespace gander::monitor
