#include "launcher/gvisor/strace.h"

#include <charconv>

#include "monitor/seccomp_monitor.h"
#include "monitor/tool_call_tracker.h"
#include "policies/expand.h"

namespace gander::launcher::gvisor {
namespace {

using monitor::FileAccess;

// How many arguments follow the path argument of each traced file syscall.
struct FileSyscall {
  std::string_view name;
  bool has_dirfd;
  int after_path;
  FileAccess access;  // for the open family: from the flags
};
constexpr FileSyscall kFileSyscalls[] = {
    {"openat", true, 2, FileAccess::kRead},    {"open", false, 2, FileAccess::kRead},
    {"creat", false, 1, FileAccess::kCreate},  {"mkdirat", true, 1, FileAccess::kCreate},
    {"mkdir", false, 1, FileAccess::kCreate},  {"unlinkat", true, 1, FileAccess::kDelete},
    {"unlink", false, 0, FileAccess::kDelete}, {"rmdir", false, 0, FileAccess::kDelete},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Skips "0x7f8a... " (an address as strace prints it before the string it points to).
std::optional<std::string_view> AfterAddress(std::string_view s) {
  s = Trim(s);
  if (!s.starts_with("0x")) return std::nullopt;
  size_t space = s.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return s.substr(space + 1);
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
    if (out.size() < monitor::kMaxArgvEntries) {
      if (item.size() > monitor::kMaxArgBytes) {
        item.resize(monitor::kMaxArgBytes);
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

}  // namespace

std::vector<std::string> TracedSyscalls(bool files) {
  std::vector<std::string> out{"execve", "execveat", "exit_group"};
  if (files) {
    for (const FileSyscall& f : kFileSyscalls) out.emplace_back(f.name);
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

std::optional<monitor::Event> StraceMapper::Map(const StraceRecord& r) const {
  monitor::Event e;
  e.time_ns = monitor::WallClockNowNs();
  e.extension = config_.extension;
  e.sandbox_pid = r.pid;
  if (config_.tool_calls) e.tool_call = config_.tool_calls->Slot();

  if (r.syscall == "exit_group") {
    monitor::ProcessEvent exit{.action = monitor::ProcessAction::kExit};
    int code = 0;
    std::string_view arg = Trim(r.args);
    if (arg.starts_with("0x")) {
      std::from_chars(arg.data() + 2, arg.data() + arg.size(), code, 16);
    } else {
      std::from_chars(arg.data(), arg.data() + arg.size(), code);
    }
    exit.exit_code = code & 0xff;
    e.payload = exit;
    return e;
  }
  if (r.syscall == "execve" || r.syscall == "execveat") {
    if (r.error != 0) return std::nullopt;  // the native monitor reports refused execs
    std::string_view args = r.args;
    if (r.syscall == "execveat") {
      size_t comma = args.find(", ");
      if (comma == std::string_view::npos) return std::nullopt;
      args = args.substr(comma + 2);
    }
    auto path = AfterAddress(args);
    if (!path) return std::nullopt;
    size_t end = path->find(", 0x");
    monitor::ProcessEvent exec{.action = monitor::ProcessAction::kExec};
    exec.path = std::string(path->substr(0, end));
    if (end != std::string_view::npos) {
      std::string_view lists = path->substr(end + 2);
      // argv is the first bracketed list; the environment (never recorded) the second.
      size_t env = lists.find("], 0x");
      exec.argv = ParseQuotedList(lists.substr(0, env), &exec.argv_truncated);
    }
    e.payload = exec;
    return e;
  }

  if (!config_.files) return std::nullopt;
  const FileSyscall* spec = nullptr;
  for (const FileSyscall& f : kFileSyscalls) {
    if (f.name == r.syscall) spec = &f;
  }
  if (!spec) return std::nullopt;
  std::string_view args = r.args;
  std::string dir;
  if (spec->has_dirfd) {
    // "AT_FDCWD /cwd, 0x7f.. path, ..." or "3 /dir, 0x7f.. path, ...": the dirfd's path.
    size_t comma = args.find(", 0x");
    if (comma == std::string_view::npos) return std::nullopt;
    std::string_view fd = args.substr(0, comma);
    if (size_t space = fd.find(' '); space != std::string_view::npos) dir = fd.substr(space + 1);
    args = args.substr(comma + 2);
  }
  auto after = AfterAddress(args);
  if (!after) return std::nullopt;
  // The path runs to the argument `after_path` commas from the end (paths may hold ", ").
  std::string_view path = *after;
  std::string_view flags;
  for (int i = 0; i < spec->after_path; ++i) {
    size_t comma = path.rfind(", ");
    if (comma == std::string_view::npos) return std::nullopt;
    if (i == spec->after_path - 1) flags = path.substr(comma + 2);
    path = path.substr(0, comma);
  }
  monitor::FileEvent file;
  file.syscall = r.syscall;
  file.raw_path = std::string(path.substr(0, monitor::kMaxRawPathBytes));
  file.raw_path_truncated = path.size() > monitor::kMaxRawPathBytes;
  file.access = spec->access;
  if (r.syscall == "openat" || r.syscall == "open") file.access = OpenAccess(flags, spec->access);
  if (path.starts_with("/")) {
    file.path = policies::NormalizePath(path);
  } else if (dir.starts_with("/")) {
    file.path = policies::NormalizePath(dir + "/" + std::string(path));
  }
  file.path_class = file.path ? config_.rules.Classify(*file.path) : monitor::PathClass::kUnknown;
  if (file.path) {
    file.path_label = monitor::NormaliseForLabel(*file.path, config_.home, config_.workspace,
                                                 config_.rules.DenyPaths());
  }
  if (r.error != 0 && monitor::RefusedBySandbox(file.access, file.path_class)) {
    file.result = monitor::Verdict::kDenied;
    file.error = r.error;
  }
  if (!monitor::NotableFileEvent(file)) return std::nullopt;
  e.payload = std::move(file);
  return e;
}

void StraceMapper::Feed(std::string_view bytes, std::vector<monitor::Event>& out) {
  partial_.append(bytes);
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(partial_.data() + start, nl - start);
    if (!started_ && line.find("] Process should have started") != std::string_view::npos) {
      started_ = true;
    }
    if (auto record = ParseStraceLine(line)) {
      ++lines_;
      if (auto event = Map(*record)) out.push_back(std::move(*event));
    }
  }
  partial_.erase(0, start);
  // A line longer than this is not one gVisor writes (it caps strace strings at 1 KiB).
  if (partial_.size() > (1u << 20)) partial_.clear();
}

}  // namespace gander::launcher::gvisor
