#include "launcher/denial_notice.h"

#include <spdlog/spdlog.h>

#include "events/event_json.h"

namespace gander::launcher {

void DenialNotice::Publish(const events::Event& event) {
  if (inner_) inner_->Publish(event);
  if (const auto* tool = std::get_if<events::ToolEvent>(&event.payload)) {
    auto it = by_call_.find(tool->request_id);
    if (it != by_call_.end()) {
      if (tool->outcome == "tool_error" || tool->outcome == "rpc_error") {
        Say("tool call " + tool->name + " failed", it->second);
      }
      by_call_.erase(it);
    }
    return;
  }
  if (!std::holds_alternative<events::FileEvent>(event.payload) &&
      !std::holds_alternative<events::NetworkEvent>(event.payload) &&
      !std::holds_alternative<events::SyscallEvent>(event.payload)) {
    return;
  }
  auto refusals = goose::RefusalsIn(events::ToJsonLine(event));
  if (refusals.empty()) return;
  ++count_;
  last_ = refusals.front();
  if (event.tool_call.state == events::ToolCallState::kOne && event.tool_call.call) {
    by_call_[event.tool_call.call->request_id] = refusals.front();
  }
}

void DenialNotice::OnExit(int status) {
  if (status != 0 && last_) {
    Say("exited with status " + std::to_string(status) + " after " + std::to_string(count_) +
            " refusal(s)",
        *last_);
  }
}

void DenialNotice::Say(const std::string& what_failed, const goose::Refusal& r) const {
  spdlog::warn("{}: {}: gander refused {}; to allow it: {} in {} (`gander goose doctor` shows all)",
               extension_, what_failed, r.what, r.fix, policy_);
}

}  // namespace gander::launcher
