// The UDP flow table's rules (network/udp_flow_table.h): when it is full, which flow an
// eviction ends, which flows are idle.
#include "network/udp_flow_table.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

namespace gander::network {
namespace {

// The broker's shapes: destination -> relay, child address -> flow.
struct Flow {
  int64_t last_ns = 0;
};
struct Relay {
  std::map<std::string, std::unique_ptr<Flow>> flows;
};
using Relays = std::map<std::string, std::unique_ptr<Relay>>;

void Add(Relays& relays, const std::string& dest, const std::string& child, int64_t last_ns) {
  auto& relay = relays[dest];
  if (!relay) relay = std::make_unique<Relay>();
  relay->flows[child] = std::make_unique<Flow>(Flow{last_ns});
}

TEST(UdpFlowTable, IsFullAtItsBoundAndNeverBoundedBelowOne) {
  EXPECT_FALSE(UdpTableFull(0, 2));
  EXPECT_FALSE(UdpTableFull(1, 2));
  EXPECT_TRUE(UdpTableFull(2, 2));
  EXPECT_TRUE(UdpTableFull(3, 2));
  // max_udp_flows 0 means one flow at a time, not none.
  EXPECT_FALSE(UdpTableFull(0, 0));
  EXPECT_TRUE(UdpTableFull(1, 0));
}

TEST(UdpFlowTable, EvictionEndsTheLeastRecentlyUsedFlowAcrossDestinations) {
  Relays relays;
  Add(relays, "192.0.2.1|53", "127.0.0.1|4000", 300);
  Add(relays, "192.0.2.1|53", "127.0.0.1|4001", 100);
  Add(relays, "192.0.2.9|123", "127.0.0.1|5000", 50);
  Add(relays, "192.0.2.9|123", "127.0.0.1|5001", 400);
  std::vector<std::string> order;
  while (true) {
    auto [relay, key] = LeastRecentlyUsedFlow(relays);
    if (!relay) break;
    order.push_back(*key);
    relay->flows.erase(*key);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"127.0.0.1|5000", "127.0.0.1|4001", "127.0.0.1|4000",
                                             "127.0.0.1|5001"}));
}

TEST(UdpFlowTable, ATieGoesToTheFirstInTheTablesOrderAndAnEmptyTableHasNone) {
  Relays relays;
  EXPECT_EQ(LeastRecentlyUsedFlow(relays).first, nullptr);
  Add(relays, "b", "x", 7);
  Add(relays, "a", "y", 7);
  relays["c"] = std::make_unique<Relay>();  // a relay without flows
  auto [relay, key] = LeastRecentlyUsedFlow(relays);
  EXPECT_EQ(relay, relays["a"].get());
  EXPECT_EQ(*key, "y");
}

TEST(UdpFlowTable, AFlowIsIdleAtAndBeforeTheCutOff) {
  Relay relay;
  relay.flows["a"] = std::make_unique<Flow>(Flow{99});
  relay.flows["b"] = std::make_unique<Flow>(Flow{100});
  relay.flows["c"] = std::make_unique<Flow>(Flow{101});
  EXPECT_EQ(IdleFlows(relay.flows, 100), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(IdleFlows(relay.flows, 98).empty());
}

}  // namespace
}  // namespace gander::network
