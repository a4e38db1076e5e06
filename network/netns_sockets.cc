// The sockets made inside the sandbox's network namespace; see netns_sockets.h. Only
// async-signal-safe calls: no allocation, no lock, no logging.
#include "network/netns_sockets.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gander::network {

// A TCP socket of `family` on loopback, any port, listening with `backlog` (or only bound when
// backlog < 0); -1 on failure. Async-signal-safe.
int LoopbackSocket(int family, int backlog, bool reuseport) {
  sockaddr_storage ss{};
  socklen_t len;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    len = sizeof(*in6);
  }
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if ((reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) ||
      (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
      bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 ||
      (backlog >= 0 && listen(fd, backlog) != 0)) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

// A non-blocking TCP socket bound to `addr` with SO_REUSEPORT (beside a park listener); -1 on
// failure. Async-signal-safe.
int BoundSocket(const sockaddr_storage& addr, socklen_t len) {
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
      (addr.ss_family == AF_INET6 &&
       setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
      bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

// Adds `addr`'s address (a /32 or /128) to the loopback interface (index 1 in a new network
// namespace) of the calling process's network namespace, so that a socket can be bound to it
// and the namespace routes datagrams for it locally. Async-signal-safe (the factory helper).
int AddLoopbackAddress(const sockaddr_storage& addr) {
  struct {
    nlmsghdr header;
    ifaddrmsg ifa;
    char attributes[2 * RTA_SPACE(16) + RTA_SPACE(4)];
  } request{};
  const void* bytes = nullptr;
  size_t size = 0;
  if (addr.ss_family == AF_INET) {
    bytes = &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr;
    size = 4;
  } else {
    bytes = &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr;
    size = 16;
  }
  request.header.nlmsg_type = RTM_NEWADDR;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
  request.header.nlmsg_seq = 1;
  request.ifa.ifa_family = static_cast<uint8_t>(addr.ss_family);
  request.ifa.ifa_prefixlen = static_cast<uint8_t>(size * 8);
  request.ifa.ifa_flags = IFA_F_NODAD;  // usable at once (IPv6)
  request.ifa.ifa_scope = RT_SCOPE_HOST;
  request.ifa.ifa_index = 1;  // lo
  // No prefix route: with one, an IPv6 address routes (out through lo, then dropped) before
  // its local route is in, which the kernel adds after the netlink answer.
  uint32_t flags = IFA_F_NODAD | IFA_F_NOPREFIXROUTE;
  size_t length = NLMSG_LENGTH(sizeof(ifaddrmsg));
  auto add = [&](unsigned short type, const void* data, size_t data_size) {
    auto* rta = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&request) + NLMSG_ALIGN(length));
    rta->rta_type = type;
    rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(data_size));
    std::memcpy(RTA_DATA(rta), data, data_size);
    length = NLMSG_ALIGN(length) + RTA_ALIGN(rta->rta_len);
  };
  add(IFA_LOCAL, bytes, size);
  add(IFA_ADDRESS, bytes, size);
  add(IFA_FLAGS, &flags, sizeof(flags));
  request.header.nlmsg_len = static_cast<uint32_t>(length);
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return errno;
  int error = EIO;
  if (send(fd, &request, length, 0) == static_cast<ssize_t>(length)) {
    alignas(nlmsghdr) char reply[512];
    ssize_t n = recv(fd, reply, sizeof(reply), 0);
    auto* header = reinterpret_cast<nlmsghdr*>(reply);
    if (n >= static_cast<ssize_t>(NLMSG_LENGTH(sizeof(nlmsgerr))) &&
        header->nlmsg_type == NLMSG_ERROR) {
      error = -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(header))->error;
    }
  }
  close(fd);
  return error;
}

