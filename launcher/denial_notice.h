// A denial is never silent to the user: an event sink in front of the real one that remembers
// what gander refused (file outside the sandbox, network, syscall), and says so on stderr in
// one line a person can act on when a tool call fails after a refusal in it, or when the
// extension exits with an error after one (Goose keeps extension stderr in its logs). The
// wording and the suggested policy change are goose doctor's (launcher/goose/probe.h).
#pragma once

#include <map>
#include <string>

#include "events/event_sink.h"
#include "launcher/goose/probe.h"

namespace gander::launcher {

class DenialNotice final : public events::EventSink {
 public:
  // `policy`: where a change would go (the policy file, or "your policy").
  DenialNotice(events::EventSink* inner, std::string extension, std::string policy)
      : inner_(inner), extension_(std::move(extension)), policy_(std::move(policy)) {}
  void Publish(const events::Event& event) override;
  void Flush() override {
    if (inner_) inner_->Flush();
  }
  // At the end of the run: one line when `status` is an error and something was refused.
  void OnExit(int status);

 private:
  void Say(const std::string& what_failed, const goose::Refusal& r) const;
  events::EventSink* inner_;
  std::string extension_, policy_;
  std::map<std::string, goose::Refusal> by_call_;  // the last refusal in each tool call
  std::optional<goose::Refusal> last_;
  uint64_t count_ = 0;
};

}  // namespace gander::launcher
