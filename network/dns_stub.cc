// The DNS stub of the egress broker (egress.h): answers the sandbox's queries over UDP and TCP
// from the policy's names only, looking allowed names up on the host on short-lived threads.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/clock.h"
#include "network/egress.h"
#include "network/egress_internal.h"

namespace gander::network {

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
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = config_.extension;
  events::NetworkEvent net;
  net.host = q->name.substr(0, 253);
  net.port = 53;
  net.transport = "dns";
  net.result = would_deny ? events::Verdict::kWouldDeny
               : allowed  ? events::Verdict::kAllowed
                          : events::Verdict::kDenied;
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

}  // namespace gander::network
