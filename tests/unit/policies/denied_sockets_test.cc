// socket() without namespaces (policies/denied_syscalls.h): with the egress broker only plain
// TCP sockets may be made; without it no inet or unix socket at all.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "policies/denied_syscalls.h"

namespace gander::policies {
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
  // Ints on their 32 bits, as the kernel reads them.
  EXPECT_TRUE(Refused(table, AF_UNIX | (1ULL << 32), SOCK_STREAM, 0));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, 262 | (1ULL << 32)));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, IPPROTO_SCTP | (1ULL << 32)));
  EXPECT_FALSE(Refused(table, AF_INET, SOCK_STREAM, IPPROTO_TCP | (1ULL << 32)));
  // Every other stream protocol and type: UDPLITE, DCCP, RDM, 2 and 4 (bits of TCP's 6).
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, IPPROTO_UDPLITE));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, 2));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_STREAM, 4));
  EXPECT_TRUE(Refused(table, AF_INET, 6 /* SOCK_DCCP */, 0));
  EXPECT_TRUE(Refused(table, AF_INET, SOCK_RDM, 0));
}

TEST(DeniedSocketsTest, WithoutNamespacesNoListenerAndNoExecutableMemfd) {
  auto table = DeniedSyscalls({.deny_host_sockets = true, .deny_exec_memfd = true});
  auto refused = [&](const char* name, uint64_t a1) {
    const uint64_t args[6] = {0, a1, 0, 0, 0, 0};
    for (const DeniedSyscall& entry : table) {
      if (std::string(entry.name) == name && Matches(entry, args)) return true;
    }
    return false;
  };
  EXPECT_TRUE(refused("listen", 1));
  EXPECT_TRUE(refused("memfd_create", 0));
  EXPECT_TRUE(refused("memfd_create", 0x0010 /* MFD_EXEC */));
  EXPECT_FALSE(refused("memfd_create", 0x0008 /* MFD_NOEXEC_SEAL */ | 1 /* MFD_CLOEXEC */));
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
}  // namespace gander::policies
