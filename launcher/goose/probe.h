// `gander goose doctor`'s live check: one extension started the way Goose starts it (its cmd
// and args, Goose's environment plus its envs, Goose's working directory), driven through
// initialize and tools/list within a time limit; when that fails, the server's last stderr
// lines and what gander refused meanwhile (read from the extension's audit log), each with
// the policy change that would allow it.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gander::launcher::goose {

struct ProbeResult {
  bool ok = false;
  std::string detail;                    // "12 tools" or what went wrong
  std::vector<std::string> stderr_tail;  // the server's (and gander's) last stderr lines
};

ProbeResult ProbeExtension(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& envs, const std::string& cwd,
                           std::chrono::milliseconds limit);

// One refusal from an audit log line, with the policy change that would allow it; empty when
// the line is not a refusal. Pure.
struct Refusal {
  std::string what;  // "open /srv/data/x (read): not in the sandbox"
  std::string fix;   // "filesystem.read: [/srv/data]"
};
std::vector<Refusal> RefusalsIn(const std::string& audit_lines);

}  // namespace gander::launcher::goose
