// The egress broker and DNS stub; see egress.h.
#include "network/egress.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <mutex>
#include <string_view>
#include <thread>

#include "common/fd_passing.h"

namespace gander::monitor {

namespace {

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

constexpr size_t kPipeSize = 1 << 20;    // per direction and connection
constexpr size_t kTurnBudget = 4 << 20;  // bytes per direction and turn
constexpr size_t kMaxRecordedAddresses = 4096;
constexpr int kMaxLookupsInFlight = 16;
constexpr size_t kMaxDnsTcpConnections = 64;
constexpr size_t kMaxDnsTcpBuffer = 2 + 65535;
constexpr int kUdpTurnDatagrams = 256;  // per socket and turn
constexpr size_t kMaxDatagram = 65536;

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int SocketOption(int fd, int level, int name) {
  int value = -1;
  socklen_t len = sizeof(value);
  if (getsockopt(fd, level, name, &value, &len) != 0) return -1;
  return value;
}

socklen_t ToSockaddr(const policies::IpAddress& ip, uint16_t port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof(*out));
  if (!ip.v6) {
    auto* in = reinterpret_cast<sockaddr_in*>(out);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    std::memcpy(&in->sin_addr, ip.bytes.data(), 4);
    return sizeof(sockaddr_in);
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  std::memcpy(&in6->sin6_addr, ip.bytes.data(), 16);
  return sizeof(sockaddr_in6);
}

// "ip:port" of a socket address, IPv4-mapped addresses unmapped, for matching accepted
// connections to pending ones.
std::string AddressKey(const sockaddr_storage& addr, socklen_t len) {
  auto inet = ParseInetSockaddr(&addr, len);
  if (!inet) return "";
  return inet->ip.ToString() + "|" + std::to_string(inet->port);
}

// Blocks or unblocks the open file description shared with the child; returns the old flags.
int SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  return flags;
}

// The address of `pair` for a socket of `domain`; its length, 0 when there is none.
socklen_t LoopbackFor(int domain, const LoopbackPair& pair, const sockaddr_storage** out) {
  *out = domain == AF_INET6 ? &pair.v6 : &pair.v4;
  if ((*out)->ss_family == AF_INET) return sizeof(sockaddr_in);
  if ((*out)->ss_family == AF_INET6) return sizeof(sockaddr_in6);
  return 0;
}

// A DNS stub client by its address as both ends see it (an IPv6 socket's mapped address
// unmapped, as the IPv4 listener sees it).
std::string StubClientKey(const sockaddr_storage& addr, socklen_t len) {
  auto inet = ParseInetSockaddr(&addr, len);
  return inet ? inet->ip.ToString() + "|" + std::to_string(inet->port) : "";
}

// ::ffff:a.b.c.d:port for an IPv4 address.
sockaddr_storage MappedV6(const sockaddr_storage& v4) {
  sockaddr_storage out{};
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&out);
  const auto* in = reinterpret_cast<const sockaddr_in*>(&v4);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = in->sin_port;
  in6->sin6_addr.s6_addr[10] = 0xff;
  in6->sin6_addr.s6_addr[11] = 0xff;
  std::memcpy(&in6->sin6_addr.s6_addr[12], &in->sin_addr, 4);
  return out;
}

// A TCP socket of `family` on loopback, any port, listening with `backlog` (or only bound when
// backlog < 0); -1 on failure. Async-signal-safe.
int LoopbackSocket(int family, int backlog, bool reuseport = false) {
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
// connections stay queued. Async-signal-safe.
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

void ResetAndClose(UniqueFd& fd) {
  if (!fd) return;
  linger l{1, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  fd.Reset();
}

// The Internet checksum (RFC 1071) of `parts`, laid end to end (each of even size but the
// last).
uint16_t Checksum(std::initializer_list<std::string_view> parts) {
  uint32_t sum = 0;
  for (std::string_view part : parts) {
    for (size_t i = 0; i < part.size(); i += 2) {
      uint32_t hi = static_cast<uint8_t>(part[i]);
      uint32_t lo = i + 1 < part.size() ? static_cast<uint8_t>(part[i + 1]) : 0;
      sum += hi << 8 | lo;
    }
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

template <typename T>
std::string_view Bytes(const T& value) {
  return {reinterpret_cast<const char*>(&value), sizeof(value)};
}

// An IP packet (the header's family from `from`) from `from` to `to`, carrying `payload` of
// `protocol`; when `checksum_at` is set, the payload's checksum is stored there (network
// order), computed with the pseudo-header for TCP and ICMPv6, without it for ICMP.
std::string IpPacket(const sockaddr_storage& from, const sockaddr_storage& to, uint8_t protocol,
                     std::string payload, std::optional<size_t> checksum_at) {
  if (from.ss_family == AF_INET) {
    const auto& src = reinterpret_cast<const sockaddr_in&>(from).sin_addr;
    const auto& dst = reinterpret_cast<const sockaddr_in&>(to).sin_addr;
    if (checksum_at) {
      struct {
        in_addr src, dst;
        uint8_t zero, protocol;
        uint16_t length;
      } __attribute__((packed)) pseudo{src, dst, 0, protocol, htons(payload.size())};
      uint16_t sum = htons(protocol == IPPROTO_ICMP ? Checksum({payload})
                                                    : Checksum({Bytes(pseudo), payload}));
      std::memcpy(payload.data() + *checksum_at, &sum, sizeof(sum));
    }
    iphdr ip{};
    ip.version = 4;
    ip.ihl = sizeof(ip) / 4;
    ip.tot_len = htons(static_cast<uint16_t>(sizeof(ip) + payload.size()));
    ip.ttl = 64;
    ip.protocol = protocol;
    ip.saddr = src.s_addr;
    ip.daddr = dst.s_addr;
    ip.check = htons(Checksum({Bytes(ip)}));
    return std::string(Bytes(ip)) + payload;
  }
  const auto& src = reinterpret_cast<const sockaddr_in6&>(from).sin6_addr;
  const auto& dst = reinterpret_cast<const sockaddr_in6&>(to).sin6_addr;
  if (checksum_at) {
    struct {
      in6_addr src, dst;
      uint32_t length;
      uint8_t zero[3], protocol;
    } __attribute__((packed)) pseudo{src, dst, htonl(payload.size()), {}, protocol};
    uint16_t sum = htons(Checksum({Bytes(pseudo), payload}));
    std::memcpy(payload.data() + *checksum_at, &sum, sizeof(sum));
  }
  ip6_hdr ip{};
  ip.ip6_flow = htonl(6u << 28);
  ip.ip6_plen = htons(static_cast<uint16_t>(payload.size()));
  ip.ip6_nxt = protocol;
  ip.ip6_hlim = 64;
  ip.ip6_src = src;
  ip.ip6_dst = dst;
  return std::string(Bytes(ip)) + payload;
}

uint16_t PortOf(const sockaddr_storage& a) {
  return a.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(a).sin_port
                                : reinterpret_cast<const sockaddr_in6&>(a).sin6_port;
}

// A TCP header from `from` to `to` (network order ports) with `seq`, `ack` and `flags`.
std::string TcpHeader(const sockaddr_storage& from, const sockaddr_storage& to, uint32_t seq,
                      uint32_t ack, uint8_t flags) {
  tcphdr th{};
  th.source = PortOf(from);
  th.dest = PortOf(to);
  th.seq = htonl(seq);
  th.ack_seq = htonl(ack);
  th.doff = sizeof(th) / 4;
  std::string out(Bytes(th));
  out[13] = static_cast<char>(flags);
  return out;
}

// The ICMP (ICMPv6) destination-unreachable code the kernel turns into `error` for a TCP
// socket in SYN_SENT (icmp_err_convert, icmpv6_err_convert); -1 when there is none.
int UnreachableCode(int family, int error) {
  if (family == AF_INET) {
    switch (error) {
      case ENETUNREACH:
        return ICMP_NET_UNREACH;
      case EHOSTUNREACH:
        return ICMP_HOST_UNREACH;
      case ENOPROTOOPT:
        return ICMP_PROT_UNREACH;
      case EHOSTDOWN:
        return ICMP_HOST_UNKNOWN;
      case ENONET:
        return ICMP_HOST_ISOLATED;
      default:
        return -1;
    }
  }
  switch (error) {
    case ENETUNREACH:
      return ICMP6_DST_UNREACH_NOROUTE;
    case EHOSTUNREACH:
      return ICMP6_DST_UNREACH_ADDR;
    case EACCES:
      return ICMP6_DST_UNREACH_ADMIN;
    default:
      return -1;
  }
}

// The next sequence number of a TCP socket's send queue (in SYN_SENT: its SYN's + 1), read
// in repair mode (CAP_NET_ADMIN in the socket's network namespace). Leaving repair mode
// clears SO_REUSEADDR: it is put back.
std::optional<uint32_t> SendSequence(int fd) {
  int reuse = SocketOption(fd, SOL_SOCKET, SO_REUSEADDR);
  int on = TCP_REPAIR_ON;
  if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)) != 0) return std::nullopt;
  int queue = TCP_SEND_QUEUE;
  uint32_t seq = 0;
  socklen_t len = sizeof(seq);
  bool ok = setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)) == 0 &&
            getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq, &len) == 0;
  queue = TCP_NO_QUEUE;
  setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue));
  int off = TCP_REPAIR_OFF_NO_WP;
  bool left = setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off)) == 0;
  if (reuse > 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
  if (!ok || !left) return std::nullopt;
  return seq;
}

}  // namespace

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

