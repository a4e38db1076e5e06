// The UDP relay of the egress broker (egress.h): a relay socket per allowed destination in the
// sandbox's network namespace, a flow per child socket, and the flow table's bounds (idle
// flows end after `udp_idle`, the least recently used one makes room past `max_udp_flows`).
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "network/egress.h"
#include "network/egress_internal.h"
#include "network/udp_flow_table.h"

namespace gander::network {

int Egress::EnsureUdpRelay(const events::Event& base, std::string_view syscall,
                           const InetAddress& dest, const NetDecision& decision) {
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
  relay->verdict = decision.would_deny ? events::Verdict::kWouldDeny : events::Verdict::kAllowed;
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
      while (UdpTableFull(udp_flows_, config_.max_udp_flows) && EvictUdpFlow()) {
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
        events::Event e = UdpFlowEvent(relay, *made, "error");
        std::get<events::NetworkEvent>(e.payload).error = error;
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

events::Event Egress::UdpFlowEvent(const UdpRelay& relay, const UdpFlow& f, std::string_view end) {
  events::Event e = relay.base;
  e.time_ns = events::WallClockNowNs();
  events::NetworkEvent net =
      DestinationEvent(relay.dest, relay.host, "udp", relay.syscall, relay.verdict, relay.rule);
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
  auto [oldest_relay, oldest_key] = LeastRecentlyUsedFlow(udp_relays_);
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
    for (std::string& key : IdleFlows(relay->flows, idle_before)) {
      idle.emplace_back(relay.get(), std::move(key));
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

}  // namespace gander::network
