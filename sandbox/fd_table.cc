#include "sandbox/fd_table.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace gander::sandbox {

void PresizeFdTable() noexcept {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t slots = kPresizedFds;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < slots) slots = limit.rlim_cur;
  if (slots <= 64) return;  // the table's first size holds that many already
  const rlim_t top = slots - 1;
  // F_DUPFD, not dup2: it never closes a descriptor that happens to sit at `top`.
  int fd = fcntl(0, F_DUPFD_CLOEXEC, static_cast<int>(top));
  if (fd >= 0) close(fd);
}

}  // namespace gander::sandbox
