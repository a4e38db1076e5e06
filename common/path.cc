// Path helpers; see path.h.
#include "common/path.h"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace gander {

bool IsWithin(std::string_view path, std::string_view dir) {
  if (!path.starts_with(dir)) return false;
  return path.size() == dir.size() || (!dir.empty() && dir.back() == '/') ||
         path[dir.size()] == '/';
}

std::string Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::optional<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (!realpath(path.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

std::optional<std::string> ReadFile(const std::string& path, size_t limit, int flags) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 && out.size() <= limit) {
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (n != 0 || out.size() > limit) return std::nullopt;
  return out;
}

Status WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoError("open " + path);
  bool whole = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int error = errno;
  close(fd);
  if (!whole) return Error{error, "write " + path};
  return {};
}

}  // namespace gander