struct Pipe {
  UniqueFd r, w;
  size_t pending = 0;
  bool eof = false;   // the source said EOF
  bool shut = false;  // ... and it was passed on (shutdown(SHUT_WR) of the destination)
};

struct Egress::Connection {
  uint64_t id = 0;
  uint64_t notification = 0;
  bool answered = false;
  bool nonblocking = false;
  Event base;
  InetAddress dest;
  std::string host;
  std::string rule;
  Verdict verdict = Verdict::kAllowed;  // kWouldDeny: the policy on trial would refuse it
  UniqueFd child;  // our copy of the child's socket, until it is connected to the relay
  ino_t inode = 0;
  std::string child_address;
  UniqueFd upstream;
  bool upstream_connected = false;
  bool upstream_failed = false;
  UniqueFd inner;  // the relay's accepted end
  bool relaying = false;
  Pipe up, down;  // child -> destination, destination -> child
  uint64_t bytes_out = 0, bytes_in = 0;
  int64_t started_ns = 0;
  bool parked = false;      // the child's socket waits in SYN_SENT on a park listener
  sockaddr_storage park{};  // ... this one
  socklen_t park_len = 0;
};

// One child socket's datagrams to one allowed UDP destination: gander's own socket, connected
// to the destination, carries them; replies go back to `child` from the relay.
struct Egress::UdpFlow {
  sockaddr_storage child{};
  socklen_t child_len = 0;
  UniqueFd upstream;
  uint64_t datagrams_out = 0, datagrams_in = 0, bytes_out = 0, bytes_in = 0;
  uint64_t dropped = 0;  // datagrams not relayed, either way
  int64_t started_ns = 0;
  int64_t last_ns = 0;  // the last datagram either way
};

// An allowed UDP destination: the relay socket bound to its address in the sandbox's network
// namespace, and a flow per child socket that sent to it.
struct Egress::UdpRelay {
  Event base;           // of the call that made it
  std::string syscall;  // ... and which call that was
  InetAddress dest;
  std::string host;
  std::string rule;
  Verdict verdict = Verdict::kAllowed;
  UniqueFd inner;
  std::map<std::string, std::unique_ptr<UdpFlow>> flows;  // by the child's address (AddressKey)
};

// Where a DNS answer goes: a UDP client address, or a DNS-over-TCP connection (tcp != 0).
struct DnsOrigin {
  sockaddr_storage client{};
  socklen_t client_len = 0;
  uint64_t tcp = 0;
};

// Host lookups for the DNS stub, on short-lived threads; results return through an eventfd.
struct Egress::Resolver {
  struct Job {
    DnsOrigin origin;
    std::string query;
    dns::Question question;
    int error = 0;  // EAI_* from getaddrinfo
    std::vector<policies::IpAddress> addresses;
  };
  std::mutex mutex;
  std::deque<Job> done;
  UniqueFd event;
  int in_flight = 0;  // touched by the loop only
};

Egress::Egress(EgressConfig config, Unotify& unotify, TargetMemory& memory,
               BoundedEventQueue& queue)
    : config_(std::move(config)),
      context_{.namespaces = config_.namespaces, .deny_errno = config_.deny_errno},
      unotify_(unotify),
      memory_(memory),
      queue_(queue),
      epoll_(epoll_create1(EPOLL_CLOEXEC)),
      kick_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      resolver_(std::make_shared<Resolver>()) {
  resolver_->event = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  Watch(kick_.get(), EPOLLIN, &Egress::OnKick);
  Watch(resolver_->event.get(), EPOLLIN, &Egress::OnResolved);
  for (const auto& [ip, name] : config_.hosts_file) {
    if (names_.size() >= kMaxRecordedAddresses && !names_.count(ip)) break;
    names_[ip].insert(name);
  }
  udp_timer_ = UniqueFd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (udp_timer_) Watch(udp_timer_.get(), EPOLLIN, &Egress::OnUdpTimer);
  EgressSockets& s = config_.sockets;
  for (auto [fd, addr] :
       {std::pair{&s.relay_v4, &relay_.v4}, std::pair{&s.relay_v6, &relay_.v6},
        std::pair{&s.park_v4, &park_.v4}, std::pair{&s.park_v6, &park_.v6},
        std::pair{&s.refuse_v4, &refuse_.v4}, std::pair{&s.refuse_v6, &refuse_.v6}}) {
    if (!*fd) continue;
    socklen_t len = sizeof(*addr);
    getsockname(fd->get(), reinterpret_cast<sockaddr*>(addr), &len);
  }
  for (LoopbackPair* pair : {&relay_, &park_, &refuse_}) {
    if (pair->v6.ss_family == 0 && pair->v4.ss_family == AF_INET) pair->v6 = MappedV6(pair->v4);
  }
  for (UniqueFd* fd : {&s.relay_v4, &s.relay_v6}) {
    if (!*fd) continue;
    fcntl(fd->get(), F_SETFL, fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
    Watch(fd->get(), EPOLLIN, &Egress::OnAccept);
  }
  if (s.dns_udp) {
    fcntl(s.dns_udp.get(), F_SETFL, fcntl(s.dns_udp.get(), F_GETFL) | O_NONBLOCK);
    Watch(s.dns_udp.get(), EPOLLIN, &Egress::OnDns);
  }
  if (s.dns_tcp) {
    fcntl(s.dns_tcp.get(), F_SETFL, fcntl(s.dns_tcp.get(), F_GETFL) | O_NONBLOCK);
    Watch(s.dns_tcp.get(), EPOLLIN, &Egress::OnDnsAccept);
  }
  // Without namespaces the host's nameservers are the stub, over TCP (egress.h).
  if (s.dns_tcp && !config_.namespaces) {
    socklen_t len = sizeof(dns_stub_.v4);
    if (getsockname(s.dns_tcp.get(), reinterpret_cast<sockaddr*>(&dns_stub_.v4), &len) == 0) {
      dns_stub_.v6 = MappedV6(dns_stub_.v4);
      context_.nameservers = config_.nameservers;
    }
  }
  // The namespaces are pinned now (the pid may be reused later); the helper itself is forked
  // on the first request: most extensions never connect, and a fork of gander at every start
  // cost page-table copies and, in memory, a second copy of gander's resident set (issue 20).
  if (config_.namespaces && (s.park_v4 || s.park_v6)) OpenFactoryNamespaces();
}

Egress::~Egress() {
  if (factory_pid_ > 0) {
    factory_.Reset();  // the helper reads EOF and exits
    waitpid(factory_pid_, nullptr, 0);
  }
}

void Egress::CloseAll() {
  for (auto& [key, relay] : udp_relays_) {
    OnUdpInner(relay->inner.get(), EPOLLIN);  // what the child sent last still goes out
    while (!relay->flows.empty()) FinishUdpFlow(*relay, relay->flows.begin()->first, "exit");
  }
  std::vector<uint64_t> ids;
  for (const auto& [id, c] : connections_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto conn = connections_.find(id);
    if (conn == connections_.end()) continue;
    if (conn->second->relaying) Pump(*conn->second);  // may finish it
    conn = connections_.find(id);
    if (conn != connections_.end()) Finish(*conn->second, 0, false);
  }
}

EgressStats Egress::stats() const {
  EgressStats s = stats_;
  s.open = connections_.size();
  return s;
}

void Egress::Watch(int fd, uint32_t events, Handler handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev);
  handlers_[fd] = handler;
}

void Egress::Unwatch(int fd) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  handlers_.erase(fd);
}

void Egress::Kick() {
  uint64_t one = 1;
  (void)!write(kick_.get(), &one, sizeof(one));
}

void Egress::OnReady() {
  epoll_event events[64];
  int n = epoll_wait(epoll_.get(), events, 64, 0);
  for (int i = 0; i < n; ++i) {
    auto it = handlers_.find(events[i].data.fd);
    if (it != handlers_.end()) (this->*(it->second))(events[i].data.fd, events[i].events);
  }
}

void Egress::Shutdown(std::chrono::milliseconds grace) {
  int64_t deadline = MonotonicNs() + grace.count() * 1000000;
  for (int64_t now = MonotonicNs(); !connections_.empty() && now < deadline; now = MonotonicNs()) {
    pollfd p{epoll_.get(), POLLIN, 0};
    poll(&p, 1, static_cast<int>((deadline - now) / 1000000) + 1);
    OnReady();
  }
  CloseAll();
}

