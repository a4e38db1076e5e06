// Which syscalls the monitor watches for `monitor.files` (and for process events, at every
// level), and where their path arguments are. One table serves the filter compiler (launcher: which
// numbers get USER_NOTIF) and the decisions (monitor: how to read a notification), so the two can
// never disagree.
#pragma once

#include <span>
#include <string_view>

#include "events/event.h"
#include "policies/policy.h"

namespace gander::policies {

// Which file syscalls are watched: the policy's `monitor.files` itself (one type; the monitor's
// older name for it stays as an alias).
using FilesWatch = policies::FilesMonitoring;

// One path a syscall names: its argument, and the dirfd argument it is relative to
// (-1: relative to the cwd, as AT_FDCWD).
struct PathArg {
  int path = -1;
  int dirfd = -1;
  events::FileAccess access = events::FileAccess::kOther;
};

struct WatchedSyscall {
  std::string_view name;
  // Watched from this level up. kOff: always (exec and exit_group, for process events); their
  // file events still need `opens`.
  FilesWatch level;
  PathArg first;
  PathArg second;         // rename/link: the new name (path -1 when none)
  int open_flags = -1;    // argument holding O_* flags (open, openat), -1 when none
  bool open_how = false;  // openat2: flags live in struct open_how at argument 2
  int at_flags = -1;      // argument holding AT_* flags (AT_EMPTY_PATH), -1 when none
  bool exits = false;     // exit_group: a process event, no path
};

std::span<const WatchedSyscall> WatchedSyscalls();

// The entry for a syscall name, nullptr when it is not watched at any level.
const WatchedSyscall* FindWatched(std::string_view name);

}  // namespace gander::policies
