// The MCP side of the stdio relay: the line observers of both directions. Each line is parsed
// (jsonrpc.h) and fed to the ToolCallTracker, whose answers label the seccomp monitor's
// events; each tools/call that ends becomes a `tool` event. It also remembers the client's
// handshake (initialize, notifications/initialized) so that the extension can be restarted
// behind the relay without Goose noticing more than failed requests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "events/event_queue.h"
#include "relay/jsonrpc.h"
#include "relay/line_relay.h"
#include "relay/tool_call_tracker.h"

namespace gander::relay {

class RpcMonitor {
 public:
  // `queue` may be null (no events). `max_line`: the relay's size limit.
  RpcMonitor(std::string extension, events::BoundedEventQueue* queue, size_t max_line);

  LineObserver& client_side() { return client_; }  // Goose -> extension
  LineObserver& server_side() { return server_; }  // extension -> Goose
  ToolCallTracker& tracker() { return tracker_; }
  const ToolCallTracker& tracker() const { return tracker_; }

  // Restart behind the relay, in this order:
  // 1. the JSON-RPC error lines answering every request in flight (they end as `aborted`),
  //    but for an initialize not answered yet: the fresh extension answers that one;
  std::string FailInFlight(std::string_view reason);
  // 2. the lines to send the fresh extension first: the client's initialize and initialized
  //    as it sent them ("" in the 2026 stateless framing, which has no handshake). The fresh
  //    extension's answer to that initialize is then kept from the client, unless the client
  //    is still waiting for it (a restart during the handshake).
  std::string HandshakeReplay();

  bool handshake_seen() const { return initialize_line_.has_value(); }
  uint64_t swallowed() const { return swallowed_; }
  // Lines from the extension that Goose's client refuses (ParsedLine::client_refuses): a
  // protocol anomaly, forwarded unchanged but kept from the tracking.
  uint64_t refused_server_lines() const { return refused_server_lines_; }

 private:
  struct Side final : LineObserver {
    RpcMonitor* monitor;
    bool from_client;
    Side(RpcMonitor* m, bool c) : monitor(m), from_client(c) {}
    LineVerdict OnLine(std::string_view line) override {
      return monitor->OnLine(line, from_client);
    }
  };
  LineVerdict OnLine(std::string_view line, bool from_client);
  void PushCompleted();

  std::string extension_;
  events::BoundedEventQueue* queue_;
  JsonRpcParser parser_;
  ToolCallTracker tracker_;
  Side client_{this, true};
  Side server_{this, false};
  std::optional<std::string> initialize_line_;
  std::optional<std::string> initialized_line_;
  std::optional<RpcId> initialize_id_;
  bool initialize_answered_ = false;
  bool swallow_initialize_answer_ = false;
  uint64_t swallowed_ = 0;
  uint64_t refused_server_lines_ = 0;
};

int64_t MonotonicNowNs();

}  // namespace gander::relay
