// The packets that fail a parked connect (network/raw_reply.h): checksums the kernel accepts,
// headers as the protocol lays them out, the error codes the kernel turns back into errnos.
#include "network/raw_reply.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace gander::network {
namespace {

std::string Hex(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

// A socket address of `family` (AF_INET or AF_INET6).
sockaddr_storage Addr(int family, const char* ip, uint16_t port) {
  sockaddr_storage ss{};
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_port = htons(port);
    inet_pton(AF_INET, ip, &in->sin_addr);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_port = htons(port);
    inet_pton(AF_INET6, ip, &in6->sin6_addr);
  }
  ss.ss_family = static_cast<sa_family_t>(family);
  return ss;
}
sockaddr_storage V4(const char* ip, uint16_t port) { return Addr(AF_INET, ip, port); }
sockaddr_storage V6(const char* ip, uint16_t port) { return Addr(AF_INET6, ip, port); }

uint16_t At16(const std::string& s, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(s[at]) << 8 | static_cast<uint8_t>(s[at + 1]));
}

TEST(Checksum, MatchesTheWorkedExampleOfRfc1071) {
  // RFC 1071 section 3: the one's complement sum of 00 01 f2 03 f4 f5 f6 f7 is ddf2.
  EXPECT_EQ(Checksum({Hex({0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7})}), 0xffff - 0xddf2);
}

TEST(Checksum, PartsLaidEndToEndSumAsOneBufferAndAnOddLastByteIsPadded) {
  std::string whole = Hex({0x45, 0x00, 0x12, 0x34, 0xab, 0xcd, 0x01});
  EXPECT_EQ(Checksum({whole.substr(0, 4), whole.substr(4)}), Checksum({whole}));
  EXPECT_EQ(Checksum({Hex({0x01})}), Checksum({Hex({0x01, 0x00})}));
  EXPECT_EQ(Checksum({""}), 0xffff);
}

TEST(Checksum, OfDataCarryingItsOwnChecksumIsZero) {
  std::string data = Hex({0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x9a, 0xbc});
  uint16_t sum = htons(Checksum({data}));
  std::memcpy(data.data() + 4, &sum, 2);
  EXPECT_EQ(Checksum({data}), 0);
}

TEST(IpPacket, Ipv4HeaderIsValidAndTheTcpChecksumCoversThePseudoHeader) {
  sockaddr_storage from = V4("127.0.0.1", 5555), to = V4("127.0.0.2", 80);
  std::string tcp = TcpHeader(from, to, 1000, 2000, TH_RST | TH_ACK);
  ASSERT_EQ(tcp.size(), sizeof(tcphdr));
  std::string packet = IpPacket(from, to, IPPROTO_TCP, tcp, 16);
  ASSERT_EQ(packet.size(), sizeof(iphdr) + sizeof(tcphdr));
  EXPECT_EQ(static_cast<uint8_t>(packet[0]), 0x45);  // version 4, 5 words
  EXPECT_EQ(At16(packet, 2), packet.size());         // total length
  EXPECT_EQ(static_cast<uint8_t>(packet[9]), IPPROTO_TCP);
  EXPECT_EQ(Checksum({packet.substr(0, sizeof(iphdr))}), 0) << "the IP header's checksum";
  EXPECT_EQ(std::memcmp(packet.data() + 12, "\x7f\x00\x00\x01\x7f\x00\x00\x02", 8), 0);
  // The TCP segment: ports, sequence numbers, flags, and its checksum over the pseudo-header.
  std::string segment = packet.substr(sizeof(iphdr));
  EXPECT_EQ(At16(segment, 0), 5555);
  EXPECT_EQ(At16(segment, 2), 80);
  EXPECT_EQ(ntohl(*reinterpret_cast<const uint32_t*>(segment.data() + 4)), 1000u);
  EXPECT_EQ(ntohl(*reinterpret_cast<const uint32_t*>(segment.data() + 8)), 2000u);
  EXPECT_EQ(static_cast<uint8_t>(segment[13]), TH_RST | TH_ACK);
  std::string pseudo = packet.substr(12, 8) + Hex({0, IPPROTO_TCP, 0, 20});
  EXPECT_EQ(Checksum({pseudo, segment}), 0) << "the TCP checksum";
}