bool Egress::SandboxListens(const policies::IpAddress& ip, uint16_t port, bool* listening) const {
  *listening = false;
  if (config_.sandbox_pid <= 0) return false;
  std::string base = "/proc/" + std::to_string(config_.sandbox_pid) + "/net/";
  bool read_any = false;
  for (const char* name : {"tcp", "tcp6"}) {
    UniqueFd fd(open((base + name).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) continue;
    std::string table;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd.get(), buf, sizeof(buf))) > 0) {
      table.append(buf, static_cast<size_t>(n));
      if (TablePastListeners(table)) break;
    }
    if (n < 0) continue;
    read_any = true;
    if (TableListensOn(table, name[3] == '6', ip, port)) {
      *listening = true;
      return true;
    }
  }
  return read_any;
}

std::vector<std::string> Egress::NamesOf(const policies::IpAddress& ip) const {
  auto it = names_.find(ip);
  if (it == names_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

// A connection or flow the call in flight started counts for it now: its event is written
// when it ends. (Denied ones are events at once, counted by the seccomp monitor.)
void Egress::CountForToolCall(const Event& base) {
  if (!config_.tool_calls) return;
  Event started = base;
  started.payload = NetworkEvent{};
  config_.tool_calls->Attribute(started);
}

Event Egress::Denied(const Event& base, std::string_view syscall, const InetAddress& addr,
                     std::string transport, const NetDecision& d) {
  ++stats_.denied;
  Event e = base;
  NetworkEvent net;
  std::vector<std::string> names = NamesOf(addr.ip);
  if (!names.empty()) net.host = names.front();
  net.ip = addr.ip.ToString();
  net.port = addr.port;
  net.transport = std::move(transport);
  net.result = Verdict::kDenied;
  net.error = d.error;
  net.syscall = syscall;
  net.rule = d.rule;
  e.payload = std::move(net);
  return e;
}

std::optional<Response> Egress::OnSyscall(const Notification& n, std::string_view syscall,
                                          const Event& base, std::vector<Event>& events) {
  if (syscall == "connect") return OnConnect(n, base, events);
  return OnSend(n, syscall, base, events);
}

UniqueFd Egress::TakeSocket(const Notification& n, const Event& base, int fd, int* error) {
  *error = 0;
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, n.pid, PIDFD_THREAD)));
  if (!pidfd && base.pid) pidfd = UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, *base.pid, 0)));
  // The pid could have been recycled before pidfd_open: the notification being still pending
  // proves the pidfd names the thread that made the call.
  if (!pidfd || !unotify_.IdValid(n.id)) {
    *error = ESRCH;
    return {};
  }
  UniqueFd sock(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  if (!sock) *error = errno == EBADF ? EBADF : errno;
  return sock;
}

