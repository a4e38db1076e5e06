// A minimal MCP client over a pair of pipes (newline-delimited JSON-RPC, the stdio
// transport): requests with a deadline, notifications, and answers to the server's own
// requests (ping gets {}, anything else -32601: the audit offers no sampling, roots or
// elicitation, so a server cannot wait on them).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gander::vet {

class McpClient {
 public:
  // `to_server`: the server's stdin; `from_server`: its stdout. Takes both.
  McpClient(UniqueFd to_server, UniqueFd from_server);

  // Sends a request, waits for its answer. The `result` on success; an Error on a JSON-RPC
  // error (its message), a timeout (ETIMEDOUT) or the server closing stdout (EPIPE).
  Result<nlohmann::json> Request(const std::string& method, const nlohmann::json& params,
                                 std::chrono::milliseconds timeout);
  Result<void> Notify(const std::string& method, const nlohmann::json& params);

  // Closes the server's stdin (end of session: the stdio transport's way to say goodbye).
  void CloseInput();

  // Lines on the server's stdout that were not JSON-RPC (an MCP server must not write any).
  unsigned long long not_json_lines() const { return not_json_lines_; }

 private:
  Result<void> Send(const nlohmann::json& message);
  // Reads until a complete line is buffered or the deadline passes.
  Result<std::string> ReadLine(std::chrono::steady_clock::time_point deadline);
  void AnswerServerRequest(const nlohmann::json& request);

  UniqueFd to_server_;
  UniqueFd from_server_;
  std::string buffer_;
  long long next_id_ = 1;
  unsigned long long not_json_lines_ = 0;
};

}  // namespace gander::vet