TEST(IpPacket, Icmpv4ChecksumLeavesThePseudoHeaderOut) {
  sockaddr_storage from = V4("10.0.0.1", 0), to = V4("10.0.0.2", 0);
  std::string icmp = Hex({ICMP_DEST_UNREACH, ICMP_HOST_UNREACH, 0, 0, 0, 0, 0, 0, 0xde, 0xad});
  std::string packet = IpPacket(from, to, IPPROTO_ICMP, icmp, 2);
  EXPECT_EQ(Checksum({packet.substr(0, sizeof(iphdr))}), 0);
  EXPECT_EQ(Checksum({packet.substr(sizeof(iphdr))}), 0) << "the ICMP checksum, on its own";
}

TEST(IpPacket, Ipv6HeaderAndTheIcmpv6ChecksumOverItsPseudoHeader) {
  sockaddr_storage from = V6("::1", 4000), to = V6("2001:db8::2", 443);
  std::string icmp = Hex({ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_ADDR, 0, 0, 0, 0, 0, 0, 1, 2});
  std::string packet = IpPacket(from, to, IPPROTO_ICMPV6, icmp, 2);
  ASSERT_EQ(packet.size(), sizeof(ip6_hdr) + icmp.size());
  EXPECT_EQ(static_cast<uint8_t>(packet[0]) >> 4, 6);
  EXPECT_EQ(At16(packet, 4), icmp.size());  // payload length
  EXPECT_EQ(static_cast<uint8_t>(packet[6]), IPPROTO_ICMPV6);
  std::string pseudo = packet.substr(8, 32) + Hex({0, 0, 0, static_cast<int>(icmp.size())}) +
                       Hex({0, 0, 0, IPPROTO_ICMPV6});
  EXPECT_EQ(Checksum({pseudo, packet.substr(sizeof(ip6_hdr))}), 0);
  // Without a checksum offset the payload goes out as given.
  EXPECT_EQ(IpPacket(from, to, IPPROTO_ICMPV6, icmp, {}).substr(sizeof(ip6_hdr)), icmp);
}

TEST(IpPacket, PortOfReadsBothFamiliesInNetworkOrder) {
  EXPECT_EQ(PortOf(V4("127.0.0.1", 8080)), htons(8080));
  EXPECT_EQ(PortOf(V6("::1", 53)), htons(53));
}

TEST(UnreachableCode, IsTheCodeTheKernelTurnsBackIntoTheError) {
  // icmp_err_convert (net/ipv4/icmp.c) and icmpv6_err_convert (net/ipv6/icmp.c).
  EXPECT_EQ(UnreachableCode(AF_INET, ENETUNREACH), ICMP_NET_UNREACH);
  EXPECT_EQ(UnreachableCode(AF_INET, EHOSTUNREACH), ICMP_HOST_UNREACH);
  EXPECT_EQ(UnreachableCode(AF_INET, ENOPROTOOPT), ICMP_PROT_UNREACH);
  EXPECT_EQ(UnreachableCode(AF_INET, EHOSTDOWN), ICMP_HOST_UNKNOWN);
  EXPECT_EQ(UnreachableCode(AF_INET, ENONET), ICMP_HOST_ISOLATED);
  EXPECT_EQ(UnreachableCode(AF_INET6, ENETUNREACH), ICMP6_DST_UNREACH_NOROUTE);
  EXPECT_EQ(UnreachableCode(AF_INET6, EHOSTUNREACH), ICMP6_DST_UNREACH_ADDR);
  EXPECT_EQ(UnreachableCode(AF_INET6, EACCES), ICMP6_DST_UNREACH_ADMIN);
  // ECONNREFUSED goes as a reset, and an error no code carries has none.
  EXPECT_EQ(UnreachableCode(AF_INET, ECONNREFUSED), -1);
  EXPECT_EQ(UnreachableCode(AF_INET, ETIMEDOUT), -1);
  EXPECT_EQ(UnreachableCode(AF_INET6, ENOPROTOOPT), -1);
}

}  // namespace
}  // namespace gander::network