// A UDP socket bound to `addr` (the relay of an allowed destination, in the sandbox's network
// namespace), the address added to loopback first when it is not local. Async-signal-safe.
int DatagramRelaySocket(const sockaddr_storage& addr, socklen_t len) {
  int fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (addr.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  int rc = bind(fd, reinterpret_cast<const sockaddr*>(&addr), len);
  if (rc != 0 && errno == EADDRNOTAVAIL) {
    int error = AddLoopbackAddress(addr);
    rc = error == 0 ? bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) : (errno = error, -1);
    // An IPv6 address's local route is inserted by a kernel work item after the netlink
    // answer: wait (up to 1 s) until the address routes (there is no other route to it), so
    // the first datagram finds it.
    for (int i = 0; rc == 0 && i < 1000; ++i) {
      int probe = socket(addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      bool routes =
          probe >= 0 && connect(probe, reinterpret_cast<const sockaddr*>(&addr), len) == 0;
      if (probe >= 0) close(probe);
      if (routes) break;
      timespec ms{0, 1000000};
      nanosleep(&ms, nullptr);
    }
  }
  if (rc != 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

// A listener whose accept queue is full for good: backlog 1 holds two connections (the kernel
// admits while the queue holds no more than the backlog), which are never accepted; every later
// SYN is dropped, whatever the syncookies setting. The two clients are closed at once: their
// connections stay queued. Not backlog 0 with one connection: before Linux 6.13 (and the
// stable kernels that took "tcp/dccp: allow a connection when sk_max_ack_backlog is zero") a
// zero backlog counts the half-open queue as full, so the filling connect itself is dropped
// (syncookies off: the start stalls) or cookied with a "SYN flooding" kernel log line at every
// start. Async-signal-safe.
int ParkingListener(int family) {
  int fd = LoopbackSocket(family, 1, /*reuseport=*/true);
  if (fd < 0) return -1;
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  for (int i = 0; i < 2; ++i) {
    int client = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool ok = client >= 0 && connect(client, reinterpret_cast<sockaddr*>(&ss), len) == 0;
    if (client >= 0) close(client);
    if (!ok) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

int OpenEgressSockets(EgressSockets& out) {
  int relay4 = LoopbackSocket(AF_INET, SOMAXCONN);
  if (relay4 < 0) return errno;
  out.relay_v4 = UniqueFd(relay4);
  out.park_v4 = UniqueFd(ParkingListener(AF_INET));
  out.refuse_v4 = UniqueFd(LoopbackSocket(AF_INET, -1));
  // No ::1 in the namespace: IPv6 sockets use the IPv4 ones, mapped.
  out.relay_v6 = UniqueFd(LoopbackSocket(AF_INET6, SOMAXCONN));
  if (out.relay_v6) {
    out.park_v6 = UniqueFd(ParkingListener(AF_INET6));
    out.refuse_v6 = UniqueFd(LoopbackSocket(AF_INET6, -1));
  }
  return 0;
}

int BringUpLoopback() {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  struct ifreq ifr {};
  memcpy(ifr.ifr_name, "lo", 3);
  int err = 0;
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
    err = errno;
  } else {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0) err = errno;
  }
  close(fd);
  return err;
}

void OpenDnsStub(EgressSockets& sockets, bool host_loopback) {
  sockaddr_in dns{};
  dns.sin_family = AF_INET;
  dns.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  dns.sin_port = htons(host_loopback ? 0 : 53);
  if (!host_loopback) sockets.dns_udp = UniqueFd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (sockets.dns_udp &&
      bind(sockets.dns_udp.get(), reinterpret_cast<sockaddr*>(&dns), sizeof(dns)) != 0) {
    sockets.dns_udp.Reset();
  }
  sockets.dns_tcp = UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sockets.dns_tcp &&
      (bind(sockets.dns_tcp.get(), reinterpret_cast<sockaddr*>(&dns), sizeof(dns)) != 0 ||
       listen(sockets.dns_tcp.get(), SOMAXCONN) != 0)) {
    sockets.dns_tcp.Reset();
  }
}

}  // namespace gander::network
