// Descriptors closed by the kernel's unix-socket garbage collector (common/background_close.h).
#include "common/background_close.h"

#include <sys/socket.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>

#include "common/fd_passing.h"

namespace gander {

bool ClosesInBackground() {
  static const bool in_worker = [] {
    struct utsname uts {};
    int major = 0, minor = 0;
    if (uname(&uts) != 0 || std::sscanf(uts.release, "%d.%d", &major, &minor) != 2) {
      return false;
    }
    return major > 6 || (major == 6 && minor >= 10);
  }();
  return in_worker;
}

void CloseInBackground(std::span<UniqueFd> fds) noexcept {
  auto close_here = [&] {
    for (UniqueFd& fd : fds) fd.Reset();
  };
  // Nothing to close (a moved-from holder's destructor, several at every run's end): no pair.
  if (std::none_of(fds.begin(), fds.end(), [](const UniqueFd& fd) { return bool(fd); })) return;
  int pair[2];
  if (!ClosesInBackground() || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) {
    close_here();
    return;
  }
  UniqueFd sender(pair[0]), queue(pair[1]);
  // The queue's own end first, then the rest, kMaxPassedFds per message. A failed send stops
  // the sending: what was not sent is closed here.
  const char byte = 0;
  int batch[kMaxPassedFds];
  int n = 0;
  bool failed = false;
  auto flush = [&] {
    if (n > 0 && !failed) {
      failed = SendFds(sender.get(), &byte, 1, batch, n) != 0;
    }
    n = 0;
  };
  batch[n++] = queue.get();
  for (const UniqueFd& fd : fds) {
    if (!fd) continue;
    batch[n++] = fd.get();
    if (n == kMaxPassedFds) flush();
  }
  flush();
  close_here();
  queue.Reset();
  sender.Reset();  // last: its release starts the collector
}

}  // namespace gander
