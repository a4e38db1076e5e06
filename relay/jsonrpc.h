// Reading the JSON-RPC messages the relay forwards: one line (a message or a batch array)
// becomes a list of the few facts gander needs (kind, id, method, tool name, the client's
// `_meta`, the outcome of a result). Read with gander's validating scanner (json_scanner.h),
// as a SAX reader: values gander does not need (tool arguments, result content) are validated
// and skipped, not kept. Pure; no I/O.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gander::relay {

// A JSON-RPC id. Numbers are kept as their JSON text ("7"), strings decoded ("abc"); 7 and
// "7" are different ids.
struct RpcId {
  bool is_string = false;
  std::string text;

  std::string Key() const { return (is_string ? "s" : "n") + text; }
  // Back to JSON: `7` or `"abc"` (escaped).
  std::string ToJson() const;
  bool operator==(const RpcId&) const = default;
};

enum class RpcKind {
  kRequest,       // method and id
  kNotification,  // method, no id
  kResult,        // id and result
  kError,         // id (possibly null) and error
  kInvalid,       // an object that is none of the above (forwarded all the same)
};

struct RpcMessage {
  RpcKind kind = RpcKind::kInvalid;
  std::optional<RpcId> id;
  std::string method;
  // tools/call: params.name. notifications/cancelled: params.requestId.
  std::string tool;
  std::optional<RpcId> cancelled_id;
  // The client's _meta (Goose sends both keys with its requests).
  std::optional<std::string> session_id;   // _meta["agent-session-id"]
  std::optional<std::string> working_dir;  // _meta["agent-working-dir"]
  // The 2026 stateless framing: _meta carries "io.modelcontextprotocol/protocolVersion".
  std::optional<std::string> stateless_version;
  // Results: result.isError (a tool that failed) and result.resultType (2026:
  // "complete", "input_required").
  bool result_is_error = false;
  std::string result_type;
  int error_code = 0;  // kError: error.code
};

struct ParsedLine {
  // A batch is read up to this many elements: a line of 64 MiB of `0,` would otherwise make
  // ~11 GB of messages in gander (the rest is still validated, and counted in `unread`).
  static constexpr size_t kMaxMessages = 1024;
  bool json = false;   // the line is JSON (an object or an array of them)
  bool batch = false;  // a JSON array
  std::vector<RpcMessage> messages;
  size_t unread = 0;  // batch elements past kMaxMessages
  // Goose's client (rmcp, reading with serde_json) refuses this line although it is JSON:
  // a message without `"jsonrpc":"2.0"`, nesting deeper than serde_json's recursion limit
  // (kClientMaxDepth), a key of the message or of its `error` twice, a batch element that is
  // no object (one refused element refuses the whole batch). The client never sees such a
  // line as an answer, so it must not end anything gander tracks.
  static constexpr size_t kClientMaxDepth = 127;
  bool client_refuses = false;
};

class JsonRpcParser {
 public:
  // `max_bytes`: the longest line that will be given (the relay's size limit).
  explicit JsonRpcParser(size_t max_bytes = 64u << 20);
  ~JsonRpcParser();
  JsonRpcParser(const JsonRpcParser&) = delete;
  JsonRpcParser& operator=(const JsonRpcParser&) = delete;

  // `line` must be followed by at least 64 readable bytes (kLinePadding) when
  // `padded` is true; otherwise it is copied into a padded buffer first.
  ParsedLine Parse(std::string_view line, bool padded = true);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gander::relay
