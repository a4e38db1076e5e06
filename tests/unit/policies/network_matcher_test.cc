// The compiled network policy (policies/network_matcher.h): deny wins, ports, name pinning,
// wildcards, CIDR blocks, and host loopback only when named.
#include "policies/network_matcher.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace gander::policies {
namespace {

NetworkRule R(std::string host, std::vector<uint16_t> ports = {},
              std::optional<Protocol> protocol = std::nullopt) {
  NetworkRule rule;
  rule.host = std::move(host);
  rule.ports = std::move(ports);
  rule.protocol = protocol;
  return rule;
}

NetworkMatcher Compile(std::vector<NetworkRule> allow, std::vector<NetworkRule> deny = {}) {
  Result<NetworkMatcher> m = NetworkMatcher::Compile({std::move(allow), std::move(deny)});
  EXPECT_TRUE(m.ok()) << m.error().message;
  return std::move(m).value();
}

Destination D(const std::string& ip, uint16_t port, std::vector<std::string> names = {}) {
  return Destination{*IpAddress::Parse(ip), port, std::move(names)};
}

TEST(IpAddressTest, ParsesAndUnmaps) {
  EXPECT_EQ(IpAddress::Parse("::ffff:10.1.2.3"), IpAddress::Parse("10.1.2.3"));
  EXPECT_FALSE(IpAddress::Parse("::ffff:10.1.2.3")->v6);
  EXPECT_TRUE(IpAddress::Parse("::1")->IsLoopback());
  EXPECT_TRUE(IpAddress::Parse("127.9.9.9")->IsLoopback());
  EXPECT_TRUE(IpAddress::Parse("::ffff:127.0.0.1")->IsLoopback());
  EXPECT_FALSE(IpAddress::Parse("::2")->IsLoopback());
  EXPECT_TRUE(IpAddress::Parse("0.0.0.0")->IsUnspecified());
  EXPECT_EQ(IpAddress::Parse("2001:db8::1")->ToString(), "2001:db8::1");
  EXPECT_FALSE(IpAddress::Parse("api.github.com"));
}

Destination Udp(const std::string& ip, uint16_t port) {
  Destination d{*IpAddress::Parse(ip), port, {}};
  d.protocol = Protocol::kUdp;
  return d;
}

TEST(NetworkMatcherTest, AllowRulesAreTcpUnlessTheyNameUdp) {
  NetworkMatcher m = Compile({R("10.0.0.5", {53}), R("10.0.0.6", {5353}, Protocol::kUdp),
                              R("10.0.0.7", {443}, Protocol::kTcp)});
  EXPECT_TRUE(m.Match(D("10.0.0.5", 53)).allowed);
  EXPECT_FALSE(m.Match(Udp("10.0.0.5", 53)).allowed);
  EXPECT_TRUE(m.Match(Udp("10.0.0.6", 5353)).allowed);
  EXPECT_FALSE(m.Match(D("10.0.0.6", 5353)).allowed);
  EXPECT_FALSE(m.Match(Udp("10.0.0.6", 5354)).allowed);
  EXPECT_TRUE(m.Match(D("10.0.0.7", 443)).allowed);
  EXPECT_FALSE(m.Match(Udp("10.0.0.7", 443)).allowed);
}

TEST(NetworkMatcherTest, DenyRuleWithoutProtocolRefusesBoth) {
  NetworkMatcher both =
      Compile({R("10.0.0.6", {53}, Protocol::kUdp), R("10.0.0.6", {53})}, {R("10.0.0.6")});
  EXPECT_FALSE(both.Match(Udp("10.0.0.6", 53)).allowed);
  EXPECT_FALSE(both.Match(D("10.0.0.6", 53)).allowed);
  NetworkMatcher udp_only = Compile({R("10.0.0.6", {53}, Protocol::kUdp), R("10.0.0.6", {53})},
                                    {R("10.0.0.6", {}, Protocol::kUdp)});
  EXPECT_FALSE(udp_only.Match(Udp("10.0.0.6", 53)).allowed);
  EXPECT_TRUE(udp_only.Match(D("10.0.0.6", 53)).allowed);
}

TEST(NetworkMatcherTest, DefaultDenies) {
  NetworkMatcher m = Compile({});
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(m.Match(D("140.82.112.3", 443, {"api.github.com"})).allowed);
  EXPECT_FALSE(m.MayResolve("api.github.com"));
}

TEST(NetworkMatcherTest, NameRulesMatchOnlyThroughResolvedNames) {
  NetworkMatcher m = Compile({R("api.github.com", {443})});
  EXPECT_TRUE(m.Match(D("140.82.112.3", 443, {"api.github.com"})).allowed);
  EXPECT_EQ(m.Match(D("140.82.112.3", 443, {"api.github.com"})).rule, "api.github.com");
  // Pinning: the same address without the stub's record is not the name.
  EXPECT_FALSE(m.Match(D("140.82.112.3", 443)).allowed);
  EXPECT_FALSE(m.Match(D("140.82.112.3", 80, {"api.github.com"})).allowed);
  EXPECT_FALSE(m.Match(D("140.82.112.3", 443, {"github.com"})).allowed);
  EXPECT_TRUE(m.MayResolve("API.GitHub.com."));
  EXPECT_FALSE(m.MayResolve("github.com"));
  EXPECT_FALSE(m.MayResolve("x.api.github.com"));
}

TEST(NetworkMatcherTest, WildcardsMatchStrictlyBelow) {
  NetworkMatcher m = Compile({R("*.npmjs.org", {443})});
  EXPECT_TRUE(m.MayResolve("registry.npmjs.org"));
  EXPECT_TRUE(m.MayResolve("a.b.npmjs.org"));
  EXPECT_FALSE(m.MayResolve("npmjs.org"));
  EXPECT_FALSE(m.MayResolve("evilnpmjs.org"));
  EXPECT_TRUE(m.Match(D("104.16.0.1", 443, {"registry.npmjs.org"})).allowed);
  EXPECT_FALSE(m.Match(D("104.16.0.1", 443, {"xnpmjs.org"})).allowed);
}

TEST(NetworkMatcherTest, AddressesAndCidr) {
  NetworkMatcher m =
      Compile({R("10.0.0.0/8", {80, 443}), R("2001:db8::/32", {443}), R("192.0.2.7", {22})});
  EXPECT_TRUE(m.Match(D("10.200.3.4", 80)).allowed);
  EXPECT_TRUE(m.Match(D("::ffff:10.200.3.4", 443)).allowed);
  EXPECT_FALSE(m.Match(D("11.0.0.1", 80)).allowed);
  EXPECT_TRUE(m.Match(D("2001:db8:1::5", 443)).allowed);
  EXPECT_FALSE(m.Match(D("2001:db9::5", 443)).allowed);
  EXPECT_TRUE(m.Match(D("192.0.2.7", 22)).allowed);
  EXPECT_FALSE(m.Match(D("192.0.2.8", 22)).allowed);
  EXPECT_FALSE(m.Match(D("10.0.0.1", 0)).allowed);
}

TEST(NetworkMatcherTest, DenyWins) {
  NetworkMatcher m = Compile({R("0.0.0.0/0", {80}), R("*.example.com", {443})},
                             {R("169.254.169.254"), R("bad.example.com", {443})});
  EXPECT_TRUE(m.Match(D("8.8.8.8", 80)).allowed);
  MatchResult metadata = m.Match(D("169.254.169.254", 80));
  EXPECT_FALSE(metadata.allowed);
  EXPECT_EQ(metadata.rule, "169.254.169.254");
  EXPECT_TRUE(m.Match(D("1.2.3.4", 443, {"good.example.com"})).allowed);
  EXPECT_FALSE(m.Match(D("1.2.3.4", 443, {"bad.example.com"})).allowed);
  // A deny rule with ports does not stop resolution; one without ports does.
  EXPECT_TRUE(m.MayResolve("bad.example.com"));
  NetworkMatcher all = Compile({R("*.example.com", {443})}, {R("bad.example.com")});
  EXPECT_FALSE(all.MayResolve("bad.example.com"));
}

TEST(NetworkMatcherTest, HostLoopbackOnlyWhenNamed) {
  NetworkMatcher wide = Compile({R("0.0.0.0/0", {80}), R("::/0", {80}), R("*.test", {80})});
  EXPECT_FALSE(wide.Match(D("127.0.0.1", 80)).allowed);
  EXPECT_FALSE(wide.Match(D("::1", 80)).allowed);
  EXPECT_FALSE(wide.Match(D("127.0.0.1", 80, {"rebind.test"})).allowed);
  EXPECT_TRUE(wide.Match(D("8.8.8.8", 80)).allowed);

  NetworkMatcher named = Compile(
      {R("127.0.0.2", {8443}), R("127.0.0.0/8", {9000}), R("::1", {8080}), R("localhost", {7000})});
  EXPECT_TRUE(named.Match(D("127.0.0.2", 8443)).allowed);
  EXPECT_FALSE(named.Match(D("127.0.0.3", 8443)).allowed);
  EXPECT_TRUE(named.Match(D("127.5.5.5", 9000)).allowed);
  EXPECT_TRUE(named.Match(D("::1", 8080)).allowed);
  EXPECT_TRUE(named.Match(D("127.0.0.1", 7000, {"localhost"})).allowed);
  EXPECT_FALSE(named.Match(D("127.0.0.1", 7000)).allowed);
}

TEST(NetworkMatcherTest, UnspecifiedNeverAllowed) {
  NetworkMatcher m = Compile({R("0.0.0.0/0", {80})});
  EXPECT_FALSE(m.Match(D("0.0.0.0", 80)).allowed);
}

TEST(NetworkMatcherTest, AllowWithoutPortsIsAnError) {
  EXPECT_FALSE(NetworkMatcher::Compile({{R("a.com")}, {}}).ok());
}

TEST(NetworkMatcherTest, EverythingAllowsEveryDestinationAndName) {
  // `--mode learn`: host loopback too, every name resolves; unspecified or port 0 never.
  NetworkMatcher all = NetworkMatcher::Everything();
  EXPECT_TRUE(all.everything());
  EXPECT_FALSE(all.empty());
  for (const char* ip : {"203.0.113.7", "127.0.0.2", "::1", "10.1.2.3"}) {
    MatchResult m = all.Match(D(ip, 443));
    EXPECT_TRUE(m.allowed) << ip;
    EXPECT_EQ(m.rule, "*");
  }
  EXPECT_FALSE(all.Match(D("0.0.0.0", 443)).allowed);
  EXPECT_FALSE(all.Match(D("203.0.113.7", 0)).allowed);
  EXPECT_TRUE(all.MayResolve("collect.example.net"));
  EXPECT_FALSE(all.MayResolve(""));
  EXPECT_FALSE(Compile({R("api.github.com", {443})}).everything());
}

}  // namespace
}  // namespace gander::policies
