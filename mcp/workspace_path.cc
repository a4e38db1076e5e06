#include "mcp/workspace_path.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

#include "common/split.h"
#include "common/unique_fd.h"

namespace gander::mcp {

Result<std::string> CheckWorkspacePath(const std::string& path) {
  if (path.empty()) return MakeError("empty path (use \".\" for the workspace itself)");
  if (path.find('\0') != std::string::npos) return MakeError("the path contains a NUL byte");
  if (path.size() >= PATH_MAX) return MakeError("the path is longer than PATH_MAX");
  if (path[0] == '/') {
    return MakeError("absolute path " + path + ": paths are relative to the sandbox's workspace");
  }
  if (path[0] == '~') return MakeError("path " + path + ": ~ is not expanded; use a relative path");
  std::string out;
  for (SplitView parts(path, '/'); auto piece = parts.Next();) {
    std::string_view part = *piece;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      return MakeError("path " + path + ": \"..\" is not allowed (the workspace is the limit)");
    }
    if (!out.empty()) out += '/';
    out += part;
  }
  return out.empty() ? std::string(".") : out;
}

namespace {

// The fallback walk: every component opened with O_NOFOLLOW, so no symlink is ever followed.
Result<int> WalkBeneath(int dir_fd, const std::string& relative, int flags, int mode) {
  UniqueFd dir(fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!dir) return ErrnoError("dup");
  size_t start = 0;
  for (;;) {
    size_t slash = relative.find('/', start);
    std::string part = relative.substr(start, slash == std::string::npos ? slash : slash - start);
    if (slash == std::string::npos) {
      int fd = openat(dir.get(), part.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd < 0) return ErrnoError("open " + relative);
      return fd;
    }
    int next = openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return ErrnoError("open " + relative.substr(0, slash));
    dir.Reset(next);
    start = slash + 1;
  }
}

}  // namespace

Result<int> OpenBeneath(int dir_fd, const std::string& relative, int flags, int mode) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<uint64_t>(mode) : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof(how));
  if (fd >= 0) return static_cast<int>(fd);
  if (errno == EXDEV) return Error{EXDEV, "open " + relative + ": it leads out of the workspace"};
  if (errno != ENOSYS && errno != EPERM) return ErrnoError("open " + relative);
  return WalkBeneath(dir_fd, relative, flags, mode);
}

}  // namespace gander::mcp
