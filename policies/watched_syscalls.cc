#include "policies/watched_syscalls.h"

namespace gander::policies {
namespace {

using A = events::FileAccess;
using W = FilesWatch;
constexpr PathArg kNone{};

// x86_64 / aarch64 argument order (the generic syscall ABI).
constexpr WatchedSyscall kTable[] = {
    // name           level      first path                 second path             flags
    {"open", W::kOpens, {0, -1, A::kRead}, kNone, 1},
    {"openat", W::kOpens, {1, 0, A::kRead}, kNone, 2},
    {"openat2", W::kOpens, {1, 0, A::kRead}, kNone, -1, true},
    {"creat", W::kOpens, {0, -1, A::kCreate}, kNone},
    // Always watched: exec and exit are process events whatever `files` says.
    {"execve", W::kOff, {0, -1, A::kExec}, kNone},
    {"execveat", W::kOff, {1, 0, A::kExec}, kNone, -1, false, 4},
    {"exit_group", W::kOff, kNone, kNone, -1, false, -1, true},
    {"truncate", W::kOpens, {0, -1, A::kWrite}, kNone},
    {"mkdir", W::kOpens, {0, -1, A::kCreate}, kNone},
    {"mkdirat", W::kOpens, {1, 0, A::kCreate}, kNone},
    {"mknod", W::kOpens, {0, -1, A::kCreate}, kNone},
    {"mknodat", W::kOpens, {1, 0, A::kCreate}, kNone},
    {"rmdir", W::kOpens, {0, -1, A::kDelete}, kNone},
    {"unlink", W::kOpens, {0, -1, A::kDelete}, kNone},
    {"unlinkat", W::kOpens, {1, 0, A::kDelete}, kNone},
    {"rename", W::kOpens, {0, -1, A::kRename}, {1, -1, A::kCreate}},
    {"renameat", W::kOpens, {1, 0, A::kRename}, {3, 2, A::kCreate}},
    {"renameat2", W::kOpens, {1, 0, A::kRename}, {3, 2, A::kCreate}},
    {"link", W::kOpens, {0, -1, A::kRead}, {1, -1, A::kCreate}},
    {"linkat", W::kOpens, {1, 0, A::kRead}, {3, 2, A::kCreate}, -1, false, 4},
    {"symlink", W::kOpens, {1, -1, A::kCreate}, kNone},
    {"symlinkat", W::kOpens, {2, 1, A::kCreate}, kNone},
    {"chmod", W::kOpens, {0, -1, A::kChmod}, kNone},
    {"fchmodat", W::kOpens, {1, 0, A::kChmod}, kNone},
    {"fchmodat2", W::kOpens, {1, 0, A::kChmod}, kNone},
    {"chown", W::kOpens, {0, -1, A::kChmod}, kNone},
    {"lchown", W::kOpens, {0, -1, A::kChmod}, kNone},
    {"fchownat", W::kOpens, {1, 0, A::kChmod}, kNone, -1, false, 4},
    {"utimensat", W::kOpens, {1, 0, A::kWrite}, kNone, -1, false, 3},
    // kAll: probes that reveal what exists without opening it.
    {"stat", W::kAll, {0, -1, A::kStat}, kNone},
    {"lstat", W::kAll, {0, -1, A::kStat}, kNone},
    {"newfstatat", W::kAll, {1, 0, A::kStat}, kNone, -1, false, 3},
    {"statx", W::kAll, {1, 0, A::kStat}, kNone, -1, false, 2},
    {"access", W::kAll, {0, -1, A::kStat}, kNone},
    {"faccessat", W::kAll, {1, 0, A::kStat}, kNone},
    {"faccessat2", W::kAll, {1, 0, A::kStat}, kNone},
    {"readlink", W::kAll, {0, -1, A::kStat}, kNone},
    {"readlinkat", W::kAll, {1, 0, A::kStat}, kNone},
    {"statfs", W::kAll, {0, -1, A::kStat}, kNone},
};

}  // namespace

std::span<const WatchedSyscall> WatchedSyscalls() { return kTable; }

const WatchedSyscall* FindWatched(std::string_view name) {
  for (const auto& entry : kTable) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace gander::policies