std::optional<Response> Egress::OnConnect(const Notification& n, const Event& base,
                                          std::vector<Event>& events) {
  // addrlen is an int: the kernel reads 32 bits of the register, and so do we.
  const auto len = static_cast<socklen_t>(n.args[2] & 0xffffffffu);
  if (static_cast<int>(len) < 0 || len > sizeof(sockaddr_storage)) return Response{false, EINVAL};
  sockaddr_storage copy{};
  if (len > 0 && !memory_.ReadBytes(n.pid, n.args[1], &copy, len)) return Response{false, EFAULT};
  int family = SockaddrFamily(&copy, len);
  // The decision rests on the socket itself, never on the copied family alone: another
  // thread can rewrite the family after our copy, and a CONTINUE would make the kernel read
  // that new address (an inet one on an MPTCP socket, past the broker and Landlock).
  int error = 0;
  UniqueFd sock = TakeSocket(n, base, static_cast<int>(n.args[0]), &error);
  if (!sock) return Response{false, error};
  int domain = SocketOption(sock.get(), SOL_SOCKET, SO_DOMAIN);
  int type = SocketOption(sock.get(), SOL_SOCKET, SO_TYPE);
  if (domain != AF_INET && domain != AF_INET6) {
    if (domain < 0) return Response{false, ENOTSOCK};
    // A unix (or other non-inet) socket. With namespaces the kernel may read the address
    // again: whatever it reads, the mount view, Landlock's scoping and the empty network
    // namespace bound what it can reach (even if the fd number is swapped for an inet socket
    // meanwhile). Without them nothing would: socket() makes no such sockets there
    // (denied_syscalls), and a connect on one (a socketpair's) is refused.
    if (context_.namespaces) return Response{true, 0};
    return Response{false, EACCES};
  }
  if (family != AF_INET && family != AF_INET6 && family != AF_UNSPEC) {
    return Response{false, EAFNOSUPPORT};  // as tcp_v4_connect / udp's connect answer it
  }
  struct stat st {};
  fstat(sock.get(), &st);
  // A parked connect that failed left the socket connecting for the kernel (SS_CONNECTING,
  // TCP_CLOSE): its next connect returns the error (ECONNABORTED once SO_ERROR was read) and
  // leaves it unconnected, as without gander. The kernel answers that itself when our copy is
  // connected to the refuse address (sandbox loopback: were the socket unconnected after all,
  // that would only be refused).
  if (failed_connects_.erase(st.st_ino) && family != AF_UNSPEC && type == SOCK_STREAM) {
    const sockaddr_storage* refuse = nullptr;
    socklen_t refuse_len = LoopbackFor(domain, refuse_, &refuse);
    if (refuse_len > 0) return ConnectLocal(n, std::move(sock), *refuse, refuse_len);
  }
  if (family == AF_UNSPEC) return ConnectLocal(n, std::move(sock), copy, len);  // disconnect
  std::optional<InetAddress> addr = ParseInetSockaddr(&copy, len);
  if (!addr) return Response{false, EINVAL};
  if (domain == AF_INET && family == AF_INET6) return Response{false, EAFNOSUPPORT};
  if (domain == AF_INET6 && family == AF_INET && type == SOCK_STREAM) {
    return Response{false, EAFNOSUPPORT};
  }
  if (type == SOCK_STREAM) {
    auto pending = by_inode_.find(st.st_ino);
    if (pending != by_inode_.end() && connections_.count(pending->second)) {
      return Response{false, connections_[pending->second]->inner ? EISCONN : EALREADY};
    }
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    if (getpeername(sock.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) {
      return Response{false, EISCONN};
    }
  }
  policies::Destination dest{addr->ip, addr->port, NamesOf(addr->ip)};
  NetContext context = context_;
  if (context.namespaces && (ListenersMatter(config_.matcher, dest, type) ||
                             (config_.trial && ListenersMatter(*config_.trial, dest, type)))) {
    context.listeners_known = SandboxListens(addr->ip, addr->port, &context.local_listener);
  }
  NetDecision d = DecideConnect(config_.matcher, dest, type, context);
  // Only a brokered connect reaches anything beyond the sandbox: the trial refuses it when it
  // would not broker it (a refusal, or the sandbox's own loopback instead of the host's).
  d.would_deny = config_.trial &&
                 (d.action == NetAction::kBroker || d.action == NetAction::kRelay) &&
                 DecideConnect(*config_.trial, dest, type, context).action != d.action;
  switch (d.action) {
    case NetAction::kContinue:  // never for an inet connect
    case NetAction::kDeny:
      events.push_back(Denied(base, "connect", *addr, type == SOCK_STREAM ? "tcp" : "udp", d));
      return Response{false, d.error ? d.error : config_.deny_errno};
    case NetAction::kLocal:
      return ConnectLocal(n, std::move(sock), copy, len);
    case NetAction::kDnsStub: {
      const sockaddr_storage* stub = nullptr;
      socklen_t stub_len = LoopbackFor(domain, dns_stub_, &stub);
      if (stub_len == 0) return Response{false, config_.deny_errno};
      UniqueFd copy_for_key(fcntl(sock.get(), F_DUPFD_CLOEXEC, 0));
      std::optional<Response> r = ConnectLocal(n, std::move(sock), *stub, stub_len);
      // The stub on host loopback serves only the sockets connected here (OnDnsAccept).
      sockaddr_storage local{};
      socklen_t local_len = sizeof(local);
      if (copy_for_key &&
          getsockname(copy_for_key.get(), reinterpret_cast<sockaddr*>(&local), &local_len) == 0) {
        if (dns_clients_.size() >= kMaxDnsTcpConnections * 16) dns_clients_.clear();
        dns_clients_.insert(StubClientKey(local, local_len));
      }
      return r;
    }
    case NetAction::kBroker:
      return StartBroker(n, base, std::move(sock), *addr, d, events);
    case NetAction::kRelay:
      if (int err = EnsureUdpRelay(base, "connect", *addr, d); err != 0) {
        d.error = err;
        events.push_back(Denied(base, "connect", *addr, "udp", d));
        return Response{false, err};
      }
      return ConnectLocal(n, std::move(sock), copy, len);
  }
  return Response{false, config_.deny_errno};
}

std::optional<Response> Egress::OnSend(const Notification& n, std::string_view syscall,
                                       const Event& base, std::vector<Event>& events) {
  // Every address the call names, copied once.
  std::vector<std::pair<sockaddr_storage, socklen_t>> addresses;
  auto read_name = [&](uint64_t pointer, uint64_t length) {
    if (pointer == 0 || length == 0) return true;
    sockaddr_storage copy{};
    auto len = static_cast<socklen_t>(std::min<uint64_t>(length, sizeof(copy)));
    if (!memory_.ReadBytes(n.pid, pointer, &copy, len)) return false;
    addresses.emplace_back(copy, len);
    return true;
  };
  bool readable = true;
  if (syscall == "sendto") {
    readable = read_name(n.args[4], n.args[5]);
  } else if (syscall == "sendmsg") {
    msghdr msg{};
    readable = memory_.ReadBytes(n.pid, n.args[1], &msg, sizeof(msg)) &&
               read_name(reinterpret_cast<uint64_t>(msg.msg_name), msg.msg_namelen);
  } else {  // sendmmsg
    // vlen is an unsigned int (32 bits of the register); UIO_MAXIOV caps it, as the kernel does.
    uint64_t count = std::min<uint64_t>(n.args[2] & 0xffffffffu, 1024);
    for (uint64_t i = 0; i < count && readable; ++i) {
      mmsghdr m{};
      readable = memory_.ReadBytes(n.pid, n.args[1] + i * sizeof(mmsghdr), &m, sizeof(m)) &&
                 read_name(reinterpret_cast<uint64_t>(m.msg_hdr.msg_name), m.msg_hdr.msg_namelen);
    }
  }
  if (!readable) return Response{false, EFAULT};
  std::vector<InetAddress> inet;
  for (const auto& [copy, len] : addresses) {
    if (auto a = ParseInetSockaddr(&copy, len)) inet.push_back(*a);
  }
  if (inet.empty()) return Response{true, 0};
  // Datagrams to the sandbox's own loopback need no look at the socket (unless a UDP rule
  // names that address: then it goes through the relay).
  if (context_.namespaces && std::all_of(inet.begin(), inet.end(), [&](const InetAddress& a) {
        policies::Destination udp{a.ip, a.port, {}, policies::Protocol::kUdp};
        return IsLocalAddress(a.ip) && !config_.matcher.Match(udp).allowed;
      })) {
    return Response{true, 0};
  }
  int error = 0;
  UniqueFd sock = TakeSocket(n, base, static_cast<int>(n.args[0]), &error);
  if (!sock) return Response{false, error};
  int type = SocketOption(sock.get(), SOL_SOCKET, SO_TYPE);
  for (const InetAddress& a : inet) {
    policies::Destination dest{a.ip, a.port, NamesOf(a.ip)};
    NetDecision d = DecideSend(config_.matcher, dest, type, context_);
    NetAction trial = config_.trial && type != SOCK_STREAM
                          ? DecideSend(*config_.trial, dest, type, context_).action
                          : d.action;
    if (d.action == NetAction::kRelay) {
      d.would_deny = trial != NetAction::kRelay;
      int err = EnsureUdpRelay(base, syscall, a, d);
      if (err == 0) continue;
      d.error = err;
      d.action = NetAction::kDeny;
    }
    if (d.action == NetAction::kDeny) {
      events.push_back(Denied(base, syscall, a, type == SOCK_STREAM ? "tcp" : "udp", d));
      int err = d.error ? d.error : config_.deny_errno;
      if (config_.gvisor_hostinet && type != SOCK_STREAM && err == ECONNREFUSED) err = EPERM;
      return Response{false, err};
    }
    if (trial == NetAction::kDeny) {
      Event e = Denied(base, syscall, a, "udp", d);
      --stats_.denied;
      std::get<NetworkEvent>(e.payload).result = Verdict::kWouldDeny;
      events.push_back(std::move(e));
    }
  }
  return Response{true, 0};
}

// connect() on the sandbox's own loopback (or AF_UNSPEC), done by the supervisor on the
// child's socket with the copied address: the child's memory is not read again.
std::optional<Response> Egress::ConnectLocal(const Notification& n, UniqueFd sock,
                                             const sockaddr_storage& addr, socklen_t len) {
  int flags = SetNonBlocking(sock.get());
  int rc = connect(sock.get(), reinterpret_cast<const sockaddr*>(&addr), len);
  int err = rc == 0 ? 0 : errno;
  if (flags >= 0 && !(flags & O_NONBLOCK)) {
    if (err == EINPROGRESS) {
      int fd = sock.get();
      local_[fd] = LocalPending{std::move(sock), n.id, flags};
      Watch(fd, EPOLLOUT, &Egress::OnLocalConnected);
      return std::nullopt;
    }
    fcntl(sock.get(), F_SETFL, flags);
  }
  return Response{false, err};
}

void Egress::OnLocalConnected(int fd, uint32_t) {
  auto it = local_.find(fd);
  if (it == local_.end()) return;
  int err = SocketOption(fd, SOL_SOCKET, SO_ERROR);
  fcntl(fd, F_SETFL, it->second.flags);
  unotify_.Send(it->second.notification, Response{false, err < 0 ? EIO : err});
  Unwatch(fd);
  local_.erase(it);
}

std::optional<Response> Egress::StartBroker(const Notification& n, const Event& base, UniqueFd sock,
                                            const InetAddress& dest, const NetDecision& decision,
                                            std::vector<Event>& events) {
  auto c = std::make_unique<Connection>();
  c->id = next_id_++;
  c->notification = n.id;
  c->base = base;
  c->dest = dest;
  CountForToolCall(base);
  std::vector<std::string> names = NamesOf(dest.ip);
  if (!names.empty()) c->host = names.front();
  c->rule = decision.rule;
  c->verdict = decision.would_deny ? Verdict::kWouldDeny : Verdict::kAllowed;
  c->started_ns = MonotonicNs();
  int flags = fcntl(sock.get(), F_GETFL);
  c->nonblocking = flags >= 0 && (flags & O_NONBLOCK);
  struct stat st {};
  fstat(sock.get(), &st);
  c->inode = st.st_ino;
  c->child = std::move(sock);

  sockaddr_storage target;
  socklen_t target_len = ToSockaddr(dest.ip, dest.port, &target);
  c->upstream = UniqueFd(socket(target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  // The child's connect timeouts apply to the real connection too.
  for (int option : {TCP_SYNCNT, TCP_USER_TIMEOUT}) {
    int value = SocketOption(c->child.get(), IPPROTO_TCP, option);
    if (c->upstream && value > 0) {
      setsockopt(c->upstream.get(), IPPROTO_TCP, option, &value, sizeof(value));
    }
  }
  int rc = c->upstream
               ? connect(c->upstream.get(), reinterpret_cast<sockaddr*>(&target), target_len)
               : -1;
  int err = rc == 0 ? 0 : errno;
  if (rc != 0 && err != EINPROGRESS) {
    Event e = base;
    NetworkEvent net;
    net.host = c->host;
    net.ip = dest.ip.ToString();
    net.port = dest.port;
    net.transport = "tcp";
    net.result = c->verdict;
    net.error = err;
    net.syscall = "connect";
    net.rule = c->rule;
    e.payload = std::move(net);
    events.push_back(std::move(e));
    return Response{false, err};
  }
  Connection& ref = *c;
  by_inode_[c->inode] = c->id;
  by_fd_[c->upstream.get()] = c->id;
  connections_[c->id] = std::move(c);
  if (rc == 0) {
    UpstreamDone(ref, 0);
  } else {
    Watch(ref.upstream.get(), EPOLLOUT, &Egress::OnUpstream);
    if (ref.nonblocking) Park(ref);
  }
  return std::nullopt;
}

void Egress::OnUpstream(int fd, uint32_t) {
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  Connection& c = *connections_[it->second];
  Unwatch(fd);
  UpstreamDone(c, SocketOption(fd, SOL_SOCKET, SO_ERROR));
}

void Egress::UpstreamDone(Connection& c, int error) {
  if (error != 0) {
    c.upstream_failed = true;
    if (!c.answered) {
      unotify_.Send(c.notification, Response{false, error});
      c.answered = true;
    }
    // A parked non-blocking connect learns the failure as without gander: a time-out from its
    // own SYN_SENT timing out (its TCP_SYNCNT and TCP_USER_TIMEOUT were copied to the upstream
    // socket); a refusal or an unreachable destination from the packet that reports it
    // (FailParked). Where that cannot be done, the fallback: Unpark, then a refusal from the
    // refuse socket, anything else as a reset. That fallback is not exact: the disconnect
    // makes tcp_disconnect() set ECONNRESET and wake the child's pollers before the refuse
    // socket's RST sets ECONNREFUSED, so a child thread polling may read ECONNRESET (or
    // SO_ERROR 0, unconnected).
    if (c.parked) RememberFailedConnect(c.inode);
    if (c.parked && error != ETIMEDOUT && !FailParked(c, error) && Unpark(c)) {
      const sockaddr_storage* refuse = nullptr;
      socklen_t len = 0;
      if (error == ECONNREFUSED) {
        len = LoopbackFor(SocketOption(c.child.get(), SOL_SOCKET, SO_DOMAIN), refuse_, &refuse);
      }
      if (len > 0) {
        connect(c.child.get(), reinterpret_cast<const sockaddr*>(refuse), len);
      } else {
        sockaddr unspec{};
        unspec.sa_family = AF_UNSPEC;
        connect(c.child.get(), &unspec, sizeof(unspec));  // SO_ERROR: ECONNRESET
      }
    }
    Finish(c, error, true);
    return;
  }
  c.upstream_connected = true;
  ++stats_.brokered;
  if (!c.child_address.empty() || c.inner) {
    StartRelay(c);
    return;
  }
  if (c.parked && ConnectParked(c)) return;
  if (c.parked && !Unpark(c)) {
    Finish(c, ECONNABORTED, true);
    return;
  }
  AttachChild(c);
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
  char request[sizeof(int) + sizeof(sockaddr_storage)];
  std::memcpy(request, &type, sizeof(type));
  std::memcpy(request + sizeof(type), &addr, len);
  *error = EIO;
  ssize_t size = static_cast<ssize_t>(sizeof(type) + len);
  if (send(factory_.get(), request, static_cast<size_t>(size), MSG_NOSIGNAL) != size) return {};
  int err = 0, fd = -1;
  if (ReceiveFd(factory_.get(), &err, sizeof(err), &fd) != 0) return {};
  UniqueFd socket(fd);
  *error = err;
  if (err != 0) return {};
  return socket;
}

// Completes a parked connect without ever taking the child's socket out of SYN_SENT: a socket
// bound to the park address connects to the child's socket, whose own SYN is still
// outstanding (a simultaneous open, RFC 793): it goes SYN_RECV, then ESTABLISHED, and poll()
// reports it writable with SO_ERROR 0; no error or closed state is ever visible to the child.
// That socket is the relay's inner end.
bool Egress::ConnectParked(Connection& c) {
  sockaddr_storage local, park;
  socklen_t local_len, park_len;
  if (!ParkedEnds(c, &local, &local_len, &park, &park_len)) return false;
  UniqueFd peer = ParkPeer(park, park_len);
  if (!peer) return false;
  int rc = connect(peer.get(), reinterpret_cast<sockaddr*>(&local), local_len);
  if (rc != 0 && errno != EINPROGRESS) return false;
  c.parked = false;
  by_fd_.erase(c.child.get());
  Unwatch(c.child.get());
  c.child.Reset();
  c.inner = std::move(peer);
  StartRelay(c);
  return true;
}

// The two ends of a parked connect as the packets between them carry them: the child's
// socket's local address and the park listener's.
bool Egress::ParkedEnds(const Connection& c, sockaddr_storage* local, socklen_t* local_len,
                        sockaddr_storage* park, socklen_t* park_len) const {
  *local = {};
  *local_len = sizeof(*local);
  if (getsockname(c.child.get(), reinterpret_cast<sockaddr*>(local), local_len) != 0) {
    return false;
  }
  // An IPv6 socket parked on the IPv4 listener (mapped): its peer speaks IPv4.
  *park = c.park;
  *park_len = c.park_len;
  if (park->ss_family == AF_INET6) {
    auto inet = ParseInetSockaddr(park, *park_len);
    auto mine = ParseInetSockaddr(local, *local_len);
    if (inet && !inet->ip.v6 && mine && !mine->ip.v6) {
      *park_len = ToSockaddr(inet->ip, inet->port, park);
      *local_len = ToSockaddr(mine->ip, mine->port, local);
    }
  }
  return true;
}

// Fails a parked connect with `error` without ever taking the child's socket out of SYN_SENT,
// so that nothing but the error is visible to the child, whichever thread polls it: the
// kernel is handed what a refusing destination (or a router) would have sent. Its SYN's
// sequence number is read in repair mode; then a raw socket in its network namespace sends
//   ECONNREFUSED: an RST|ACK acknowledging the SYN, from the park address (in SYN_SENT
//     tcp_reset() sets ECONNREFUSED before the socket closes, and wakes its pollers after);
//   an unreachable error: an ICMP (ICMPv6) destination unreachable quoting the SYN, whose
//     code tcp_v4_err (tcp_v6_err) turns into that error, set before the socket closes.
// (Replaying a packet is simpler than any alternative that is exact: every other way to end
// a SYN_SENT socket from outside, a disconnect or a shutdown, passes through a state the
// child can observe.) False when this cannot be done (no CAP_NET_ADMIN or CAP_NET_RAW in
// that namespace, as in broker-only mode without root, or no such code): the caller falls back
// to a disconnect.
bool Egress::FailParked(Connection& c, int error) {
  sockaddr_storage local, park;
  socklen_t local_len, park_len;
  if (!ParkedEnds(c, &local, &local_len, &park, &park_len)) return false;
  int family = local.ss_family;
  int code = error == ECONNREFUSED ? -1 : UnreachableCode(family, error);
  if (error != ECONNREFUSED && code < 0) return false;
  int raw = RawSocket(family);
  if (raw < 0) return false;
  std::optional<uint32_t> next = SendSequence(c.child.get());
  if (!next) return false;
  std::string packet;
  if (error == ECONNREFUSED) {
    packet =
        IpPacket(park, local, IPPROTO_TCP, TcpHeader(park, local, 0, *next, TH_RST | TH_ACK), 16);
  } else {
    // The SYN as sent: its IP header and the first 8 bytes of its TCP header (the ports and
    // the sequence number the kernel checks).
    std::string syn = IpPacket(local, park, IPPROTO_TCP,
                               TcpHeader(local, park, *next - 1, 0, TH_SYN).substr(0, 8), {});
    std::string icmp(8, '\0');
    icmp[0] =
        static_cast<char>(family == AF_INET ? int{ICMP_DEST_UNREACH} : int{ICMP6_DST_UNREACH});
    icmp[1] = static_cast<char>(code);
    int protocol = family == AF_INET ? int{IPPROTO_ICMP} : int{IPPROTO_ICMPV6};
    packet = IpPacket(park, local, static_cast<uint8_t>(protocol), icmp + syn, 2);
  }
  sockaddr_storage to = local;
  if (family == AF_INET) {
    reinterpret_cast<sockaddr_in&>(to).sin_port = 0;
  } else {
    reinterpret_cast<sockaddr_in6&>(to).sin6_port = 0;
  }
  return sendto(raw, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&to),
                local_len) == static_cast<ssize_t>(packet.size());
}

// A raw socket (IPPROTO_RAW: it sends whole IP packets and receives nothing) in the child's
// network namespace, made once per family: by the factory helper with namespaces, else here
// (with CAP_NET_RAW only). -1 when there is none.
int Egress::RawSocket(int family) {
  Raw& raw = family == AF_INET ? raw_v4_ : raw_v6_;
  if (!raw.tried) {
    raw.tried = true;
    if (config_.namespaces) {
      sockaddr_storage addr{};
      addr.ss_family = static_cast<sa_family_t>(family);
      int unused = 0;
      raw.fd = FactorySocket(SOCK_RAW, addr, sizeof(addr.ss_family), &unused);
    } else {
      raw.fd = UniqueFd(socket(family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW));
    }
  }
  return raw.fd ? raw.fd.get() : -1;
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
    while (true) {
      int type = 0;
      sockaddr_storage addr{};
      char request[sizeof(type) + sizeof(addr)];
      ssize_t n = recv(3, request, sizeof(request), 0);
      if (n <= static_cast<ssize_t>(sizeof(type))) _exit(0);
      std::memcpy(&type, request, sizeof(type));
      std::memcpy(&addr, request + sizeof(type), static_cast<size_t>(n) - sizeof(type));
      auto len = static_cast<socklen_t>(static_cast<size_t>(n) - sizeof(type));
      int fd = type == SOCK_RAW     ? socket(addr.ss_family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW)
               : type == SOCK_DGRAM ? DatagramRelaySocket(addr, len)
                                    : BoundSocket(addr, len);
      int err = fd < 0 ? errno : 0;
      SendFd(3, &err, sizeof(err), fd);
      if (fd >= 0) close(fd);
    }
  }
  close(pair[1]);
  factory_ = UniqueFd(pair[0]);
  factory_pid_ = pid;
}

// A non-blocking connect: the child's socket is connected to a park listener, where it stays
// in SYN_SENT (poll: not writable, SO_ERROR 0) while the broker connects, and the call is
// answered EINPROGRESS at once. Without park sockets the child is attached to the relay at
// once, and a failure of the destination shows as a reset.
void Egress::Park(Connection& c) {
  const sockaddr_storage* park = nullptr;
  socklen_t len = LoopbackFor(SocketOption(c.child.get(), SOL_SOCKET, SO_DOMAIN), park_, &park);
  int rc = len > 0 ? connect(c.child.get(), reinterpret_cast<const sockaddr*>(park), len) : 0;
  if (len > 0 && rc != 0 && errno == EINPROGRESS) {
    c.parked = true;
    c.park = *park;
    c.park_len = len;
    c.answered = true;
    if (!unotify_.Send(c.notification, Response{false, EINPROGRESS})) {
      Finish(c, EINTR, true);
      return;
    }
    by_fd_[c.child.get()] = c.id;
    Watch(c.child.get(), EPOLLERR | EPOLLHUP, &Egress::OnParked);
    return;
  }
  AttachChild(c);
}

// Takes the child's socket off the park listener (a disconnect, whose ECONNRESET is read
// back at once), ready to be connected again. Between the two the child could observe the
// socket closed: a window of two syscalls.
bool Egress::Unpark(Connection& c) {
  if (!c.parked) return true;
  c.parked = false;
  by_fd_.erase(c.child.get());
  Unwatch(c.child.get());
  sockaddr unspec{};
  unspec.sa_family = AF_UNSPEC;
  if (connect(c.child.get(), &unspec, sizeof(unspec)) != 0) return false;
  SocketOption(c.child.get(), SOL_SOCKET, SO_ERROR);
  return true;
}

// The parked socket failed on its own: its SYNs timed out (the child's TCP_SYNCNT or
// TCP_USER_TIMEOUT), or the child disconnected it. Its error stays for the child to read.
void Egress::OnParked(int fd, uint32_t) {
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  auto conn = connections_.find(it->second);
  if (conn == connections_.end()) return;
  Connection& c = *conn->second;
  c.parked = false;
  by_fd_.erase(fd);
  Unwatch(fd);
  RememberFailedConnect(c.inode);
  Finish(c, ETIMEDOUT, true);
}

void Egress::RememberFailedConnect(ino_t inode) {
  failed_connects_.insert(inode);
  if (failed_connects_.size() > kMaxRecordedAddresses)
    failed_connects_.erase(failed_connects_.begin());
}

// Connects the child's own socket object to the relay listener; the accepted end is matched
// to this connection by the child socket's local address.
void Egress::AttachChild(Connection& c) {
  if (!c.child) return;
  if (!c.answered && !unotify_.IdValid(c.notification)) {  // interrupted or killed meanwhile
    Finish(c, EINTR, true);
    return;
  }
  const sockaddr_storage* relay = nullptr;
  socklen_t relay_len =
      LoopbackFor(SocketOption(c.child.get(), SOL_SOCKET, SO_DOMAIN), relay_, &relay);
  int flags = SetNonBlocking(c.child.get());
  int rc = relay_len > 0
               ? connect(c.child.get(), reinterpret_cast<const sockaddr*>(relay), relay_len)
               : (errno = ECONNREFUSED, -1);
  int err = rc == 0 ? 0 : errno;
  sockaddr_storage local{};
  socklen_t local_len = sizeof(local);
  getsockname(c.child.get(), reinterpret_cast<sockaddr*>(&local), &local_len);
  if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(c.child.get(), F_SETFL, flags);
  c.child.Reset();
  if (rc != 0 && err != EINPROGRESS) {
    if (!c.answered) unotify_.Send(c.notification, Response{false, err});
    c.answered = true;
    Finish(c, err, true);
    return;
  }
  c.child_address = AddressKey(local, local_len);
  by_child_address_[c.child_address] = c.id;
  // Non-blocking: answered now, as the kernel would; blocking: once the relay accepted it.
  if (c.nonblocking && !c.answered) {
    c.answered = true;
    if (!unotify_.Send(c.notification, Response{false, EINPROGRESS})) Finish(c, EINTR, true);
  }
}

void Egress::OnAccept(int listener, uint32_t) {
  while (true) {
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    UniqueFd fd(
        accept4(listener, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;
    auto it = by_child_address_.find(AddressKey(peer, len));
    if (it == by_child_address_.end()) {
      ResetAndClose(fd);  // nobody asked for it: a direct connection to the relay
      continue;
    }
    uint64_t id = it->second;
    by_child_address_.erase(it);
    auto conn = connections_.find(id);
    if (conn == connections_.end()) continue;
    Connection& c = *conn->second;
    c.inner = std::move(fd);
    if (!c.answered) {
      c.answered = true;
      if (!unotify_.Send(c.notification, Response{false, 0})) {
        Finish(c, EINTR, true);
        continue;
      }
    }
    if (c.upstream_failed) {
      Finish(c, ECONNRESET, true);
    } else if (c.upstream_connected) {
      StartRelay(c);
    }
  }
}

void Egress::StartRelay(Connection& c) {
  if (c.relaying || !c.inner || !c.upstream_connected) return;
  for (Pipe* p : {&c.up, &c.down}) {
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      Finish(c, errno, true);
      return;
    }
    p->r = UniqueFd(fds[0]);
    p->w = UniqueFd(fds[1]);
    fcntl(p->w.get(), F_SETPIPE_SZ, kPipeSize);
  }
  c.relaying = true;
  by_fd_[c.inner.get()] = c.id;
  Watch(c.inner.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &Egress::OnRelay);
  Watch(c.upstream.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &Egress::OnRelay);
  Pump(c);
}

void Egress::OnRelay(int fd, uint32_t) {
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  auto conn = connections_.find(it->second);
  if (conn != connections_.end()) Pump(*conn->second);
}

void Egress::OnKick(int, uint32_t) {
  uint64_t value;
  (void)!read(kick_.get(), &value, sizeof(value));
  std::set<uint64_t> ids;
  ids.swap(more_);
  for (uint64_t id : ids) {
    auto conn = connections_.find(id);
    if (conn != connections_.end()) Pump(*conn->second);
  }
}

// Moves bytes both ways until the sockets would block or the turn's budget is spent. Counted
// where they leave gander: bytes_out when written to the destination, bytes_in when read from
// it.
void Egress::Pump(Connection& c) {
  bool out_of_budget = false;
  for (bool up : {true, false}) {
    int src = up ? c.inner.get() : c.upstream.get();
    int dst = up ? c.upstream.get() : c.inner.get();
    Pipe& p = up ? c.up : c.down;
    size_t budget = kTurnBudget;
    while (true) {
      if (p.pending > 0) {
        ssize_t n =
            splice(p.r.get(), nullptr, dst, nullptr, p.pending, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
        if (n > 0) {
          p.pending -= static_cast<size_t>(n);
          if (up) c.bytes_out += static_cast<uint64_t>(n);
          continue;
        }
        if (n < 0 && errno == EAGAIN) break;
        // The receiving side is gone: the sender gets a reset.
        Finish(c, n < 0 ? errno : EPIPE, true);
        return;
      }
      if (p.eof) {
        if (!p.shut) {
          shutdown(dst, SHUT_WR);
          p.shut = true;
        }
        break;
      }
      if (budget == 0) {
        out_of_budget = true;
        break;
      }
      ssize_t n = splice(src, nullptr, p.w.get(), nullptr, std::min(budget, kPipeSize),
                         SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
      if (n > 0) {
        p.pending += static_cast<size_t>(n);
        budget -= std::min(budget, static_cast<size_t>(n));
        if (!up) c.bytes_in += static_cast<uint64_t>(n);
        continue;
      }
      if (n == 0) {
        p.eof = true;
        continue;
      }
      if (errno == EAGAIN) break;
      Finish(c, errno, true);
      return;
    }
  }
  if (c.up.shut && c.down.shut) {
    Finish(c, 0, false);
    return;
  }
  if (out_of_budget) {
    more_.insert(c.id);
    Kick();
  }
}

void Egress::Finish(Connection& c, int error, bool reset) {
  if (c.parked) {  // left parked: its own SYN_SENT ends it for the child
    by_fd_.erase(c.child.get());
    Unwatch(c.child.get());
  }
  if (!c.answered) {
    unotify_.Send(c.notification, Response{false, error ? error : ECONNABORTED});
    c.answered = true;
  }
  Event e = c.base;
  e.time_ns = WallClockNowNs();
  NetworkEvent net;
  net.host = c.host;
  net.ip = c.dest.ip.ToString();
  net.port = c.dest.port;
  net.transport = "tcp";
  net.result = c.verdict;
  net.error = error;
  net.syscall = "connect";
  net.rule = c.rule;
  net.bytes_out = c.bytes_out;
  net.bytes_in = c.bytes_in;
  net.duration_ns = MonotonicNs() - c.started_ns;
  e.payload = std::move(net);
  queue_.Push(std::move(e));

  for (UniqueFd* fd : {&c.inner, &c.upstream}) {
    if (!*fd) continue;
    by_fd_.erase(fd->get());
    Unwatch(fd->get());
    if (reset) {
      ResetAndClose(*fd);
    } else {
      fd->Reset();
    }
  }
  if (!c.child_address.empty()) by_child_address_.erase(c.child_address);
  auto inode = by_inode_.find(c.inode);
  if (inode != by_inode_.end() && inode->second == c.id) by_inode_.erase(inode);
  more_.erase(c.id);
  connections_.erase(c.id);  // c is gone
}

// ---- UDP relay ----

int Egress::EnsureUdpRelay(const Event& base, std::string_view syscall, const InetAddress& dest,
                           const NetDecision& decision) {
  std::string key = dest.ip.ToString() + "|" + std::to_string(dest.port);
  if (udp_relays_.count(key)) return 0;
  sockaddr_storage addr{};
  socklen_t len = ToSockaddr(dest.ip, dest.port, &addr);
  int error = 0;
  UniqueFd inner = FactorySocket(SOCK_DGRAM, addr, len, &error);
  if (!inner) return error ? error : EIO;
  auto relay = std::make_unique<UdpRelay>();
  relay->base = base;
  relay->syscall = syscall;
  CountForToolCall(base);
  relay->dest = dest;
  std::vector<std::string> names = NamesOf(dest.ip);
  if (!names.empty()) relay->host = names.front();
  relay->rule = decision.rule;
  relay->verdict = decision.would_deny ? Verdict::kWouldDeny : Verdict::kAllowed;
  relay->inner = std::move(inner);
  udp_by_fd_[relay->inner.get()] = relay.get();
  Watch(relay->inner.get(), EPOLLIN, &Egress::OnUdpInner);
  udp_relays_[key] = std::move(relay);
  return 0;
}

// Datagrams from child sockets to a relay: each goes on from the flow's own socket.
void Egress::OnUdpInner(int fd, uint32_t) {
  auto it = udp_by_fd_.find(fd);
  if (it == udp_by_fd_.end()) return;
  UdpRelay& relay = *it->second;
  static char buffer[kMaxDatagram];
  for (int i = 0; i < kUdpTurnDatagrams; ++i) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    ssize_t n = recvfrom(fd, buffer, sizeof(buffer), MSG_DONTWAIT,
                         reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    std::string key = AddressKey(from, from_len);
    auto flow = relay.flows.find(key);
    if (flow == relay.flows.end()) {
      while (udp_flows_ >= std::max<size_t>(config_.max_udp_flows, 1) && EvictUdpFlow()) {
      }
      auto made = std::make_unique<UdpFlow>();
      made->child = from;
      made->child_len = from_len;
      made->started_ns = MonotonicNs();
      sockaddr_storage dest{};
      socklen_t dest_len = ToSockaddr(relay.dest.ip, relay.dest.port, &dest);
      UniqueFd up(socket(dest.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!up || connect(up.get(), reinterpret_cast<sockaddr*>(&dest), dest_len) != 0) {
        // No socket for the flow (out of fds, no route): the datagram is dropped, on record.
        int error = errno;
        made->dropped = 1;
        ++stats_.udp_dropped;
        Event e = UdpFlowEvent(relay, *made, "error");
        std::get<NetworkEvent>(e.payload).error = error;
        queue_.Push(std::move(e));
        continue;
      }
      made->upstream = std::move(up);
      udp_by_fd_[made->upstream.get()] = &relay;
      Watch(made->upstream.get(), EPOLLIN, &Egress::OnUdpUpstream);
      flow = relay.flows.emplace(key, std::move(made)).first;
      ++udp_flows_;
      ++stats_.udp_flows;
      if (!udp_timer_armed_ && udp_timer_) {
        // Checked every quarter of the idle time: a flow ends within 1.25 times of it.
        int64_t ns = std::max<int64_t>(config_.udp_idle.count() * 1000000 / 4, 1000000);
        itimerspec every{};
        every.it_interval = {static_cast<time_t>(ns / 1000000000),
                             static_cast<long>(ns % 1000000000)};
        every.it_value = every.it_interval;
        udp_timer_armed_ = timerfd_settime(udp_timer_.get(), 0, &every, nullptr) == 0;
      }
    }
    UdpFlow& f = *flow->second;
    f.last_ns = MonotonicNs();
    ssize_t sent = send(f.upstream.get(), buffer, static_cast<size_t>(n), MSG_DONTWAIT);
    // A connected UDP socket reports an earlier ICMP error on the next send, once.
    if (sent < 0 && errno == ECONNREFUSED) {
      sent = send(f.upstream.get(), buffer, static_cast<size_t>(n), MSG_DONTWAIT);
    }
    if (sent == n) {
      ++f.datagrams_out;
      f.bytes_out += static_cast<uint64_t>(n);
    } else {
      ++f.dropped;  // the host's socket buffer full, or an error the child cannot see
      ++stats_.udp_dropped;
    }
  }
}

// Replies from a destination: back to the child socket, from the relay (the address the child
// sent to).
void Egress::OnUdpUpstream(int fd, uint32_t) {
  auto it = udp_by_fd_.find(fd);
  if (it == udp_by_fd_.end()) return;
  UdpRelay& relay = *it->second;
  UdpFlow* flow = nullptr;
  for (auto& [key, f] : relay.flows) {
    if (f->upstream.get() == fd) flow = f.get();
  }
  if (!flow) return;
  static char buffer[kMaxDatagram];
  for (int i = 0; i < kUdpTurnDatagrams; ++i) {
    ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == ECONNREFUSED) continue;  // an ICMP error: nothing to pass
      return;
    }
    flow->last_ns = MonotonicNs();
    ssize_t sent = sendto(relay.inner.get(), buffer, static_cast<size_t>(n), MSG_DONTWAIT,
                          reinterpret_cast<const sockaddr*>(&flow->child), flow->child_len);
    if (sent == n) {
      ++flow->datagrams_in;
      flow->bytes_in += static_cast<uint64_t>(n);
    } else {
      ++flow->dropped;  // the child's socket is gone, or its buffer full
      ++stats_.udp_dropped;
    }
  }
}

Event Egress::UdpFlowEvent(const UdpRelay& relay, const UdpFlow& f, std::string_view end) {
  Event e = relay.base;
  e.time_ns = WallClockNowNs();
  NetworkEvent net;
  net.host = relay.host;
  net.ip = relay.dest.ip.ToString();
  net.port = relay.dest.port;
  net.transport = "udp";
  net.result = relay.verdict;
  net.syscall = relay.syscall;
  net.rule = relay.rule;
  net.bytes_out = f.bytes_out;
  net.bytes_in = f.bytes_in;
  net.datagrams_out = f.datagrams_out;
  net.datagrams_in = f.datagrams_in;
  net.datagrams_dropped = f.dropped;
  net.end = end;
  net.duration_ns = MonotonicNs() - f.started_ns;
  e.payload = std::move(net);
  return e;
}

void Egress::FinishUdpFlow(UdpRelay& relay, const std::string& key, std::string_view end) {
  auto it = relay.flows.find(key);
  if (it == relay.flows.end()) return;
  UdpFlow& f = *it->second;
  OnUdpUpstream(f.upstream.get(), EPOLLIN);  // replies already here are delivered and counted
  queue_.Push(UdpFlowEvent(relay, f, end));
  udp_by_fd_.erase(f.upstream.get());
  Unwatch(f.upstream.get());
  relay.flows.erase(it);
  --udp_flows_;
}

bool Egress::EvictUdpFlow() {
  UdpRelay* oldest_relay = nullptr;
  const std::string* oldest_key = nullptr;
  int64_t oldest = INT64_MAX;
  for (auto& [dest, relay] : udp_relays_) {
    for (auto& [key, f] : relay->flows) {
      if (f->last_ns < oldest) {
        oldest = f->last_ns;
        oldest_relay = relay.get();
        oldest_key = &key;
      }
    }
  }
  if (!oldest_relay) return false;
  ++stats_.udp_evicted;
  FinishUdpFlow(*oldest_relay, std::string(*oldest_key), "evicted");
  return true;
}

void Egress::OnUdpTimer(int fd, uint32_t) {
  uint64_t expirations;
  (void)!read(fd, &expirations, sizeof(expirations));
  int64_t idle_before = MonotonicNs() - config_.udp_idle.count() * 1000000;
  std::vector<std::pair<UdpRelay*, std::string>> idle;
  for (auto& [dest, relay] : udp_relays_) {
    OnUdpInner(relay->inner.get(), EPOLLIN);  // what waits is activity, not idleness
    for (auto& [key, f] : relay->flows) {
      if (f->last_ns <= idle_before) idle.emplace_back(relay.get(), key);
    }
  }
  for (auto& [relay, key] : idle) {
    ++stats_.udp_idle;
    FinishUdpFlow(*relay, key, "idle");
  }
  if (udp_flows_ == 0 && udp_timer_armed_) {
    itimerspec off{};
    timerfd_settime(fd, 0, &off, nullptr);
    udp_timer_armed_ = false;
  }
}

// ---- DNS stub ----

// A DNS-over-TCP client of the stub (RFC 1035 4.2.2: each message after its 16-bit length).
struct Egress::DnsConnection {
  UniqueFd fd;
  std::string in, out;
  int lookups = 0;  // answers still to come from the resolver
  bool eof = false;
};

void Egress::OnDns(int fd, uint32_t) {
  while (true) {
    uint8_t buf[1500];
    DnsOrigin origin;
    origin.client_len = sizeof(origin.client);
    ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&origin.client),
                         &origin.client_len);
    if (n < 0) return;
    OnDnsQuery(buf, static_cast<size_t>(n), origin);
  }
}

void Egress::OnDnsAccept(int listener, uint32_t) {
  while (true) {
    UniqueFd fd(accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;
    if (dns_tcp_.size() >= kMaxDnsTcpConnections) continue;  // closed: the client retries
    if (!config_.namespaces) {
      // On host loopback anyone may connect: serve only the child sockets OnConnect attached.
      sockaddr_storage peer{};
      socklen_t len = sizeof(peer);
      if (getpeername(fd.get(), reinterpret_cast<sockaddr*>(&peer), &len) != 0 ||
          dns_clients_.erase(StubClientKey(peer, len)) == 0) {
        continue;
      }
    }
    uint64_t id = next_id_++;
    int raw = fd.get();
    auto conn = std::make_unique<DnsConnection>();
    conn->fd = std::move(fd);
    dns_tcp_[id] = std::move(conn);
    by_fd_[raw] = id;
    Watch(raw, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &Egress::OnDnsTcp);
    OnDnsTcp(raw, 0);
  }
}

void Egress::OnDnsTcp(int fd, uint32_t) {
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  uint64_t id = it->second;
  auto conn = dns_tcp_.find(id);
  if (conn == dns_tcp_.end()) return;
  DnsConnection& c = *conn->second;
  while (!c.eof && c.in.size() < kMaxDnsTcpBuffer) {
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EAGAIN) {
      c.eof = true;
    } else {
      break;
    }
  }
  while (c.in.size() >= 2) {
    size_t len = static_cast<uint8_t>(c.in[0]) << 8 | static_cast<uint8_t>(c.in[1]);
    if (c.in.size() < 2 + len) break;
    std::string query = c.in.substr(2, len);
    c.in.erase(0, 2 + len);
    DnsOrigin origin;
    origin.tcp = id;
    OnDnsQuery(reinterpret_cast<const uint8_t*>(query.data()), query.size(), origin);
    if (!dns_tcp_.count(id)) return;  // closed while answering
  }
  FlushDnsTcp(id);
}

// Writes what is pending; closes the connection once the client is done and answered, or
// when it sends more than a message's worth without reading.
void Egress::FlushDnsTcp(uint64_t id) {
  auto conn = dns_tcp_.find(id);
  if (conn == dns_tcp_.end()) return;
  DnsConnection& c = *conn->second;
  while (!c.out.empty()) {
    ssize_t n = send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n <= 0) break;
    c.out.erase(0, static_cast<size_t>(n));
  }
  bool done = c.eof && c.lookups == 0 && c.out.empty();
  bool stuck = c.in.size() >= kMaxDnsTcpBuffer || c.out.size() > kMaxDnsTcpBuffer;
  if (done || stuck) {
    by_fd_.erase(c.fd.get());
    Unwatch(c.fd.get());
    dns_tcp_.erase(conn);
  }
}

