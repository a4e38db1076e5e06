// Descriptors closed by the kernel's unix-socket garbage collector (common/background_close.h).
#include "common/background_close.h"

#include <sys/socket.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <utility>

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

void CloseInBackground(std::vector<UniqueFd> fds) {
  std::erase_if(fds, [](const UniqueFd& fd) { return !fd; });
  if (fds.empty() || !ClosesInBackground()) return;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return;
  UniqueFd sender(pair[0]), queue(pair[1]);
  // The queue's own end first, then the rest, kMaxPassedFds per message.
  std::vector<int> all{queue.get()};
  for (const UniqueFd& fd : fds) all.push_back(fd.get());
  const char byte = 0;
  for (size_t at = 0; at < all.size(); at += kMaxPassedFds) {
    const int count = static_cast<int>(std::min<size_t>(kMaxPassedFds, all.size() - at));
    // Failed: what was not sent is closed here, with the rest (the vector's destructor).
    if (SendFds(sender.get(), &byte, 1, all.data() + at, count) != 0) break;
  }
  fds.clear();
  queue.Reset();
  sender.Reset();  // last: its release starts the collector
}

}  // namespace gander
