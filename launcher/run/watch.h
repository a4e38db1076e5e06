// Stage "watch" of `gander run`: what watches one extension (its start report, the seccomp
// listener and the egress broker, gVisor's strace log), the relay's redaction of secrets, and
// the supervisor loop's options over them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "launcher/run/session.h"
#include "monitor/supervisor.h"
#include "relay/redactor.h"

namespace gander::launcher {

// The watches of one extension, or nullopt when its broker cannot be built. They are the
// extension's own: a restart drops them with it.
std::optional<std::vector<monitor::Watch>> WatchExtension(Session& s, Extension& x, bool restarted);

// Maps what gVisor wrote to its strace log onto events; false once every writer is gone.
bool ReadStrace(Session& s, Extension& x);

// Publishes the syscall counts so far (every few seconds, so metrics move while it runs).
void PublishCounts(Session& s, Extension& x);

// Once the extension is gone: its broker's connections end with their events (relaying what
// their destinations still send for up to `grace`), and its sockets in the sandbox's namespace
// are closed by a kernel worker (common/background_close.h).
void EndEgress(Extension& x, std::chrono::milliseconds grace);

// The secrets' values redacted from the extension's stdout and stderr, kept current when a
// refresh changes them.
class Redaction {
 public:
  explicit Redaction(Session& s);
  relay::Redactor& out() { return stdout_; }
  relay::Redactor& err() { return stderr_; }

 private:
  std::vector<relay::Secret> Secrets();
  std::function<void(const std::string&, uint64_t)> Events(std::string channel);

  Session& s_;
  std::set<std::string> warned_;
  relay::Redactor stdout_, stderr_;
};

// The supervisor loop's options for the first extension: the relay with its observers and
// redaction, the extension's watches, the collector's, and the periodic counts and drain.
// Nullopt when the first extension cannot be watched.
std::optional<monitor::SupervisorOptions> SuperviseFirst(Session& s, Redaction& redaction);

}  // namespace gander::launcher
