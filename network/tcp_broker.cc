// The TCP side of the egress broker (egress.h): an allowed connect is made by gander from its
// own network namespace while the child's socket waits parked in SYN_SENT, then the child's
// socket is attached to the relay listener and bytes are spliced both ways and counted.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "network/egress.h"
#include "network/egress_internal.h"

namespace gander::network {

// connect() on the sandbox's own loopback (or AF_UNSPEC), done by the supervisor on the
// child's socket with the copied address: the child's memory is not read again.
std::optional<monitor::Response> Egress::ConnectLocal(const monitor::Notification& n, UniqueFd sock,
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
  return monitor::Response{false, err};
}

void Egress::OnLocalConnected(int fd, uint32_t) {
  auto it = local_.find(fd);
  if (it == local_.end()) return;
  int err = SocketOption(fd, SOL_SOCKET, SO_ERROR);
  fcntl(fd, F_SETFL, it->second.flags);
  unotify_.Send(it->second.notification, monitor::Response{false, err < 0 ? EIO : err});
  Unwatch(fd);
  local_.erase(it);
}

std::optional<monitor::Response> Egress::StartBroker(const monitor::Notification& n,
                                                     const events::Event& base, UniqueFd sock,
                                                     const InetAddress& dest,
                                                     const NetDecision& decision,
                                                     std::vector<events::Event>& events) {
  auto c = std::make_unique<Connection>();
  c->id = next_id_++;
  c->notification = n.id;
  c->base = base;
  c->dest = dest;
  CountForToolCall(base);
  std::vector<std::string> names = NamesOf(dest.ip);
  if (!names.empty()) c->host = names.front();
  c->rule = decision.rule;
  c->verdict = decision.would_deny ? events::Verdict::kWouldDeny : events::Verdict::kAllowed;
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
    events::Event e = base;
    events::NetworkEvent net;
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
    return monitor::Response{false, err};
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
      unotify_.Send(c.notification, monitor::Response{false, error});
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
    if (!unotify_.Send(c.notification, monitor::Response{false, EINPROGRESS})) {
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
    if (!c.answered) unotify_.Send(c.notification, monitor::Response{false, err});
    c.answered = true;
    Finish(c, err, true);
    return;
  }
  c.child_address = AddressKey(local, local_len);
  by_child_address_[c.child_address] = c.id;
  // Non-blocking: answered now, as the kernel would; blocking: once the relay accepted it.
  if (c.nonblocking && !c.answered) {
    c.answered = true;
    if (!unotify_.Send(c.notification, monitor::Response{false, EINPROGRESS}))
      Finish(c, EINTR, true);
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
      if (!unotify_.Send(c.notification, monitor::Response{false, 0})) {
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
    unotify_.Send(c.notification, monitor::Response{false, error ? error : ECONNABORTED});
    c.answered = true;
  }
  events::Event e = c.base;
  e.time_ns = events::WallClockNowNs();
  events::NetworkEvent net = DestinationEvent(c.dest, c.host, "tcp", "connect", c.verdict, c.rule);
  net.error = error;
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

}  // namespace gander::network
