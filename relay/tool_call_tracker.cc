#include "relay/tool_call_tracker.h"

#include <algorithm>

namespace gander::relay {
namespace {

constexpr std::string_view kToolsCall = "tools/call";
constexpr std::string_view kCancelled = "notifications/cancelled";

bool IsDenial(const events::Event& e) {
  if (const auto* f = std::get_if<events::FileEvent>(&e.payload))
    return f->result == events::Verdict::kDenied;
  if (const auto* n = std::get_if<events::NetworkEvent>(&e.payload))
    return n->result == events::Verdict::kDenied;
  if (const auto* s = std::get_if<events::SyscallEvent>(&e.payload)) {
    return s->action == events::SyscallAction::kDenied;
  }
  if (const auto* p = std::get_if<events::ProcessEvent>(&e.payload)) return p->error != 0;
  return false;
}

}  // namespace

std::string_view ToString(ToolCallOutcome o) {
  static_assert(std::size(events::kToolOutcomes) ==
                static_cast<size_t>(ToolCallOutcome::kAborted) + 1);
  auto i = static_cast<size_t>(o);
  return i < std::size(events::kToolOutcomes) ? events::kToolOutcomes[i] : "ok";
}

void ToolCallTracker::OnClientMessage(const RpcMessage& m, int64_t now_ns) {
  if (m.session_id) session_id_ = m.session_id;
  if (m.working_dir) working_dir_ = m.working_dir;
  if (m.stateless_version) {
    era_ = McpEra::kStateless;
  } else if (m.kind == RpcKind::kRequest && m.method == "initialize") {
    era_ = McpEra::kHandshake;
  }
  switch (m.kind) {
    case RpcKind::kRequest: {
      if (client_requests_.size() >= kMaxInFlight) {
        ++dropped_requests_;
        return;
      }
      auto [it, inserted] = client_requests_.try_emplace(m.id->Key());
      if (!inserted && it->second.method == kToolsCall) --tool_calls_in_flight_;  // id reused
      it->second = InFlight{*m.id, m.method, m.method == kToolsCall ? m.tool : "", now_ns, {}};
      if (m.method == kToolsCall) {
        ++tool_calls_in_flight_;
        seen_tool_call_ = true;
      }
      break;
    }
    case RpcKind::kNotification:
      if (m.method == kCancelled && m.cancelled_id) {
        Complete(m.cancelled_id->Key(), ToolCallOutcome::kCancelled, 0, now_ns);
      }
      break;
    case RpcKind::kResult:
    case RpcKind::kError:
      // The client answers a request of the extension (sampling, elicitation, roots/list).
      if (!m.id || server_requests_.erase(m.id->Key()) == 0) ++unmatched_responses_;
      break;
    case RpcKind::kInvalid:
      break;
  }
  single_call_ = nullptr;
  if (tool_calls_in_flight_ == 1) {
    for (const auto& [key, r] : client_requests_) {
      if (r.method == kToolsCall) single_call_ = &r;
    }
  }
}

void ToolCallTracker::OnServerMessage(const RpcMessage& m, int64_t now_ns) {
  switch (m.kind) {
    case RpcKind::kRequest:
      if (server_requests_.size() < kMaxInFlight) server_requests_[m.id->Key()] = m.method;
      break;
    case RpcKind::kNotification:
      if (m.method == kCancelled && m.cancelled_id) server_requests_.erase(m.cancelled_id->Key());
      break;
    case RpcKind::kResult: {
      ToolCallOutcome outcome = m.result_is_error ? ToolCallOutcome::kToolError
                                : m.result_type == "input_required"
                                    ? ToolCallOutcome::kInputRequired
                                    : ToolCallOutcome::kOk;
      if (!client_requests_.contains(m.id->Key())) ++unmatched_responses_;
      Complete(m.id->Key(), outcome, 0, now_ns);
      break;
    }
    case RpcKind::kError:
      // An error with a null id answers a request that could not be read: nothing to end.
      if (!m.id || !client_requests_.contains(m.id->Key())) {
        ++unmatched_responses_;
        break;
      }
      Complete(m.id->Key(), ToolCallOutcome::kRpcError, m.error_code, now_ns);
      break;
    case RpcKind::kInvalid:
      break;
  }
}

void ToolCallTracker::Complete(const std::string& key, ToolCallOutcome outcome, int error_code,
                               int64_t now_ns) {
  auto it = client_requests_.find(key);
  if (it == client_requests_.end()) return;
  InFlight r = std::move(it->second);
  client_requests_.erase(it);
  if (r.method != kToolsCall) return;
  --tool_calls_in_flight_;
  single_call_ = nullptr;
  if (tool_calls_in_flight_ == 1) {
    for (const auto& [k, other] : client_requests_) {
      if (other.method == kToolsCall) single_call_ = &other;
    }
  }
  int64_t duration = std::max<int64_t>(0, now_ns - r.started_ns);
  ToolStats& s = StatsFor(r.tool);
  ++s.calls;
  if (outcome == ToolCallOutcome::kToolError || outcome == ToolCallOutcome::kRpcError) ++s.errors;
  size_t bucket = 0;
  while (bucket < std::size(kLatencyBucketsMs) && duration > kLatencyBucketsMs[bucket] * 1000000) {
    ++bucket;
  }
  ++s.latency[bucket];
  completed_.push_back(CompletedToolCall{.call = {r.tool, r.id.text},
                                         .outcome = outcome,
                                         .duration_ns = duration,
                                         .caused = r.caused,
                                         .error_code = error_code,
                                         .session_id = session_id_,
                                         .working_dir = working_dir_});
  if (completed_.size() > kMaxInFlight) completed_.erase(completed_.begin());
}

ToolStats& ToolCallTracker::StatsFor(const std::string& tool) {
  auto it = stats_.find(tool);
  if (it != stats_.end()) return it->second;
  if (stats_.size() >= kMaxTools) return stats_["other"];
  return stats_[tool];
}

events::ToolCallSlot ToolCallTracker::Slot() const {
  if (tool_calls_in_flight_ == 0) {
    return {seen_tool_call_ ? events::ToolCallState::kIdle : events::ToolCallState::kStartup,
            std::nullopt};
  }
  if (tool_calls_in_flight_ > 1 || !single_call_)
    return {events::ToolCallState::kConcurrent, std::nullopt};
  return {events::ToolCallState::kOne, events::ToolCall{single_call_->tool, single_call_->id.text}};
}

void ToolCallTracker::Attribute(const events::Event& event) {
  if (tool_calls_in_flight_ != 1 || !single_call_) return;
  auto& r = const_cast<InFlight&>(*single_call_);
  ToolStats& s = StatsFor(r.tool);
  for (CausedCounts* c : {&r.caused, &s.caused}) {
    if (event.kind() == events::EventKind::kFile) ++c->files;
    if (event.kind() == events::EventKind::kNetwork) ++c->network;
    if (IsDenial(event)) ++c->denials;
  }
}

std::vector<RpcId> ToolCallTracker::AbortInFlight(int64_t now_ns) {
  std::vector<std::string> keys;
  std::vector<RpcId> ids;
  for (const auto& [key, r] : client_requests_) {
    keys.push_back(key);
    ids.push_back(r.id);
  }
  for (const auto& key : keys) {
    if (client_requests_.count(key) && client_requests_[key].method == kToolsCall) {
      Complete(key, ToolCallOutcome::kAborted, 0, now_ns);
    } else {
      client_requests_.erase(key);
    }
  }
  server_requests_.clear();
  return ids;
}

std::vector<CompletedToolCall> ToolCallTracker::TakeCompleted() {
  std::vector<CompletedToolCall> out;
  out.swap(completed_);
  return out;
}

std::vector<std::string> ToolCallTracker::ServerRequestMethods() const {
  std::vector<std::string> out;
  for (const auto& [key, method] : server_requests_) out.push_back(method);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gander::relay
