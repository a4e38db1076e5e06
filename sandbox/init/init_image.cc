// See init_image.h.
#include "sandbox/init/init_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#ifdef GANDER_INIT_IMAGE
#include "sandbox/init/init_image_bytes.h"
#endif

namespace gander::sandbox {
namespace {

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

int MakeImageFd() {
#ifdef GANDER_INIT_IMAGE
  int fd = memfd_create("gander-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL) fd = memfd_create("gander-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < sizeof(kInitImage)) {
    ssize_t n = write(fd, kInitImage + done, sizeof(kInitImage) - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  // Execute-only: an execve of a file its caller may not read makes the process non-dumpable
  // from the start (the init then never is, not even before its first instruction).
  int high = -1;
  if (fchmod(fd, 0111) == 0 &&
      fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0) {
    high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  }
  close(fd);
  return high;
#else
  return -1;
#endif
}

}  // namespace

int InitImageFd() {
  static const int fd = MakeImageFd();
  return fd;
}

}  // namespace gander::sandbox
