#include "common/unix_socket.h"

#include <sys/socket.h>
#include <sys/un.h>

namespace gander {

Result<UniqueFd> ConnectUnix(const std::string& path, int extra_flags) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return Error{ENAMETOOLONG, "socket path " + path};
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  UniqueFd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | extra_flags, 0));
  if (!sock || connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("connect " + path);
  }
  return sock;
}

}  // namespace gander
