#include "sandbox/gvisor/strace.h"

#include <seccomp.h>

#include <cerrno>
#include <charconv>

#include "monitor/seccomp_monitor.h"
#include "policies/denied_syscalls.h"
#include "policies/expand.h"
#include "relay/tool_call_tracker.h"

namespace gander::sandbox::gvisor {
namespace {

using events::FileAccess;

// Names the Debian runsc (20221219) does not know: `--strace-syscalls` with any of them makes
// the sandbox fail to start, so they are never asked for (gVisor does not implement them
// either: openat2 and the like get ENOSYS inside it).
constexpr std::string_view kUnknownToRunsc[] = {
    "openat2", "fchmodat2", "faccessat2", "umount", "pidfd_getfd", "mount_setattr", "quotactl_fd"};

bool KnownToRunsc(std::string_view name) {
  for (std::string_view unknown : kUnknownToRunsc) {
    if (unknown == name) return false;
  }
  return true;
}

// The deny list entries gVisor's refusals are reported for: those refused whatever their
// arguments (the patterned ones, clone(CLONE_NEW*), ioctl(TIOCSTI), socket families, depend
// on values the strace text does not reliably show).
std::vector<policies::DeniedSyscall> ReportedDenials() {
  std::vector<policies::DeniedSyscall> out;
  for (auto& d : policies::DeniedSyscalls({})) {
    if (!d.silent && d.any_of.empty() && KnownToRunsc(d.name)) out.push_back(std::move(d));
  }
  return out;
}

// gVisor's own refusal of a syscall, as opposed to an ordinary failure (ENOENT, EBADF, ...).
bool IsRefusal(int error) {
  return error == EPERM || error == EACCES || error == ENOSYS || error == EOPNOTSUPP;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "0x7f8a... text": the text strace prints after the address of a string argument ("" for an
// empty string); nullopt without an address (a null pointer prints as "0x0" or "null").
std::optional<std::string_view> AfterAddress(std::string_view s) {
  if (!s.starts_with("0x")) return std::nullopt;
  size_t space = s.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return s.substr(space + 1);
}

// Can `s` be the start of an argument as gVisor prints one? Numbers ("0x1f", "0o644", "3",
// "-1"), flag words ("O_RDONLY|O_CLOEXEC", "AT_FDCWD /tmp"), null, structs, lists, strings.
bool StartsArgument(std::string_view s) {
  if (s.empty()) return false;
  char c = s.front();
  if ((c >= '0' && c <= '9') || c == '-' || c == '{' || c == '[' || c == '"' || c == '<') {
    return true;
  }
  if (s.starts_with("null")) return true;
  if (c < 'A' || c > 'Z') return false;
  size_t end = s.find_first_of(" |)");
  std::string_view word = s.substr(0, end);
  return word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string_view::npos;
}

// Go's %q strings of an execve argv: ["a", "b\n"].
std::vector<std::string> ParseQuotedList(std::string_view s, bool* truncated) {
  std::vector<std::string> out;
  size_t i = s.find('[');
  if (i == std::string_view::npos) return out;
  for (++i; i < s.size() && s[i] != ']';) {
    if (s[i] != '"') {
      ++i;
      continue;
    }
    std::string item;
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        char c = s[++i];
        item += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        item += s[i];
      }
    }
    ++i;
    if (out.size() < events::kMaxArgvEntries) {
      if (item.size() > events::kMaxArgBytes) {
        item.resize(events::kMaxArgBytes);
        *truncated = true;
      }
      out.push_back(std::move(item));
    } else {
      *truncated = true;
    }
  }
  return out;
}

FileAccess OpenAccess(std::string_view flags, FileAccess fallback) {
  if (flags.find("O_CREAT") != std::string_view::npos) return FileAccess::kCreate;
  if (flags.find("O_WRONLY") != std::string_view::npos ||
      flags.find("O_RDWR") != std::string_view::npos ||
      flags.find("O_TRUNC") != std::string_view::npos) {
    return FileAccess::kWrite;
  }
  return fallback;
}

// AT_FDCWD as gVisor prints a dirfd: "AT_FDCWD /cwd", or, where the argument is not typed as
// a dirfd (renameat2's second), the raw value.
bool IsAtFdcwd(std::string_view dirfd) {
  return dirfd.starts_with("AT_FDCWD") || dirfd == "0xffffff9c" || dirfd == "-100";
}

}  // namespace

std::vector<std::string> TracedSyscalls(policies::FilesWatch files) {
  std::vector<std::string> out;
  for (const policies::WatchedSyscall& w : policies::WatchedSyscalls()) {
    if (static_cast<int>(w.level) <= static_cast<int>(files) && KnownToRunsc(w.name)) {
      out.emplace_back(w.name);
    }
  }
  for (const auto& d : ReportedDenials()) out.emplace_back(d.name);
  return out;
}

std::vector<std::string_view> SplitStraceArgs(std::string_view args) {
  std::vector<std::string_view> pieces;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    char c = args[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (depth == 0 && c == ',' && i + 1 < args.size() && args[i + 1] == ' ') {
      pieces.push_back(args.substr(start, i - start));
      start = i + 2;
      ++i;
    }
  }
  if (start < args.size() || !pieces.empty()) pieces.push_back(args.substr(start));
  // A piece that cannot start an argument belongs to the one before (a path with ", ").
  std::vector<std::string_view> out;
  for (std::string_view piece : pieces) {
    if (!out.empty() && !StartsArgument(piece)) {
      const char* begin = out.back().data();
      out.back() = std::string_view(begin, piece.data() + piece.size() - begin);
    } else {
      out.push_back(piece);
    }
  }
  return out;
}

std::optional<StraceRecord> ParseStraceLine(std::string_view line) {
  size_t at = line.find("strace.go:");
  if (at == std::string_view::npos) return std::nullopt;
  size_t open = line.find("] [", at);
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(open + 3);
  size_t colon = rest.find(':'), close = rest.find(']');
  if (colon == std::string_view::npos || close == std::string_view::npos || colon > close) {
    return std::nullopt;
  }
  StraceRecord r;
  std::string_view pid = Trim(rest.substr(0, colon)),
                   tid = Trim(rest.substr(colon + 1, close - colon - 1));
  if (std::from_chars(pid.data(), pid.data() + pid.size(), r.pid).ec != std::errc() ||
      std::from_chars(tid.data(), tid.data() + tid.size(), r.tid).ec != std::errc()) {
    return std::nullopt;
  }
  rest = Trim(rest.substr(close + 1));
  size_t marker = rest.find(" X ");
  if (marker == std::string_view::npos) return std::nullopt;  // "E" (entry) lines
  r.comm = rest.substr(0, marker);
  rest = rest.substr(marker + 3);
  size_t paren = rest.find('(');
  size_t equals = rest.rfind(") = ");
  if (paren == std::string_view::npos || equals == std::string_view::npos || equals < paren) {
    return std::nullopt;
  }
  r.syscall = rest.substr(0, paren);
  r.args = rest.substr(paren + 1, equals - paren - 1);
  std::string_view result = rest.substr(equals + 4);
  size_t end = result.find(' ');
  std::string_view number = result.substr(0, end);
  if (std::from_chars(number.data(), number.data() + number.size(), r.result).ec != std::errc()) {
    return std::nullopt;
  }
  if (size_t e = result.find(" errno="); e != std::string_view::npos) {
    std::string_view code = result.substr(e + 7);
    std::from_chars(code.data(), code.data() + code.size(), r.error);
  }
  return r;
}

StraceMapper::StraceMapper(StraceMapperConfig config) : config_(std::move(config)) {
  label_anchors_ = (config_.trial ? *config_.trial : config_.rules).DenyPaths();
  for (const auto& d : ReportedDenials()) denied_.emplace(std::string(d.name), d.error);
}

std::string StraceMapper::ThroughRootSymlinks(const std::string& path) const {
  for (const auto& [link, target] : config_.root_symlinks) {
    if (path.starts_with(link) && (path.size() == link.size() || path[link.size()] == '/')) {
      std::string base = target.starts_with("/") ? "" : "/";
      return policies::NormalizePath(base + target + path.substr(link.size()));
    }
  }
  return path;
}

events::Event StraceMapper::Base(const StraceRecord& r) const {
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = config_.extension;
  e.sandbox_pid = r.pid;
  if (config_.tool_calls) e.tool_call = config_.tool_calls->Slot();
  return e;
}

void StraceMapper::Map(const StraceRecord& r, std::vector<events::Event>& out) {
  if (config_.census) ++counts_[r.syscall];
  std::vector<std::string_view> args = SplitStraceArgs(r.args);
  for (std::string_view arg : args) {
    if (arg.starts_with("AT_FDCWD /")) {
      if (cwd_.size() > 4096) cwd_.clear();  // pids are reused: stay bounded
      cwd_[r.pid] = arg.substr(9);
      break;
    }
  }

  if (r.syscall == "exit_group") {
    events::ProcessEvent exit{.action = events::ProcessAction::kExit};
    int code = 0;
    std::string_view arg = Trim(r.args);
    if (arg.starts_with("0x")) {
      std::from_chars(arg.data() + 2, arg.data() + arg.size(), code, 16);
    } else {
      std::from_chars(arg.data(), arg.data() + arg.size(), code);
    }
    exit.exit_code = code & 0xff;
    events::Event e = Base(r);
    e.payload = exit;
    out.push_back(std::move(e));
    return;
  }
  if (r.syscall == "execve" || r.syscall == "execveat") {
    if (r.error != 0) return;  // the process event is for the exec that happened
    size_t at = r.syscall == "execveat" ? 1 : 0;
    if (args.size() < at + 2) return;
    auto path = AfterAddress(args[at]);
    if (!path) return;
    events::ProcessEvent exec{.action = events::ProcessAction::kExec};
    exec.path = std::string(*path);
    // argv is the list after the path; the environment (never recorded) the one after it.
    exec.argv = ParseQuotedList(args[at + 1], &exec.argv_truncated);
    events::Event e = Base(r);
    e.payload = std::move(exec);
    out.push_back(std::move(e));
    return;
  }
  if (auto denied = denied_.find(r.syscall); denied != denied_.end()) {
    if (!IsRefusal(r.error)) return;  // gVisor's kernel ran it (see docs/sandbox.md)
    events::SyscallEvent s;
    s.name = r.syscall;
    s.nr = seccomp_syscall_resolve_name(r.syscall.c_str());
    s.error = r.error;
    s.action = events::SyscallAction::kDenied;
    events::Event e = Base(r);
    e.payload = std::move(s);
    out.push_back(std::move(e));
    return;
  }
  const policies::WatchedSyscall* watched = policies::FindWatched(r.syscall);
  if (!watched || watched->exits || config_.files == policies::FilesWatch::kOff ||
      static_cast<int>(watched->level) > static_cast<int>(config_.files)) {
    return;
  }
  MapFile(r, *watched, args, out);
}

void StraceMapper::MapFile(const StraceRecord& r, const policies::WatchedSyscall& w,
                           const std::vector<std::string_view>& args,
                           std::vector<events::Event>& out) {
  for (const policies::PathArg* arg : {&w.first, &w.second}) {
    if (arg->path < 0 || static_cast<size_t>(arg->path) >= args.size()) continue;
    auto raw = AfterAddress(args[arg->path]);
    // An empty path (AT_EMPTY_PATH: the dirfd's own file) names a file already open.
    if (!raw || raw->empty()) continue;
    std::optional<std::string> dir;
    if (arg->dirfd >= 0 && static_cast<size_t>(arg->dirfd) < args.size() &&
        !IsAtFdcwd(args[arg->dirfd])) {
      // "0x3 /dir": the path gVisor knows for the fd.
      std::string_view fd = args[arg->dirfd];
      if (size_t space = fd.find(' '); space != std::string_view::npos) {
        dir = std::string(fd.substr(space + 1));
      }
    } else if (auto cwd = cwd_.find(r.pid); cwd != cwd_.end()) {
      dir = cwd->second;
    }
    events::FileEvent file;
    file.syscall = r.syscall;
    file.raw_path = std::string(raw->substr(0, events::kMaxRawPathBytes));
    file.raw_path_truncated = raw->size() > events::kMaxRawPathBytes;
    file.access = arg->access;
    if (w.open_flags >= 0 && static_cast<size_t>(w.open_flags) < args.size()) {
      file.access = OpenAccess(args[w.open_flags], arg->access);
    }
    if (raw->starts_with("/")) {
      file.path = policies::NormalizePath(*raw);
    } else if (dir && dir->starts_with("/")) {
      file.path = policies::NormalizePath(*dir + "/" + std::string(*raw));
    }
    if (file.path) file.path = ThroughRootSymlinks(*file.path);
    file.path_class = file.path ? config_.rules.Classify(*file.path) : events::PathClass::kUnknown;
    if (r.error != 0 && monitor::RefusedBySandbox(file.access, file.path_class)) {
      file.result = events::Verdict::kDenied;
      file.error = r.error;
    }
    if (config_.trial && file.result == events::Verdict::kAllowed && file.path) {
      file.path_class = config_.trial->Classify(*file.path);
      if (monitor::RefusedBySandbox(file.access, file.path_class)) {
        file.result = events::Verdict::kWouldDeny;
      }
    }
    if (!config_.log_all_files && !monitor::NotableFileEvent(file)) continue;
    file.path_label = monitor::NormaliseForLabel(file.path.value_or(file.raw_path), config_.home,
                                                 config_.workspace, label_anchors_);
    events::Event e = Base(r);
    e.payload = std::move(file);
    out.push_back(std::move(e));
  }
}

std::vector<events::Event> StraceMapper::TakeCounts() {
  std::vector<events::Event> events;
  for (const auto& [name, count] : counts_) {
    events::Event e;
    e.time_ns = events::WallClockNowNs();
    e.extension = config_.extension;
    events::SyscallEvent s;
    s.name = name;
    s.nr = seccomp_syscall_resolve_name(name.c_str());
    s.action = events::SyscallAction::kCounted;
    s.count = count;
    e.payload = std::move(s);
    events.push_back(std::move(e));
  }
  counts_.clear();
  return events;
}

void StraceMapper::Feed(std::string_view bytes, std::vector<events::Event>& out) {
  partial_.append(bytes);
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(partial_.data() + start, nl - start);
    if (!started_ && line.find("] Process should have started") != std::string_view::npos) {
      started_ = true;
    }
    if (auto record = ParseStraceLine(line)) {
      ++lines_;
      Map(*record, out);
    }
  }
  partial_.erase(0, start);
  // A line longer than this is not one gVisor writes (it caps strace strings at 1 KiB).
  if (partial_.size() > (1u << 20)) partial_.clear();
}

}  // namespace gander::sandbox::gvisor
