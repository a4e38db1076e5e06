// Failing a parked connect with a packet; see raw_reply.h.
#include "network/raw_reply.h"

#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "network/egress_internal.h"

namespace gander::network {

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

}  // namespace gander::network
