// The raw packets gander hands the kernel to fail a parked connect without the child ever
// seeing another state (Egress::FailParked, raw_reply.cc): an RST|ACK for ECONNREFUSED, an ICMP
// or ICMPv6 destination unreachable for the other errors. The builders are pure (tested in
// tests/unit/network/raw_reply_test.cc); SendSequence reads a socket in repair mode.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace gander::network {

// The bytes of a trivially copyable value, as a packet carries them.
template <typename T>
std::string_view Bytes(const T& value) {
  return {reinterpret_cast<const char*>(&value), sizeof(value)};
}

// The Internet checksum (RFC 1071) of `parts`, laid end to end (each of even size but the
// last).
// The Internet checksum (RFC 1071) of `parts`, laid end to end (each of even size but the
// last). Host order.
uint16_t Checksum(std::initializer_list<std::string_view> parts);

// An IP packet (the header's family from `from`) from `from` to `to`, carrying `payload` of
// `protocol`; when `checksum_at` is set, the payload's checksum is stored there (network
// order), computed with the pseudo-header for TCP and ICMPv6, without it for ICMP.
std::string IpPacket(const sockaddr_storage& from, const sockaddr_storage& to, uint8_t protocol,
                     std::string payload, std::optional<size_t> checksum_at);

// The port of an IPv4 or IPv6 socket address, network order.
uint16_t PortOf(const sockaddr_storage& a);

// A TCP header from `from` to `to` (network order ports) with `seq`, `ack` and `flags`.
std::string TcpHeader(const sockaddr_storage& from, const sockaddr_storage& to, uint32_t seq,
                      uint32_t ack, uint8_t flags);

// The ICMP (ICMPv6) destination-unreachable code the kernel turns into `error` for a TCP
// socket in SYN_SENT (icmp_err_convert, icmpv6_err_convert); -1 when there is none.
int UnreachableCode(int family, int error);

// The next sequence number of a TCP socket's send queue (in SYN_SENT: its SYN's + 1), read
// in repair mode (CAP_NET_ADMIN in the socket's network namespace). Leaving repair mode
// clears SO_REUSEADDR: it is put back.
std::optional<uint32_t> SendSequence(int fd);

}  // namespace gander::network
