// Closing descriptors from a kernel worker instead of the calling thread, for what is costly to
// let go (a mount namespace's teardown waits for an RCU grace period; a TCP listener's close
// takes 10-40 us here) and is closed where a process waits for gander's exit.
#pragma once

#include <span>

#include "common/unique_fd.h"

namespace gander {

// True where CloseInBackground closes in a kernel worker: Linux 6.10+, whose unix-socket
// garbage collector runs in one (gander does not rely on it on older kernels).
bool ClosesInBackground();

// Closes `fds` (empty ones are skipped; allocates nothing, throws nothing): where
// ClosesInBackground(), they are sent, with one end of a datagram socket pair, to the other
// end's queue; once both ends are closed that is an unreachable cycle, which the collector,
// started by the last close, frees from its worker, shortly after this returns (or after
// gander is gone). Elsewhere, or for what a failed send left, they are closed here.
void CloseInBackground(std::span<UniqueFd> fds) noexcept;

}  // namespace gander
