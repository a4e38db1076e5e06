#include "monitor/network_decision.h"

#include <netinet/in.h>

#include <cerrno>
#include <cstring>

namespace gander::monitor {

int SockaddrFamily(const void* data, size_t size) {
  sa_family_t family = AF_UNSPEC;
  if (size < sizeof(family)) return AF_UNSPEC;
  std::memcpy(&family, data, sizeof(family));
  return family;
}

std::optional<InetAddress> ParseInetSockaddr(const void* data, size_t size) {
  int family = SockaddrFamily(data, size);
  InetAddress out;
  out.family = family;
  if (family == AF_INET && size >= sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, data, sizeof(in));
    out.ip = policies::IpAddress::V4(reinterpret_cast<const uint8_t*>(&in.sin_addr));
    out.port = ntohs(in.sin_port);
    return out;
  }
  // The kernel accepts an AF_INET6 address without sin6_scope_id (SIN6_LEN_RFC2133, 24 bytes).
  if (family == AF_INET6 && size >= 24) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, data, std::min(size, sizeof(in6)));
    out.ip = policies::IpAddress::V6(in6.sin6_addr.s6_addr);
    out.port = ntohs(in6.sin6_port);
    return out;
  }
  return std::nullopt;
}

bool IsLocalAddress(const policies::IpAddress& ip) { return ip.IsLoopback() || ip.IsUnspecified(); }

namespace {

policies::MatchResult MatchAs(const policies::NetworkMatcher& matcher,
                              const policies::Destination& dest, int sock_type) {
  policies::Destination d = dest;
  d.protocol = sock_type == SOCK_STREAM ? policies::Protocol::kTcp : policies::Protocol::kUdp;
  return matcher.Match(d);
}

}  // namespace

NetDecision DecideConnect(const policies::NetworkMatcher& matcher,
                          const policies::Destination& dest, int sock_type,
                          const NetContext& context) {
  bool tcp = sock_type == SOCK_STREAM;
  bool udp = sock_type == SOCK_DGRAM && context.namespaces;
  policies::MatchResult match = MatchAs(matcher, dest, sock_type);
  if (match.allowed && tcp) return {NetAction::kBroker, 0, match.rule};
  if (match.allowed && udp) return {NetAction::kRelay, 0, match.rule};
  // Host loopback only when the policy names it; otherwise, with a network namespace, this
  // is the sandbox's own loopback (the extension talking to its children).
  if (IsLocalAddress(dest.ip) && context.namespaces) return {NetAction::kLocal, 0, ""};
  return {NetAction::kDeny, context.deny_errno, match.rule};
}

NetDecision DecideSend(const policies::NetworkMatcher& matcher, const policies::Destination& dest,
                       int sock_type, const NetContext& context) {
  // TCP ignores the address of sendto/sendmsg (MSG_FASTOPEN, which would use it, is refused
  // by the filter), so the connection decided at connect() is where the bytes go.
  if (sock_type == SOCK_STREAM) return {NetAction::kContinue, 0, ""};
  policies::MatchResult match = MatchAs(matcher, dest, sock_type);
  if (match.allowed && sock_type == SOCK_DGRAM && context.namespaces) {
    return {NetAction::kRelay, 0, match.rule};
  }
  // A datagram to the sandbox's own loopback: the empty namespace has no route anywhere else,
  // so a thread rewriting the address meanwhile reaches nothing more.
  if (context.namespaces && IsLocalAddress(dest.ip)) return {NetAction::kContinue, 0, ""};
  return {NetAction::kDeny, context.deny_errno, match.rule};
}

}  // namespace gander::monitor
