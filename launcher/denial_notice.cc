#include "launcher/denial_notice.h"

#include <spdlog/spdlog.h>

#include "events/event_json.h"

namespace gander::launcher {
namespace {

// Whether goose::RefusalsIn could name a refusal in this event: what it requires of the event's
// own fields, tested before the event is written as JSON and read back. Every allowed open of a
// start (hundreds for a node server) stops here; RefusalsIn still decides for the rest.
bool MayBeRefusal(const events::Event& event) {
  if (event.install_phase) return false;
  if (const auto* f = std::get_if<events::FileEvent>(&event.payload)) {
    return f->result != events::Verdict::kWouldDeny &&
           (f->path_class == events::PathClass::kOutside ||
            f->path_class == events::PathClass::kDenied || f->result == events::Verdict::kDenied);
  }
  if (const auto* n = std::get_if<events::NetworkEvent>(&event.payload)) {
    return n->result == events::Verdict::kDenied;
  }
  if (const auto* s = std::get_if<events::SyscallEvent>(&event.payload)) {
    return s->action == events::SyscallAction::kDenied;
  }
  return false;
}

}  // namespace

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
  if (!MayBeRefusal(event)) return;
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
