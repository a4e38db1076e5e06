// Passing file descriptors over a Unix socket (SCM_RIGHTS), with a small fixed-size message
// beside them. One implementation for the launcher's sandbox init (which must stay
// async-signal-safe: these functions allocate nothing and throw nothing), the egress socket
// factory and the benchmarks. Results are errno-style: 0, or the errno that explains the failure.
#pragma once

#include <cstddef>

namespace gander {

// The most fds one message carries.
inline constexpr int kMaxPassedFds = 8;

// Sends `len` bytes of `data` (at least 1: a stream socket drops a message with no data) and
// `count` fds (0 to kMaxPassedFds), retrying on EINTR. EPIPE, not SIGPIPE, for a closed peer.
int SendFds(int sock, const void* data, std::size_t len, const int* fds, int count);

// Sends `data` with `fd`, or with no fd when `fd` < 0.
inline int SendFd(int sock, const void* data, std::size_t len, int fd) {
  return SendFds(sock, data, len, &fd, fd >= 0 ? 1 : 0);
}

// Receives one message of exactly `len` bytes into `data` and the fds it carries (at most `max`
// are kept in `fds`, close-on-exec; more are closed), retrying on EINTR. On failure no fd is
// kept: EPROTO for a closed peer or a message of another size, else recvmsg's errno.
int ReceiveFds(int sock, void* data, std::size_t len, int* fds, int max, int* count);

// Receives `data` and at most one fd: *fd is -1 when the message carried none.
inline int ReceiveFd(int sock, void* data, std::size_t len, int* fd) {
  int count = 0;
  *fd = -1;
  return ReceiveFds(sock, data, len, fd, 1, &count);
}

}  // namespace gander
