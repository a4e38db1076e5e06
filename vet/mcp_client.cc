#include "vet/mcp_client.h"

#include <poll.h>

#include <cerrno>

namespace gander::vet {

using nlohmann::json;

McpClient::McpClient(UniqueFd to_server, UniqueFd from_server)
    : to_server_(std::move(to_server)), from_server_(std::move(from_server)) {}

Result<void> McpClient::Send(const json& message) {
  if (!to_server_) return Error{EPIPE, "the server's stdin is closed"};
  std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(to_server_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("writing to the server");
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<std::string> McpClient::ReadLine(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Error{ETIMEDOUT, "no answer in time"};
    pollfd p{from_server_.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ErrnoError("poll");
    if (ready == 0) continue;
    char chunk[65536];
    ssize_t n = ::read(from_server_.get(), chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("reading from the server");
    if (n == 0) return Error{EPIPE, "the server closed its stdout"};
    buffer_.append(chunk, static_cast<size_t>(n));
    // The relay forwards at most 64 MiB of a line before cutting it; a longer one is no answer.
    if (buffer_.size() > (64u << 20)) return Error{EMSGSIZE, "a line longer than 64 MiB"};
  }
}

void McpClient::AnswerServerRequest(const json& request) {
  json answer = {{"jsonrpc", "2.0"}, {"id", request["id"]}};
  if (request.value("method", "") == "ping") {
    answer["result"] = json::object();
  } else {
    answer["error"] = {{"code", -32601}, {"message", "gander audit does not offer this"}};
  }
  (void)Send(answer);
}

Result<json> McpClient::Request(const std::string& method, const json& params,
                                std::chrono::milliseconds timeout) {
  const long long id = next_id_++;
  json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
  if (auto sent = Send(request); !sent) return sent.error();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto line = ReadLine(deadline);
    if (!line) {
      if (line.error().code == ETIMEDOUT) {
        (void)Notify("notifications/cancelled", {{"requestId", id}, {"reason", "timeout"}});
      }
      return std::move(line).error().Context(method);
    }
    if (line->empty() || *line == "\r") continue;
    json message = json::parse(*line, nullptr, false);
    if (message.is_discarded() || !message.is_object()) {
      ++not_json_lines_;
      continue;
    }
    if (message.contains("method")) {
      if (message.contains("id")) AnswerServerRequest(message);
      continue;  // notifications (logging, progress, list_changed): not needed here
    }
    if (!message.contains("id") || message["id"] != id) continue;
    if (message.contains("error")) {
      const json& error = message["error"];
      std::string text = error.is_object() ? error.value("message", "") : error.dump();
      long long code = error.is_object() ? error.value("code", 0LL) : 0;
      return MakeError(method + ": JSON-RPC error " + std::to_string(code) + ": " + text);
    }
    return message.contains("result") ? message["result"] : json::object();
  }
}

Result<void> McpClient::Notify(const std::string& method, const json& params) {
  json message = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = params;
  return Send(message);
}

void McpClient::CloseInput() { to_server_.Reset(); }

}  // namespace gander::vet
