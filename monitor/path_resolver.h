// Path resolution as the kernel would do it for the process making a syscall, from what the
// notification loop gathers (the path bytes it read once, the dirfd's target, the process's
// cwd and root). Pure: the process is seen through the small ProcessView interface, which the
// loop implements over /proc/PID and tests implement with fakes.
//
// What it does, lexically, one component at a time:
//   - absolute paths start at the process's root; relative ones at the dirfd's target, or at
//     the cwd for AT_FDCWD;
//   - "", "." and "//" are dropped; ".." pops one component and never climbs above the root
//     (so "/.." is "/");
//   - the kernel's "magic links" are replaced by what they point at, as soon as the path
//     reaches them (so "/proc/self/fd/3/../x" is the parent of fd 3's target, then x):
//       /proc/{self,thread-self,P}/fd/N, .../cwd, .../root, also below task/T/, where P is
//       the process's own pid (ProcessView::pid); /dev/fd/N and /dev/std{in,out,err}.
//     Threads are assumed to share the fd table (the usual CLONE_FILES). Another process's
//     /proc/P/... and /proc/self/exe are left as written (they classify as `system`).
//   - an empty path is an error (ENOENT) unless AT_EMPTY_PATH is given: then it is the dirfd
//     itself (the cwd for AT_FDCWD);
//   - the path ends at the first NUL, as the kernel's copy does; a path of PATH_MAX bytes or
//     more (no NUL within the first PATH_MAX) is ENAMETOOLONG.
//
// Symlinks are NOT followed: the supervisor has no race-free way to read a link as the
// sandbox sees it, and enforcement (mounts, Landlock) does not depend on it. When the loop
// does read a link's text (symlinkat's target, or a readlink it chose to do), it can resolve
// and classify that text with ResolveSymlinkTarget / ClassifySymlinkTarget.
//
// All paths (from the view and the results) live in one namespace, the "view": the loop
// should give the sandbox's paths, which equal the host's for bind-mounted grants. A result
// is absolute, except when the path names an fd that is not a file system object: then it is
// the kernel's pseudo name, e.g. "pipe:[1234]", "socket:[99]", "anon_inode:[eventfd]".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gander::monitor {

// The process making the syscall, as far as path resolution needs it.
class ProcessView {
 public:
  virtual ~ProcessView() = default;
  // The current directory (readlink /proc/PID/cwd).
  virtual Result<std::string> cwd() const = 0;
  // What fd N refers to (readlink /proc/PID/fd/N): an absolute path or a pseudo name. A closed
  // fd should be an Error with code ENOENT (what opening /proc/self/fd/N would give).
  virtual Result<std::string> fd_path(int fd) const = 0;
  // The process's root directory (readlink /proc/PID/root), "/" unless it chrooted.
  virtual Result<std::string> root() const = 0;
  // The process's pid inside its own pid namespace (what it sees as /proc/self), when known.
  virtual std::optional<int> pid() const { return std::nullopt; }
};

// A ProcessView made of fixed values: for tests, and for resolving text without a process.
struct FixedProcessView : ProcessView {
  std::string cwd_path = "/";
  std::string root_path = "/";
  std::map<int, std::string> fds;  // a missing fd is ENOENT
  std::optional<int> own_pid;

  Result<std::string> cwd() const override { return cwd_path; }
  Result<std::string> root() const override { return root_path; }
  std::optional<int> pid() const override { return own_pid; }
  Result<std::string> fd_path(int fd) const override;
};

struct ResolveFlags {
  bool empty_path = false;  // AT_EMPTY_PATH was given
};

// Resolves `raw` (the bytes read from the target) against `dirfd_path` (the dirfd's target as
// ProcessView::fd_path gives it; nullopt for AT_FDCWD). Errors carry the errno the kernel
// would return (ENAMETOOLONG, ENOENT, ENOTDIR) or the view's error.
Result<std::string> ResolvePath(std::string_view raw, std::optional<std::string> dirfd_path,
                                const ProcessView& view, ResolveFlags flags = {});

// Resolves a symlink's text as the kernel would when following it: an absolute target from
// the view's root, a relative one from the directory holding the link. `link_path` is the
// link's resolved path (from ResolvePath).
Result<std::string> ResolveSymlinkTarget(std::string_view link_path, std::string_view target,
                                         const ProcessView& view);

// The raw path as an event keeps it: cut at the first NUL and at kMaxRawPathBytes.
struct RawPath {
  std::string text;
  bool truncated = false;
};
RawPath RawPathForEvent(std::string_view raw);

}  // namespace gander::monitor
