// What gVisor itself reports of the extension: Debian's runsc (20221219) has no trace-point
// sink gander can use rootless, but its `--strace` writes each traced syscall to the debug
// log. gander reads those lines from a pipe and maps them onto its event model with the native
// monitor's table (policies/watched_syscalls.h): file events for the syscalls `monitor.files`
// watches (open family, mkdir, unlink, rename, link, chmod, ... and at `all` the stat family),
// classified by the same rules, relative paths resolved against the dirfd's path or the cwd
// gVisor prints; exec and exit process events; `syscall` events for the native deny list's
// syscalls gVisor refused; in learn mode a count of every syscall by name. Pure.
//
// A limitation: the log is text and gVisor prints paths unquoted, so a path holding a newline
// can forge a line. These events are observations, never enforcement (gVisor's mount view
// enforces), and the forged line can only add events.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "monitor/path_classifier.h"
#include "policies/watched_syscalls.h"

namespace gander::relay {
class ToolCallTracker;
}

namespace gander::sandbox::gvisor {

// The syscalls gander asks gVisor to trace: exec and exit always, the file syscalls the native
// monitor watches at `files`, and the native deny list's syscalls (to report gVisor's
// refusals). Learn mode traces every syscall instead (RunscOptions::strace_all).
std::vector<std::string> TracedSyscalls(policies::FilesWatch files);

// The arguments of a strace line, split at the top-level ", " (not inside [], {} or "..."). A
// path argument is printed unquoted: a piece that cannot start an argument (see the .cc) is
// glued back onto the one before it, so a path holding ", " mostly survives.
std::vector<std::string_view> SplitStraceArgs(std::string_view args);

// One syscall exit line ("X") of gVisor's strace.
struct StraceRecord {
  int pid = 0;  // inside the sandbox
  int tid = 0;
  std::string comm;
  std::string syscall;
  std::string args;  // between the parentheses, as printed
  long long result = 0;
  int error = 0;  // errno, 0 on success
};

// Parses a debug-log line; nullopt for anything but a strace exit line, e.g.
//   I1130 12:20:46.664111 2852 strace.go:608] [   2:   2] cat X openat(AT_FDCWD /, 0x7f8
//   /nonexist, O_RDONLY|0x0, 0o0) = 0 (0x0) errno=2 (no such file or directory) (118.533µs)
std::optional<StraceRecord> ParseStraceLine(std::string_view line);

struct StraceMapperConfig {
  std::string extension;
  monitor::ClassifierRules rules;
  // `--mode monitor`: the policy on trial; accesses gVisor allowed but it would refuse are
  // recorded as would_deny (as the native monitor does).
  std::optional<monitor::ClassifierRules> trial;
  std::string home, workspace;
  // The symlinks the mount plan puts in the sandbox's root (/lib -> usr/lib, RootSymlinks):
  // gVisor prints paths as the extension wrote them, the native monitor resolves them.
  std::vector<std::pair<std::string, std::string>> root_symlinks;
  policies::FilesWatch files = policies::FilesWatch::kOpens;
  bool log_all_files = false;  // learn mode: every file event, not only the notable ones
  bool census = false;         // learn mode: every syscall counted by name (TakeCounts)
  const relay::ToolCallTracker* tool_calls = nullptr;
};

// Turns records into gander's events: a file event for each notable access (outside the
// workspace and not a plain read of a grant; every one in learn mode), a process event for
// each exec and exit, a syscall event for each refused syscall of the native deny list.
class StraceMapper {
 public:
  explicit StraceMapper(StraceMapperConfig config);
  // Bytes read from the debug log (any cut); complete lines become events in `out`.
  void Feed(std::string_view bytes, std::vector<events::Event>& out);
  // Events for one record (a rename has two paths, so up to two file events). Remembers the
  // cwd gVisor prints with AT_FDCWD, to resolve the relative paths of non-at syscalls.
  void Map(const StraceRecord& record, std::vector<events::Event>& out);
  // Census (learn mode): one kCounted syscall event per name seen since the last call.
  std::vector<events::Event> TakeCounts();
  uint64_t lines() const { return lines_; }
  // gVisor logged that the extension's first process started.
  bool started() const { return started_; }

 private:
  events::Event Base(const StraceRecord& record) const;
  std::string ThroughRootSymlinks(const std::string& path) const;
  void MapFile(const StraceRecord& record, const policies::WatchedSyscall& watched,
               const std::vector<std::string_view>& args, std::vector<events::Event>& out);
  StraceMapperConfig config_;
  std::vector<std::string> label_anchors_;
  std::map<std::string, int, std::less<>> denied_;  // native deny list: name -> its errno
  std::map<int, std::string> cwd_;                  // sandbox pid -> last cwd gVisor printed
  std::map<std::string, uint64_t> counts_;          // census since the last TakeCounts
  std::string partial_;
  uint64_t lines_ = 0;
  bool started_ = false;
};

}  // namespace gander::sandbox::gvisor
