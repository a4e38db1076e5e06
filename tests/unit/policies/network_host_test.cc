// Host syntax in network rules (policies/network_host.h).
#include "policies/network_host.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/expect_table.h"

namespace gander::policies {
namespace {

using gander::unit::ExpectMaps;

HostKind KindOf(const std::string& host) {
  Result<HostKind> kind = ClassifyHost(host);
  EXPECT_TRUE(kind.ok()) << host << ": " << kind.error().message;
  return kind.ok() ? *kind : HostKind::kName;
}

std::string ErrorOf(const std::string& host) {
  Result<HostKind> kind = ClassifyHost(host);
  EXPECT_FALSE(kind.ok()) << host << " was accepted";
  return kind.ok() ? "" : kind.error().message;
}

TEST(ClassifyHostTest, Names) {
  ExpectMaps<HostKind>(KindOf, {{"localhost", HostKind::kName},
                                {"api.github.com", HostKind::kName},
                                {"xn--bcher-kva.example", HostKind::kName},
                                {"a-b.c0", HostKind::kName},
                                {"1password.com", HostKind::kName}});
  EXPECT_EQ(KindOf(std::string(63, 'a') + ".com"), HostKind::kName);
}

TEST(ClassifyHostTest, Wildcards) {
  EXPECT_EQ(KindOf("*.github.com"), HostKind::kWildcard);
  EXPECT_EQ(KindOf("*.com"), HostKind::kWildcard);
  ExpectMaps(
      ErrorOf,
      {{"*", "'*' is not a DNS name, *.suffix, IP address or CIDR block"},
       {"*.", "'*.': expected '*.' followed by a DNS name"},
       {"*.*.com", "'*.*.com': expected '*.' followed by a DNS name"},
       {"a.*.com", "'a.*.com' is not a DNS name, *.suffix, IP address or CIDR block"},
       {"*github.com", "'*github.com' is not a DNS name, *.suffix, IP address or CIDR block"}});
}

TEST(ClassifyHostTest, Addresses) {
  ExpectMaps<HostKind>(KindOf, {{"127.0.0.1", HostKind::kAddress},
                                {"169.254.169.254", HostKind::kAddress},
                                {"::1", HostKind::kAddress},
                                {"2001:db8::8a2e:370:7334", HostKind::kAddress},
                                {"::ffff:10.0.0.1", HostKind::kAddress}});
  ExpectMaps(ErrorOf,
             {{"256.1.1.1", "'256.1.1.1' is not a DNS name, *.suffix, IP address or CIDR block"},
              {"1.2.3", "'1.2.3' is not a DNS name, *.suffix, IP address or CIDR block"},
              {"2001:db8:::1", "'2001:db8:::1' is not a valid IPv6 address"},
              {"[::1]", "'[::1]' is not a valid IPv6 address"},
              {"fe80::1%eth0", "'fe80::1%eth0' is not a valid IPv6 address"}});
}

TEST(ClassifyHostTest, Cidrs) {
  ExpectMaps<HostKind>(KindOf, {{"10.0.0.0/8", HostKind::kCidr},
                                {"0.0.0.0/0", HostKind::kCidr},
                                {"192.168.1.7/32", HostKind::kCidr},
                                {"2001:db8::/32", HostKind::kCidr},
                                {"::/0", HostKind::kCidr},
                                {"::1/128", HostKind::kCidr}});
  ExpectMaps(
      ErrorOf,
      {{"10.0.0.0/33", "'10.0.0.0/33': prefix length must be 0-32"},
       {"::/129", "'::/129': prefix length must be 0-128"},
       {"10.0.0.0/", "'10.0.0.0/': prefix length must be 0-32"},
       {"10.0.0.0/-1", "'10.0.0.0/-1': prefix length must be 0-32"},
       {"10.0.0.0/8x", "'10.0.0.0/8x': prefix length must be 0-32"},
       {"10.0.0.1/8", "'10.0.0.1/8': address has bits set beyond the /8 prefix"},
       {"2001:db8::1/64", "'2001:db8::1/64': address has bits set beyond the /64 prefix"},
       {"example.com/24", "'example.com/24': 'example.com' is not an IPv4 or IPv6 address"}});
}

TEST(ClassifyHostTest, RejectsMalformedNames) {
  for (const std::string& host : std::vector<std::string>{
           "", "a..b", ".a.com", "a.com.", "-a.com", "a-.com", "a_b.com", "a b", "a/b",
           "ex\xc3\xa4mple.com", std::string(64, 'a') + ".com"}) {
    ErrorOf(host);
  }
  std::string too_long;
  for (int i = 0; i < 64; ++i) too_long += "abc.";
  too_long += "com";  // 259 characters
  ErrorOf(too_long);
  EXPECT_EQ(ErrorOf(""), "empty host");
}

}  // namespace
}  // namespace gander::policies
