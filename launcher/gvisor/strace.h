// What gVisor itself reports of the extension: Debian's runsc (20221219) has no trace-point
// sink gander can use rootless, but its `--strace` writes each traced syscall to the debug
// log. gander reads those lines from a pipe and maps them onto its event model: file events
// (the open family, mkdir, unlink: classified by the same rules as the native monitor), exec
// and exit process events. Pure but for the fd read.
//
// A limitation: the log is text and gVisor prints paths unquoted, so a path holding a newline
// can forge a line. These events are observations, never enforcement (gVisor's mount view
// enforces), and the forged line can only add events.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "monitor/event.h"
#include "monitor/path_classifier.h"

namespace gander::monitor {
class ToolCallTracker;
}

namespace gander::launcher::gvisor {

// The syscalls gander asks gVisor to trace: exec and exit always, the file syscalls when
// `files` (monitor.files other than off).
std::vector<std::string> TracedSyscalls(bool files);

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
  std::string home, workspace;
  bool files = true;  // file events (`monitor.files` other than off)
  const monitor::ToolCallTracker* tool_calls = nullptr;
};

// Turns records into gander's events: a file event for each notable access (outside the
// workspace and not a plain read of a grant), a process event for each exec and exit.
class StraceMapper {
 public:
  explicit StraceMapper(StraceMapperConfig config) : config_(std::move(config)) {}
  // Bytes read from the debug log (any cut); complete lines become events in `out`.
  void Feed(std::string_view bytes, std::vector<monitor::Event>& out);
  std::optional<monitor::Event> Map(const StraceRecord& record) const;
  uint64_t lines() const { return lines_; }
  // gVisor logged that the extension's first process started.
  bool started() const { return started_; }

 private:
  StraceMapperConfig config_;
  std::string partial_;
  uint64_t lines_ = 0;
  bool started_ = false;
};

}  // namespace gander::launcher::gvisor
