// The egress broker (egress.h): its poll loop, and the connect/send decisions carried out on
// the supervisor's own copy of the address. TCP: tcp_broker.cc; UDP: udp_relay.cc; DNS:
// dns_stub.cc; the helper that makes sockets in the sandbox's namespace: socket_factory.cc.
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
#include <utility>

#include "common/clock.h"
#include "common/fd_passing.h"
#include "network/egress_internal.h"

namespace gander::network {

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

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

events::NetworkEvent DestinationEvent(const InetAddress& dest, std::string host,
                                      std::string transport, std::string syscall,
                                      events::Verdict verdict, std::string rule) {
  events::NetworkEvent net;
  net.host = std::move(host);
  net.ip = dest.ip.ToString();
  net.port = dest.port;
  net.transport = std::move(transport);
  net.result = verdict;
  net.syscall = std::move(syscall);
  net.rule = std::move(rule);
  return net;
}

void ResetAndClose(UniqueFd& fd) {
  if (!fd) return;
  linger l{1, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  fd.Reset();
}

Egress::Egress(EgressConfig config, monitor::Unotify& unotify, monitor::TargetMemory& memory,
               events::BoundedEventQueue& queue)
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

EgressSockets Egress::TakeSockets() {
  EgressSockets& s = config_.sockets;
  for (const UniqueFd* fd : {&s.relay_v4, &s.relay_v6, &s.dns_udp, &s.dns_tcp}) {
    if (*fd) Unwatch(fd->get());
  }
  return std::move(s);
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
void Egress::CountForToolCall(const events::Event& base) {
  if (!config_.tool_calls) return;
  events::Event started = base;
  started.payload = events::NetworkEvent{};
  config_.tool_calls->Attribute(started);
}

events::Event Egress::Denied(const events::Event& base, std::string_view syscall,
                             const InetAddress& addr, std::string transport, const NetDecision& d) {
  ++stats_.denied;
  events::Event e = base;
  std::vector<std::string> names = NamesOf(addr.ip);
  events::NetworkEvent net =
      DestinationEvent(addr, names.empty() ? "" : names.front(), std::move(transport),
                       std::string(syscall), events::Verdict::kDenied, d.rule);
  net.error = d.error;
  e.payload = std::move(net);
  return e;
}

std::optional<monitor::Response> Egress::OnSyscall(const monitor::Notification& n,
                                                   std::string_view syscall,
                                                   const events::Event& base,
                                                   std::vector<events::Event>& events) {
  if (syscall == "connect") return OnConnect(n, base, events);
  return OnSend(n, syscall, base, events);
}

UniqueFd Egress::TakeSocket(const monitor::Notification& n, const events::Event& base, int fd,
                            int* error) {
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

std::optional<monitor::Response> Egress::OnConnect(const monitor::Notification& n,
                                                   const events::Event& base,
                                                   std::vector<events::Event>& events) {
  // addrlen is an int: the kernel reads 32 bits of the register, and so do we.
  const auto len = static_cast<socklen_t>(n.args[2] & 0xffffffffu);
  if (static_cast<int>(len) < 0 || len > sizeof(sockaddr_storage))
    return monitor::Response{false, EINVAL};
  sockaddr_storage copy{};
  if (len > 0 && !memory_.ReadBytes(n.pid, n.args[1], &copy, len))
    return monitor::Response{false, EFAULT};
  int family = SockaddrFamily(&copy, len);
  // The decision rests on the socket itself, never on the copied family alone: another
  // thread can rewrite the family after our copy, and a CONTINUE would make the kernel read
  // that new address (an inet one on an MPTCP socket, past the broker and Landlock).
  int error = 0;
  UniqueFd sock = TakeSocket(n, base, static_cast<int>(n.args[0]), &error);
  if (!sock) return monitor::Response{false, error};
  int domain = SocketOption(sock.get(), SOL_SOCKET, SO_DOMAIN);
  int type = SocketOption(sock.get(), SOL_SOCKET, SO_TYPE);
  if (domain != AF_INET && domain != AF_INET6) {
    if (domain < 0) return monitor::Response{false, ENOTSOCK};
    // A unix (or other non-inet) socket. With namespaces the kernel may read the address
    // again: whatever it reads, the mount view, Landlock's scoping and the empty network
    // namespace bound what it can reach (even if the fd number is swapped for an inet socket
    // meanwhile). Without them nothing would: socket() makes no such sockets there
    // (denied_syscalls), and a connect on one (a socketpair's) is refused.
    if (context_.namespaces) return monitor::Response{true, 0};
    return monitor::Response{false, EACCES};
  }
  if (family != AF_INET && family != AF_INET6 && family != AF_UNSPEC) {
    return monitor::Response{false, EAFNOSUPPORT};  // as tcp_v4_connect / udp's connect answer it
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
  if (!addr) return monitor::Response{false, EINVAL};
  if (domain == AF_INET && family == AF_INET6) return monitor::Response{false, EAFNOSUPPORT};
  if (domain == AF_INET6 && family == AF_INET && type == SOCK_STREAM) {
    return monitor::Response{false, EAFNOSUPPORT};
  }
  if (type == SOCK_STREAM) {
    auto pending = by_inode_.find(st.st_ino);
    if (pending != by_inode_.end() && connections_.count(pending->second)) {
      return monitor::Response{false, connections_[pending->second]->inner ? EISCONN : EALREADY};
    }
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    if (getpeername(sock.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) {
      return monitor::Response{false, EISCONN};
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
      return monitor::Response{false, d.error ? d.error : config_.deny_errno};
    case NetAction::kLocal:
      return ConnectLocal(n, std::move(sock), copy, len);
    case NetAction::kDnsStub: {
      const sockaddr_storage* stub = nullptr;
      socklen_t stub_len = LoopbackFor(domain, dns_stub_, &stub);
      if (stub_len == 0) return monitor::Response{false, config_.deny_errno};
      UniqueFd copy_for_key(fcntl(sock.get(), F_DUPFD_CLOEXEC, 0));
      std::optional<monitor::Response> r = ConnectLocal(n, std::move(sock), *stub, stub_len);
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
        return monitor::Response{false, err};
      }
      return ConnectLocal(n, std::move(sock), copy, len);
  }
  return monitor::Response{false, config_.deny_errno};
}

std::optional<monitor::Response> Egress::OnSend(const monitor::Notification& n,
                                                std::string_view syscall, const events::Event& base,
                                                std::vector<events::Event>& events) {
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
  if (!readable) return monitor::Response{false, EFAULT};
  std::vector<InetAddress> inet;
  for (const auto& [copy, len] : addresses) {
    if (auto a = ParseInetSockaddr(&copy, len)) inet.push_back(*a);
  }
  if (inet.empty()) return monitor::Response{true, 0};
  // Datagrams to the sandbox's own loopback need no look at the socket (unless a UDP rule
  // names that address: then it goes through the relay).
  if (context_.namespaces && std::all_of(inet.begin(), inet.end(), [&](const InetAddress& a) {
        policies::Destination udp{a.ip, a.port, {}, policies::Protocol::kUdp};
        return IsLocalAddress(a.ip) && !config_.matcher.Match(udp).allowed;
      })) {
    return monitor::Response{true, 0};
  }
  int error = 0;
  UniqueFd sock = TakeSocket(n, base, static_cast<int>(n.args[0]), &error);
  if (!sock) return monitor::Response{false, error};
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
      return monitor::Response{false, err};
    }
    if (trial == NetAction::kDeny) {
      events::Event e = Denied(base, syscall, a, "udp", d);
      --stats_.denied;
      std::get<events::NetworkEvent>(e.payload).result = events::Verdict::kWouldDeny;
      events.push_back(std::move(e));
    }
  }
  return monitor::Response{true, 0};
}

}  // namespace gander::network
