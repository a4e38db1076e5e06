#include "monitor/seccomp_notify.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/seccomp_compat.h"

namespace gander::monitor {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kFirstRead = 256;

}  // namespace

KernelUnotify::KernelUnotify(UniqueFd listener) { Attach(std::move(listener)); }

void KernelUnotify::Attach(UniqueFd listener) {
  listener_ = std::move(listener);
  sync_wake_up_ = ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                        SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0;
}

Result<Notification> KernelUnotify::Receive() {
  struct seccomp_notif req;
  std::memset(&req, 0, sizeof(req));  // the kernel insists on a zeroed buffer
  if (ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
    return ErrnoError("SECCOMP_IOCTL_NOTIF_RECV");
  }
  Notification n;
  n.id = req.id;
  n.pid = static_cast<pid_t>(req.pid);
  n.nr = req.data.nr;
  for (int i = 0; i < 6; ++i) n.args[i] = req.data.args[i];
  return n;
}

bool KernelUnotify::Send(uint64_t id, const Response& response) {
  struct seccomp_notif_resp resp;
  std::memset(&resp, 0, sizeof(resp));
  resp.id = id;
  if (response.continue_syscall) {
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else {
    resp.error = -response.error;
  }
  return ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0;
}

bool KernelUnotify::IdValid(uint64_t id) {
  return ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

bool KernelUnotify::Gone() {
  pollfd fd{listener_.get(), POLLIN, 0};
  return poll(&fd, 1, 0) < 0 || (fd.revents & (POLLHUP | POLLERR | POLLNVAL));
}

bool KernelTargetMemory::ReadBytes(pid_t pid, uint64_t address, void* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

std::optional<std::string> KernelTargetMemory::ReadString(pid_t pid, uint64_t address, size_t max,
                                                          bool* truncated) {
  *truncated = false;
  std::string out;
  char buf[kPage];
  while (out.size() < max) {
    // Never cross a page boundary in one read: the next page may be unmapped. The first read
    // stops at kFirstRead bytes: most paths and arguments are shorter, and a read to the
    // page's end copied ~2 KiB on average for a ~30-byte path (issue 20).
    size_t in_page = kPage - (address % kPage);
    size_t want = std::min({in_page, max - out.size(), out.empty() ? kFirstRead : kPage});
    iovec local{buf, want};
    iovec remote{reinterpret_cast<void*>(address), want};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) {
      if (out.empty()) return std::nullopt;
      return out;  // the string runs into an unreadable page: keep what was read
    }
    if (const void* nul = std::memchr(buf, '\0', static_cast<size_t>(n))) {
      out.append(buf, static_cast<const char*>(nul) - buf);
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
    address += static_cast<uint64_t>(n);
  }
  *truncated = true;
  return out;
}

}  // namespace gander::monitor
