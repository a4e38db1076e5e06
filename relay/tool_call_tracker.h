// Which MCP tool call is in flight: fed every JSON-RPC message the relay forwards (both
// directions, both MCP eras), it answers "what caused this event" for the seccomp monitor
// (startup, idle, one named call, concurrent) and reports each tools/call when it completes
// (tool, id, outcome, duration, and the file / network / denial events it caused). Pure: time
// is passed in; no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "events/event.h"
#include "relay/jsonrpc.h"

namespace gander::relay {

// Events a tool call caused while it was the only one in flight.
struct CausedCounts {
  uint64_t files = 0;
  uint64_t network = 0;
  uint64_t denials = 0;  // any refused syscall, file or connect (result denied)
};

// How a tools/call ended.
enum class ToolCallOutcome {
  kOk,             // a result
  kToolError,      // a result with isError: true (the tool failed)
  kRpcError,       // a JSON-RPC error response
  kCancelled,      // the client sent notifications/cancelled for it
  kInputRequired,  // 2026 framing: a result asking the client for input (it retries anew)
  kAborted,        // no answer: the extension was restarted or the session ended
};
std::string_view ToString(ToolCallOutcome o);

struct CompletedToolCall {
  events::ToolCall call;  // tool and request id
  ToolCallOutcome outcome = ToolCallOutcome::kOk;
  int64_t duration_ns = 0;
  CausedCounts caused;
  int error_code = 0;  // kRpcError
  std::optional<std::string> session_id;
  std::optional<std::string> working_dir;
};

// Per tool, since the start. Latency buckets (upper bounds, ms): see kLatencyBucketsMs.
inline constexpr int64_t kLatencyBucketsMs[] = {1,   5,    10,   25,    50,    100,   250,
                                                500, 1000, 2500, 10000, 60000, 300000};
inline constexpr size_t kLatencyBuckets = std::size(kLatencyBucketsMs) + 1;  // + Inf

struct ToolStats {
  uint64_t calls = 0;
  uint64_t errors = 0;  // kToolError and kRpcError
  uint64_t latency[kLatencyBuckets] = {};
  CausedCounts caused;
};

enum class McpEra { kUnknown, kHandshake, kStateless };

class ToolCallTracker {
 public:
  // Bounds: requests in flight per direction, distinct tool names in the stats (the rest are
  // counted under "other").
  static constexpr size_t kMaxInFlight = 4096;
  static constexpr size_t kMaxTools = 256;

  // A message from the client (Goose) to the extension, seen as it is forwarded.
  void OnClientMessage(const RpcMessage& m, int64_t now_ns);
  // A message from the extension to the client.
  void OnServerMessage(const RpcMessage& m, int64_t now_ns);

  // The tool-call slot for an event happening now.
  events::ToolCallSlot Slot() const;
  // Counts an event against the call in flight (when exactly one is).
  void Attribute(const events::Event& event);

  // Ends every call in flight as kAborted (restart, shutdown); their ids are returned so that
  // the client can be told. Requests from the extension to the client are forgotten.
  std::vector<RpcId> AbortInFlight(int64_t now_ns);

  // Calls completed since the last call.
  std::vector<CompletedToolCall> TakeCompleted();

  const std::map<std::string, ToolStats>& tool_stats() const { return stats_; }
  McpEra era() const { return era_; }
  const std::optional<std::string>& session_id() const { return session_id_; }
  const std::optional<std::string>& working_dir() const { return working_dir_; }
  size_t client_requests_in_flight() const { return client_requests_.size(); }
  size_t server_requests_in_flight() const { return server_requests_.size(); }
  size_t tool_calls_in_flight() const { return tool_calls_in_flight_; }
  uint64_t unmatched_responses() const { return unmatched_responses_; }
  // Methods of requests from the extension to the client still unanswered (sampling,
  // elicitation, roots/list), by id key.
  std::vector<std::string> ServerRequestMethods() const;

 private:
  struct InFlight {
    RpcId id;
    std::string method;
    std::string tool;  // tools/call only
    int64_t started_ns = 0;
    CausedCounts caused;
  };
  void Complete(const std::string& key, ToolCallOutcome outcome, int error_code, int64_t now_ns);
  ToolStats& StatsFor(const std::string& tool);

  std::unordered_map<std::string, InFlight> client_requests_;  // by RpcId::Key()
  std::unordered_map<std::string, std::string> server_requests_;
  size_t tool_calls_in_flight_ = 0;
  const InFlight* single_call_ = nullptr;  // the tools/call when exactly one is in flight
  bool seen_tool_call_ = false;
  McpEra era_ = McpEra::kUnknown;
  std::optional<std::string> session_id_;
  std::optional<std::string> working_dir_;
  std::vector<CompletedToolCall> completed_;
  std::map<std::string, ToolStats> stats_;
  uint64_t unmatched_responses_ = 0;
  uint64_t dropped_requests_ = 0;
};

}  // namespace gander::relay
