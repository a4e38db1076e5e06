// The collector's per-user token (see collector_token.h).
#include "exporters/collector_token.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unique_fd.h"
#include "exporters/collector_paths.h"

namespace gander::exporters {
namespace {

bool IsTokenText(std::string_view s) {
  if (s.size() != 2 * kCollectorTokenBytes) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Result<std::string> NewTokenText() {
  unsigned char bytes[kCollectorTokenBytes] = {};
  if (getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes))) {
    return ErrnoError("getrandom");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : bytes) {
    text += kHex[b >> 4];
    text += kHex[b & 15];
  }
  return text;
}

}  // namespace

std::string DefaultCollectorTokenPath() { return GanderStateDir() + "/collector.token"; }

Result<std::string> ReadCollectorToken(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return ErrnoError("open " + path);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError("fstat " + path);
  if (!S_ISREG(st.st_mode)) return Error{EINVAL, path + " is not a regular file"};
  if (st.st_uid != geteuid()) return Error{EPERM, path + " is not ours"};
  if ((st.st_mode & 077) != 0) return Error{EPERM, path + " is readable by others"};
  char buf[2 * kCollectorTokenBytes + 2] = {};
  ssize_t n = read(fd.get(), buf, sizeof(buf));
  if (n < 0) return ErrnoError("read " + path);
  std::string text(buf, static_cast<size_t>(n));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!IsTokenText(text)) return Error{EINVAL, path + " does not hold a collector token"};
  return text;
}

Result<std::string> LoadOrCreateCollectorToken(const std::string& path) {
  if (auto existing = ReadCollectorToken(path); existing || existing.error().code != ENOENT) {
    return existing;
  }
  auto made = NewTokenText();
  if (!made) return std::move(made).error();
  const std::string& text = *made;
  // Written whole under a private name, then linked into place: link() fails when another
  // collector got there first, and then its token is the one.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    UniqueFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return ErrnoError("create " + tmp);
    std::string line = text + "\n";
    if (write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
        fsync(fd.get()) != 0) {
      Error e = ErrnoError("write " + tmp);
      unlink(tmp.c_str());
      return e;
    }
  }
  int linked = link(tmp.c_str(), path.c_str());
  int link_errno = errno;
  unlink(tmp.c_str());
  if (linked != 0 && link_errno != EEXIST) return Error{link_errno, "link " + path};
  return ReadCollectorToken(path);
}

bool TokensEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace gander::exporters
