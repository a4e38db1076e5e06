// Loopback connects and the sandbox's own listeners (network/network_decision.h).
#include "network/network_decision.h"

#include <gtest/gtest.h>

#include <string>

namespace gander::network {
namespace {

using policies::Destination;
using policies::IpAddress;
using policies::NetworkMatcher;

Destination D(const char* ip, uint16_t port) { return {*IpAddress::Parse(ip), port, {}}; }

NetworkMatcher Named(const char* host, uint16_t port) {
  policies::NetworkRules rules;
  rules.allow.push_back({host, {port}, {}});
  return *NetworkMatcher::Compile(rules);
}

// /proc/PID/net/tcp as the kernel writes it on x86 (little endian): 127.0.0.1:8080 and
// 0.0.0.0:9000 listening, one established connection to 127.0.0.2:5432.
constexpr char kTcp[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n"
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
    "1 1 0 100 0 0 10 0\n"
    "   1: 00000000:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
    "2 1 0 100 0 0 10 0\n"
    "   2: 0100007F:D431 0200007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 "
    "3 1 0 100 0 0 10 0\n";
// tcp6: [::1]:8443 listening.
constexpr char kTcp6[] =
    "  sl  local_address                         remote_address                        st\n"
    "   0: 00000000000000000000000001000000:20FB 00000000000000000000000000000000:0000 0A "
    "00000000:00000000 00:00000000 00000000     0        0 4 1 0 100 0 0 10 0\n";

TEST(TableListensOnTest, FindsListenersByAddressAndWildcard) {
  EXPECT_TRUE(TableListensOn(kTcp, false, *IpAddress::Parse("127.0.0.1"), 8080));
  EXPECT_FALSE(TableListensOn(kTcp, false, *IpAddress::Parse("127.0.0.2"), 8080));
  EXPECT_TRUE(TableListensOn(kTcp, false, *IpAddress::Parse("127.0.0.2"), 9000));  // 0.0.0.0
  EXPECT_TRUE(TableListensOn(kTcp, false, *IpAddress::Parse("0.0.0.0"), 8080));
  EXPECT_FALSE(TableListensOn(kTcp, false, *IpAddress::Parse("127.0.0.2"), 5432));  // not LISTEN
  EXPECT_FALSE(TableListensOn(kTcp, false, *IpAddress::Parse("127.0.0.1"), 54321));
  EXPECT_TRUE(TableListensOn(kTcp6, true, *IpAddress::Parse("::1"), 8443));
  EXPECT_FALSE(TableListensOn(kTcp6, true, *IpAddress::Parse("::1"), 8080));
  EXPECT_FALSE(TableListensOn("", false, *IpAddress::Parse("127.0.0.1"), 8080));
  EXPECT_FALSE(TableListensOn("header only\n", false, *IpAddress::Parse("127.0.0.1"), 8080));
}

TEST(TableListensOnTest, ReaderMayStopAtTheFirstConnectedRow) {
  std::string table = kTcp;
  size_t listeners_end = table.find("   2:");
  EXPECT_FALSE(TablePastListeners(table.substr(0, listeners_end)));
  EXPECT_FALSE(TablePastListeners(table.substr(0, listeners_end + 20)));  // a partial row
  EXPECT_TRUE(TablePastListeners(table));
  EXPECT_FALSE(TablePastListeners(kTcp6));
  EXPECT_FALSE(TablePastListeners(""));
}

TEST(ListenersMatterTest, OnlyForLoopbackTcpThePolicyDoesNotName) {
  NetworkMatcher none = *NetworkMatcher::Compile({});
  NetworkMatcher named = Named("127.0.0.2", 80);
  EXPECT_TRUE(ListenersMatter(none, D("127.0.0.2", 80), SOCK_STREAM));
  EXPECT_FALSE(ListenersMatter(named, D("127.0.0.2", 80), SOCK_STREAM));  // brokered anyway
  EXPECT_TRUE(ListenersMatter(named, D("127.0.0.2", 81), SOCK_STREAM));
  EXPECT_FALSE(ListenersMatter(none, D("127.0.0.2", 53), SOCK_DGRAM));
  EXPECT_FALSE(ListenersMatter(none, D("192.0.2.1", 80), SOCK_STREAM));
  EXPECT_TRUE(ListenersMatter(NetworkMatcher::Everything(), D("127.0.0.2", 80), SOCK_STREAM));
}

TEST(DecideConnectTest, LoopbackWithoutAListenerInsideIsRefusedAndReported) {
  NetworkMatcher none = *NetworkMatcher::Compile({});
  NetContext ctx{.namespaces = true, .deny_errno = 13};
  // Listeners unknown: the sandbox's own loopback, as before.
  EXPECT_EQ(DecideConnect(none, D("127.0.0.2", 80), SOCK_STREAM, ctx).action, NetAction::kLocal);
  ctx.listeners_known = true;
  ctx.local_listener = true;
  EXPECT_EQ(DecideConnect(none, D("127.0.0.2", 80), SOCK_STREAM, ctx).action, NetAction::kLocal);
  ctx.local_listener = false;
  NetDecision d = DecideConnect(none, D("127.0.0.2", 80), SOCK_STREAM, ctx);
  EXPECT_EQ(d.action, NetAction::kDeny);
  EXPECT_EQ(d.error, ECONNREFUSED);  // what the empty loopback answers, not deny_errno
  EXPECT_EQ(DecideConnect(none, D("127.0.0.2", 53), SOCK_DGRAM, ctx).action, NetAction::kLocal);
  // A rule naming it: brokered to the host, listener or not.
  EXPECT_EQ(DecideConnect(Named("127.0.0.2", 80), D("127.0.0.2", 80), SOCK_STREAM, ctx).action,
            NetAction::kBroker);
  ctx.local_listener = true;
  EXPECT_EQ(DecideConnect(Named("127.0.0.2", 80), D("127.0.0.2", 80), SOCK_STREAM, ctx).action,
            NetAction::kBroker);
}

TEST(DecideConnectTest, EverythingBrokersHostLoopbackOnlyWhenNothingListensInside) {
  NetworkMatcher all = NetworkMatcher::Everything();
  NetContext ctx{.namespaces = true, .listeners_known = true, .local_listener = true};
  EXPECT_EQ(DecideConnect(all, D("127.0.0.2", 80), SOCK_STREAM, ctx).action, NetAction::kLocal);
  ctx.local_listener = false;
  NetDecision d = DecideConnect(all, D("127.0.0.2", 80), SOCK_STREAM, ctx);
  EXPECT_EQ(d.action, NetAction::kBroker);
  EXPECT_EQ(d.rule, "*");
  EXPECT_EQ(DecideConnect(all, D("203.0.113.7", 443), SOCK_STREAM, ctx).action, NetAction::kBroker);
  // UDP to a remote host is relayed (and recorded) like any allowed UDP; loopback UDP stays
  // the sandbox's own, where the DNS stub listens.
  EXPECT_EQ(DecideConnect(all, D("203.0.113.7", 443), SOCK_DGRAM, ctx).action, NetAction::kRelay);
  EXPECT_EQ(DecideConnect(all, D("127.0.0.1", 53), SOCK_DGRAM, ctx).action, NetAction::kLocal);
  ctx.namespaces = false;  // no namespace: host loopback is the only loopback
  EXPECT_EQ(DecideConnect(all, D("127.0.0.2", 80), SOCK_STREAM, ctx).action, NetAction::kBroker);
}

TEST(DecideConnectTest, WithoutNamespacesTcpToAHostNameserverIsTheStub) {
  NetworkMatcher github = Named("api.github.com", 443);
  NetContext ctx{.namespaces = false,
                 .deny_errno = 111,
                 .nameservers = {*IpAddress::Parse("10.0.0.53"), *IpAddress::Parse("fd00::53")}};
  for (const char* ns : {"10.0.0.53", "fd00::53"}) {
    NetDecision d = DecideConnect(github, D(ns, 53), SOCK_STREAM, ctx);
    EXPECT_EQ(d.action, NetAction::kDnsStub) << ns;
    EXPECT_EQ(d.rule, "") << ns;
  }
  // Another port, another address, UDP: decided by the policy as any connect.
  EXPECT_EQ(DecideConnect(github, D("10.0.0.53", 853), SOCK_STREAM, ctx).action, NetAction::kDeny);
  EXPECT_EQ(DecideConnect(github, D("10.0.0.54", 53), SOCK_STREAM, ctx).action, NetAction::kDeny);
  EXPECT_EQ(DecideConnect(github, D("10.0.0.53", 53), SOCK_DGRAM, ctx).action, NetAction::kDeny);
  EXPECT_EQ(DecideConnect(Named("10.0.0.54", 53), D("10.0.0.54", 53), SOCK_STREAM, ctx).action,
            NetAction::kBroker);
  // With namespaces the sandbox has its own resolv.conf: nameservers play no part.
  ctx.namespaces = true;
  EXPECT_EQ(DecideConnect(github, D("10.0.0.53", 53), SOCK_STREAM, ctx).action, NetAction::kDeny);
}

TEST(ParseNameserversTest, AddressesInOrderScopeDroppedLoopbackWhenNone) {
  auto ips = ParseNameservers(
      "# comment\nsearch example.com\nnameserver 10.255.255.53\n  nameserver\tfe80::1%eth0 \n"
      "nameserver not-an-address\noptions use-vc\nnameserver ::1\r\n");
  ASSERT_EQ(ips.size(), 3u);
  EXPECT_EQ(ips[0].ToString(), "10.255.255.53");
  EXPECT_EQ(ips[1].ToString(), "fe80::1");
  EXPECT_EQ(ips[2].ToString(), "::1");
  std::vector<IpAddress> none = ParseNameservers("search example.com\n");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].ToString(), "127.0.0.1");
}

TEST(ParseHostsFileTest, EveryNameOfALineLowerCasedCommentsSkipped) {
  auto pairs = ParseHostsFile(
      "127.0.0.1\tlocalhost\n# 10.0.0.1 commented.example\n"
      "10.0.0.2  API.Internal.example api  # trailing comment\n"
      "not-an-address name\n::1 ip6-localhost\r\nlonely\n");
  ASSERT_EQ(pairs.size(), 4u);
  EXPECT_EQ(pairs[0].first.ToString(), "127.0.0.1");
  EXPECT_EQ(pairs[0].second, "localhost");
  EXPECT_EQ(pairs[1].first.ToString(), "10.0.0.2");
  EXPECT_EQ(pairs[1].second, "api.internal.example");
  EXPECT_EQ(pairs[2].second, "api");
  EXPECT_EQ(pairs[3].first.ToString(), "::1");
  EXPECT_EQ(pairs[3].second, "ip6-localhost");
}

}  // namespace
}  // namespace gander::network
