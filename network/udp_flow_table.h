// The UDP flow table's rules (udp_relay.cc), as pure functions over the broker's tables so they
// are tested without sockets (tests/unit/network/udp_flow_table_test.cc). A table is a map of
// destination -> relay (a pointer-like holding `flows`), each a map of the child socket's
// address -> flow (a pointer-like holding `last_ns`, its last datagram either way).
//   - full: a new flow first ends others while `open` is at `max_flows` (at least 1);
//   - evicted: the least recently used flow across every destination ends first (ties: the
//     first in the maps' order);
//   - idle: a flow whose last datagram is at or before `idle_before` ends at the next check.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gander::network {

inline bool UdpTableFull(size_t open, size_t max_flows) {
  return open >= std::max<size_t>(max_flows, 1);
}

// The flow to end to make room: its relay and key; {nullptr, nullptr} when there is none.
template <typename Relays>
auto LeastRecentlyUsedFlow(Relays& relays) {
  using Relay = typename Relays::mapped_type::element_type;
  std::pair<Relay*, const std::string*> oldest{nullptr, nullptr};
  int64_t oldest_ns = INT64_MAX;
  for (auto& [dest, relay] : relays) {
    for (auto& [key, flow] : relay->flows) {
      if (flow->last_ns < oldest_ns) {
        oldest_ns = flow->last_ns;
        oldest = {relay.get(), &key};
      }
    }
  }
  return oldest;
}

// The keys of `flows` idle since `idle_before`, in the map's order.
template <typename Flows>
std::vector<std::string> IdleFlows(const Flows& flows, int64_t idle_before) {
  std::vector<std::string> idle;
  for (const auto& [key, flow] : flows) {
    if (flow->last_ns <= idle_before) idle.push_back(key);
  }
  return idle;
}

}  // namespace gander::network
