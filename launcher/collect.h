// `gander collect ARGS...`: runs the collector daemon, which lives in its own executable
// (gander-collect, next to gander) so that `gander run` never loads Prometheus.
#pragma once

#include <string>
#include <vector>

namespace gander::launcher {

// Execs gander-collect with `args`; returns only on failure (exit status 127).
int ExecCollector(const std::vector<std::string>& args);

}  // namespace gander::launcher
