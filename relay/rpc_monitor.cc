#include "relay/rpc_monitor.h"

#include <time.h>

namespace gander::relay {

int64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

RpcMonitor::RpcMonitor(std::string extension, events::BoundedEventQueue* queue, size_t max_line)
    : extension_(std::move(extension)), queue_(queue), parser_(max_line) {}

LineVerdict RpcMonitor::OnLine(std::string_view line, bool from_client) {
  ParsedLine parsed = parser_.Parse(line);
  if (!parsed.json) return LineVerdict::kNotJson;
  int64_t now = MonotonicNowNs();
  if (from_client) {
    if (!parsed.batch && parsed.messages.size() == 1) {
      const RpcMessage& m = parsed.messages[0];
      if (m.kind == RpcKind::kRequest && m.method == "initialize") {
        initialize_line_ = std::string(line);
        initialize_id_ = m.id;
        initialize_answered_ = false;
      } else if (m.kind == RpcKind::kNotification && m.method == "notifications/initialized") {
        initialized_line_ = std::string(line);
      }
    }
    for (const RpcMessage& m : parsed.messages) tracker_.OnClientMessage(m, now);
  } else {
    if (!parsed.batch && parsed.messages.size() == 1) {
      const RpcMessage& m = parsed.messages[0];
      if ((m.kind == RpcKind::kResult || m.kind == RpcKind::kError) && m.id == initialize_id_) {
        if (swallow_initialize_answer_) {
          swallow_initialize_answer_ = false;
          ++swallowed_;
          return LineVerdict::kSwallow;
        }
        if (!parsed.client_refuses) initialize_answered_ = true;
      }
    }
    // The client refuses the line: for it nothing ended, so nothing ends here either.
    if (parsed.client_refuses) {
      ++refused_server_lines_;
      return LineVerdict::kForward;
    }
    for (const RpcMessage& m : parsed.messages) tracker_.OnServerMessage(m, now);
  }
  PushCompleted();
  return LineVerdict::kForward;
}

void RpcMonitor::PushCompleted() {
  for (CompletedToolCall& c : tracker_.TakeCompleted()) {
    if (!queue_) continue;
    events::Event e;
    e.time_ns = events::WallClockNowNs();
    e.extension = extension_;
    e.tool_call = {events::ToolCallState::kOne, c.call};
    e.payload = events::ToolEvent{.name = c.call.tool,
                                  .request_id = c.call.request_id,
                                  .outcome = std::string(ToString(c.outcome)),
                                  .duration_ns = c.duration_ns,
                                  .error_code = c.error_code,
                                  .files = c.caused.files,
                                  .network = c.caused.network,
                                  .denials = c.caused.denials,
                                  .session_id = std::move(c.session_id),
                                  .working_dir = std::move(c.working_dir)};
    queue_->Push(std::move(e));
  }
}

std::string RpcMonitor::FailInFlight(std::string_view reason) {
  std::string out;
  std::string message;
  for (char c : reason) {
    if (c == '"' || c == '\\') message += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) message += c;
  }
  const bool handshake_pending = initialize_line_ && !initialize_answered_;
  for (const RpcId& id : tracker_.AbortInFlight(MonotonicNowNs())) {
    if (handshake_pending && id == initialize_id_) continue;  // the fresh extension answers it
    out += R"({"jsonrpc":"2.0","id":)" + id.ToJson() + R"(,"error":{"code":-32603,"message":")" +
           message + "\"}}\n";
  }
  PushCompleted();
  return out;
}

std::string RpcMonitor::HandshakeReplay() {
  if (!initialize_line_) return "";
  swallow_initialize_answer_ = initialize_answered_;
  std::string out = *initialize_line_ + "\n";
  if (initialized_line_) out += *initialized_line_ + "\n";
  return out;
}

}  // namespace gander::relay
