#include "learn/destination_risk.h"

#include <gtest/gtest.h>

namespace gander::learn {
namespace {

TEST(DestinationRisk, LocalAddressesAreNoRisk) {
  for (const char* host : {"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1",
                           "192.0.2.7", "::1", "fd00::1", "2001:db8::1"}) {
    EXPECT_EQ(RiskyHost(host, {}), "") << host;
  }
}

TEST(DestinationRisk, LinkLocalAndUnnamedPublicAddressesAreRefused) {
  EXPECT_EQ(RiskyHost("169.254.169.254", {}), "link-local (cloud metadata) address");
  EXPECT_EQ(RiskyHost("fe80::1", {}), "link-local address");
  EXPECT_EQ(RiskyHost("140.82.112.3", {}), "a public address without a name (no DNS pinning)");
  EXPECT_EQ(RiskyHost("metadata.example", {"169.254.169.254"}),
            "resolves to link-local (cloud metadata) address 169.254.169.254");
}

TEST(DestinationRisk, PasteAndTunnelServicesAreRefusedWithTheirSubdomains) {
  EXPECT_EQ(RiskyHost("pastebin.com", {}), "a paste / tunnel service");
  EXPECT_EQ(RiskyHost("abc.ngrok-free.app", {}), "a paste / tunnel service");
  EXPECT_EQ(RiskyHost("notpastebin.com", {}), "");
  EXPECT_EQ(RiskyHost("api.github.com", {"140.82.112.3"}), "");
}

TEST(DestinationRisk, PublicFlagNamesThePublicAddresses) {
  EXPECT_EQ(PublicFlag({}), "public host? (no address recorded)");
  EXPECT_EQ(PublicFlag({"10.0.0.1"}), "");
  EXPECT_EQ(PublicFlag({"10.0.0.1", "140.82.112.3"}), "public host 140.82.112.3");
}

}  // namespace
}  // namespace gander::learn