void Egress::DnsReply(const DnsOrigin& origin, const std::string& reply) {
  if (origin.tcp == 0) {
    sendto(config_.sockets.dns_udp.get(), reply.data(), reply.size(), 0,
           reinterpret_cast<const sockaddr*>(&origin.client), origin.client_len);
    return;
  }
  auto conn = dns_tcp_.find(origin.tcp);
  if (conn == dns_tcp_.end()) return;
  char len[2] = {static_cast<char>(reply.size() >> 8), static_cast<char>(reply.size() & 0xff)};
  conn->second->out.append(len, 2);
  conn->second->out += reply;
}

// One query, from UDP or TCP: refused unless the policy allows the name, else answered from a
// host lookup (on a thread; OnResolved replies).
void Egress::OnDnsQuery(const uint8_t* buf, size_t n, const DnsOrigin& origin) {
  ++stats_.dns_queries;
  std::optional<dns::Question> q = dns::ParseQuery(buf, n);
  if (!q) {
    if (n >= 12) {
      dns::Question bare;
      std::memcpy(&bare.id, buf, 2);
      bare.question_end = 12;
      DnsReply(origin, dns::BuildResponse(buf, bare, dns::kFormErr, {}));
    }
    return;
  }
  bool allowed = q->qclass == 1 && config_.matcher.MayResolve(q->name);
  bool would_deny = allowed && config_.trial && !config_.trial->MayResolve(q->name);
  Event e;
  e.time_ns = WallClockNowNs();
  e.extension = config_.extension;
  NetworkEvent net;
  net.host = q->name.substr(0, 253);
  net.port = 53;
  net.transport = "dns";
  net.result = would_deny ? Verdict::kWouldDeny : allowed ? Verdict::kAllowed : Verdict::kDenied;
  e.payload = std::move(net);
  if (config_.tool_calls) {
    e.tool_call = config_.tool_calls->Slot();
    config_.tool_calls->Attribute(e);
  }
  queue_.Push(std::move(e));
  if (!allowed) {
    // Refused without asking anyone: nothing the query carries leaves the sandbox.
    ++stats_.dns_refused;
    DnsReply(origin, dns::BuildResponse(buf, *q, dns::kRefused, {}));
    return;
  }
  if (q->qtype != dns::kTypeA && q->qtype != dns::kTypeAAAA) {
    DnsReply(origin, dns::BuildResponse(buf, *q, dns::kNoError, {}));  // no such records
    return;
  }
  if (resolver_->in_flight >= kMaxLookupsInFlight) {
    DnsReply(origin, dns::BuildResponse(buf, *q, dns::kServFail, {}));
    return;
  }
  ++resolver_->in_flight;
  if (origin.tcp) ++dns_tcp_[origin.tcp]->lookups;
  Resolver::Job job;
  job.origin = origin;
  job.query.assign(reinterpret_cast<const char*>(buf), n);
  job.question = *q;
  std::thread([resolver = resolver_, job = std::move(job)]() mutable {
    addrinfo hints{};
    hints.ai_family = job.question.qtype == dns::kTypeA ? AF_INET : AF_INET6;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* result = nullptr;
    job.error = getaddrinfo(job.question.name.c_str(), nullptr, &hints, &result);
    for (addrinfo* a = result; a; a = a->ai_next) {
      sockaddr_storage ss{};
      std::memcpy(&ss, a->ai_addr, std::min<size_t>(a->ai_addrlen, sizeof(ss)));
      if (auto inet = ParseInetSockaddr(&ss, a->ai_addrlen)) {
        if (inet->ip.v6 == (job.question.qtype == dns::kTypeAAAA) &&
            std::find(job.addresses.begin(), job.addresses.end(), inet->ip) ==
                job.addresses.end()) {
          job.addresses.push_back(inet->ip);
        }
      }
    }
    if (result) freeaddrinfo(result);
    std::lock_guard<std::mutex> lock(resolver->mutex);
    resolver->done.push_back(std::move(job));
    uint64_t one = 1;
    (void)!write(resolver->event.get(), &one, sizeof(one));
  }).detach();
}

