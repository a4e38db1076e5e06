// The socket factory (socket_factory.h): its protocol, and the Egress members that start the
// helper and ask it for sockets.
#include "network/socket_factory.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fd_passing.h"
#include "network/egress_internal.h"
#include "network/netns_sockets.h"

namespace gander::network {

UniqueFd RequestFactorySocket(int channel, int type, const sockaddr_storage& addr, socklen_t len,
                              int* error) {
  char request[sizeof(int) + sizeof(sockaddr_storage)];
  std::memcpy(request, &type, sizeof(type));
  std::memcpy(request + sizeof(type), &addr, len);
  *error = EIO;
  ssize_t size = static_cast<ssize_t>(sizeof(type) + len);
  if (send(channel, request, static_cast<size_t>(size), MSG_NOSIGNAL) != size) return {};
  int err = 0, fd = -1;
  if (ReceiveFd(channel, &err, sizeof(err), &fd) != 0) return {};
  UniqueFd socket(fd);
  *error = err;
  if (err != 0) return {};
  return socket;
}

void ServeFactoryRequests(int channel) {
  while (true) {
    int type = 0;
    sockaddr_storage addr{};
    char request[sizeof(type) + sizeof(addr)];
    ssize_t n = recv(channel, request, sizeof(request), 0);
    if (n <= static_cast<ssize_t>(sizeof(type))) return;
    std::memcpy(&type, request, sizeof(type));
    std::memcpy(&addr, request + sizeof(type), static_cast<size_t>(n) - sizeof(type));
    auto len = static_cast<socklen_t>(static_cast<size_t>(n) - sizeof(type));
    int fd = type == SOCK_RAW     ? socket(addr.ss_family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW)
             : type == SOCK_DGRAM ? DatagramRelaySocket(addr, len)
                                  : BoundSocket(addr, len);
    int err = fd < 0 ? errno : 0;
    SendFd(channel, &err, sizeof(err), fd);
    if (fd >= 0) close(fd);
  }
}

// A socket bound to the park listener's address (SO_REUSEPORT, as the listener), in the
// child's network namespace: made here without namespaces, else by the factory helper.
UniqueFd Egress::ParkPeer(const sockaddr_storage& park, socklen_t len) {
  if (!config_.namespaces) return UniqueFd(BoundSocket(park, len));
  int unused = 0;
  return FactorySocket(SOCK_STREAM, park, len, &unused);
}

UniqueFd Egress::FactorySocket(int type, const sockaddr_storage& addr, socklen_t len, int* error) {
  *error = EPERM;
  if (!factory_ && factory_user_ns_) StartSocketFactory();
  if (!factory_) return {};
  return RequestFactorySocket(factory_.get(), type, addr, len, error);
}

// The socket factory for namespaces: a helper process that joins the sandbox's user and
// network namespaces (as their owner, gander may) and answers each request (a socket type and
// address) with a socket bound to it, over a seqpacket pair: TCP for parked connects, UDP for
// the relays of allowed UDP destinations; or, for SOCK_RAW, a raw IPPROTO_RAW socket of the
// address's family (see FailParked). It dies with gander (PDEATHSIG) or
// when the pair closes. Started once, on the first request (FactorySocket), into the namespaces
// pinned at start-up (OpenFactoryNamespaces).
void Egress::OpenFactoryNamespaces() {
  if (config_.sandbox_pid <= 0) return;
  std::string base = "/proc/" + std::to_string(config_.sandbox_pid) + "/ns/";
  UniqueFd user(open((base + "user").c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd net(open((base + "net").c_str(), O_RDONLY | O_CLOEXEC));
  if (!user || !net) return;
  factory_user_ns_ = std::move(user);
  factory_net_ns_ = std::move(net);
}

void Egress::StartSocketFactory() {
  // One try: the namespace descriptors go to the helper (or away, if it cannot start).
  UniqueFd user = std::move(factory_user_ns_);
  UniqueFd net = std::move(factory_net_ns_);
  int pair[2];
  if (!user || !net || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(pair[0]);
    close(pair[1]);
    return;
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here: gander may have threads.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    int keep[3] = {pair[1], user.get(), net.get()};
    for (int i = 0; i < 3; ++i) {  // to fds 3, 4, 5; everything else closed (Goose's pipes too)
      int moved = fcntl(keep[i], F_DUPFD, 10);
      keep[i] = moved;
    }
    for (int i = 0; i < 3; ++i) dup2(keep[i], 3 + i);
    syscall(SYS_close_range, 0, 2, 0);
    syscall(SYS_close_range, 6, ~0U, 0);
    int self_user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    struct stat a {
    }, b{};
    bool same_user = self_user >= 0 && fstat(self_user, &a) == 0 && fstat(4, &b) == 0 &&
                     a.st_ino == b.st_ino && a.st_dev == b.st_dev;
    if ((!same_user && setns(4, CLONE_NEWUSER) != 0) || setns(5, CLONE_NEWNET) != 0) _exit(1);
    ServeFactoryRequests(3);
    _exit(0);
  }
  close(pair[1]);
  factory_ = UniqueFd(pair[0]);
  factory_pid_ = pid;
}

}  // namespace gander::network
