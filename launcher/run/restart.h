// Stage "restart" of `gander run`: a fresh sandbox behind the relay, for an environment secret
// that was refreshed. The supervisor kills the extension and drops its watches, then asks here
// for a fresh one (same policy, same isolation, the secrets' current values in its
// environment).
#pragma once

#include "launcher/run/session.h"
#include "monitor/supervisor.h"

namespace gander::launcher {

// The restart control the supervisor loop calls, wired to the secrets' hooks. Lives as long as
// the loop runs.
class Restarts {
 public:
  explicit Restarts(Session& s);
  monitor::RestartControl& control() { return control_; }

 private:
  std::optional<monitor::ExtensionHandles> Start();
  void OnRestart(const std::string& reason, bool ok);

  Session& s_;
  monitor::RestartControl control_;
  int64_t began_ms_ = 0;
};

}  // namespace gander::launcher