void Egress::OnResolved(int, uint32_t) {
  uint64_t value;
  (void)!read(resolver_->event.get(), &value, sizeof(value));
  std::deque<Resolver::Job> done;
  {
    std::lock_guard<std::mutex> lock(resolver_->mutex);
    done.swap(resolver_->done);
  }
  for (Resolver::Job& job : done) {
    --resolver_->in_flight;
    int rcode = dns::kNoError;
    if (job.error == EAI_NONAME)
      rcode = dns::kNxDomain;
    else if (job.error == EAI_NODATA || job.error == EAI_ADDRFAMILY)
      rcode = dns::kNoError;
    else if (job.error != 0)
      rcode = dns::kServFail;
    for (const policies::IpAddress& ip : job.addresses) {
      if (names_.size() >= kMaxRecordedAddresses && !names_.count(ip)) break;
      names_[ip].insert(job.question.name);
    }
    DnsReply(job.origin, dns::BuildResponse(reinterpret_cast<const uint8_t*>(job.query.data()),
                                            job.question, rcode, job.addresses));
    if (job.origin.tcp) {
      auto conn = dns_tcp_.find(job.origin.tcp);
      if (conn == dns_tcp_.end()) continue;
      --conn->second->lookups;
      FlushDnsTcp(job.origin.tcp);
    }
  }
}

}  // namespace gander::monitor
