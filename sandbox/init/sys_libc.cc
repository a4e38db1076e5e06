// init_loop.h's Sys in gander's own image: through libc.
#include <unistd.h>

#include <cerrno>

#include "sandbox/init/init_loop.h"

namespace gander::init {

long Sys(long nr, long a, long b, long c, long d) {
  long r = syscall(nr, a, b, c, d);
  return r == -1 ? -errno : r;
}

}  // namespace gander::init
