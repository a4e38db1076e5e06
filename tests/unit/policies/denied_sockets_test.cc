// socket() without namespaces (policies/denied_syscalls.h): with the egress broker only plain
// TCP sockets may be made; without it no inet or unix socket at all.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "policies/denied_syscalls.h"

namespace gander::monitor {
namespace {

// Would the table refuse socket(domain, type, protocol)?
bool Refused(const std::vector<DeniedSyscall>& table, uint64_t domain, uint64_t type,
             uint64_t protocol) {
  const uint64_t args[6] = {domain, type, protocol, 0, 0, 0};
  for (const DeniedSyscall& entry : table) {
    if (std::string(entry.name) == "socket" && Matches(entry, args)) return true;
  }
  return false;
}

TEST(DeniedSocketsTest, BrokerOnlyLeavesPlainTcp) {
  auto table = DeniedSyscalls({.deny_host_sockets = true, .inet_brokered = true});
  EXPECT_FALSE(Refused(table, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_FALSE(Refused(table, AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_DGRAM, 0));
  EXPECT_TRUE(Refused(table, AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_DGRAM, IPPROTO_ICMP));  // ping sockets
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_RAW, IPPROTO_RAW));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, IPPROTO_SCTP));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */));
  EXPECT_TRUE(Refused(table, AF_UNIX, SOCK_STREAM, 0));
}

TEST(DeniedSocketsTest, WithoutTheBrokerNoInetOrUnixSockets) {
  auto table = DeniedSyscalls({.deny_host_sockets = true});
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, 0));
  EXPECT_TRUE(Refused(table, AF_INET6, SOCK_STREAM, 0));
  EXPECT_TRUE(Refused(table, AF_UNIX, SOCK_STREAM, 0));
}

TEST(DeniedSocketsTest, WithNamespacesSocketIsNotRestrictedThisWay) {
  auto table = DeniedSyscalls({});
  EXPECT_FALSE(Refused(table, AF_INET, SOCK_DGRAM, 0));
  EXPECT_FALSE(Refused(table, AF_UNIX, SOCK_STREAM, 0));
}

}  // namespace
}  // namespace gander::monitor
