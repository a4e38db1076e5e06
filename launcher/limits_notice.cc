#include "launcher/limits_notice.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

namespace gander::launcher {

std::string CheckLimits(const std::string& name, const policies::Limits& limits,
                        const sandbox::CgroupPlace& host, bool pid_namespace, bool gvisor,
                        bool require, std::string* said) {
  sandbox::CgroupPlace place = host;
  // runsc (rootless) makes its sandbox's cgroup only when it runs as root.
  if (gvisor && geteuid() != 0) {
    place = {};
    place.why_not = "runsc makes its cgroup only as root";
  }
  sandbox::CgroupShortfall shortfall = sandbox::DescribeShortfall(
      place, sandbox::CgroupLimitsOf(limits.memory, limits.processes), pid_namespace);
  if (require && !shortfall.limits.empty()) {
    return "--require: " + shortfall.limits;
  }
  std::string text = shortfall.limits;
  if (!shortfall.processes.empty()) text += (text.empty() ? "" : "; ") + shortfall.processes;
  if (!shortfall.tree.empty()) text += (text.empty() ? "" : "; ") + shortfall.tree;
  if (!text.empty() && *said != text) {
    spdlog::warn("{}: {}", name, text);
    *said = text;
  }
  return "";
}

}  // namespace gander::launcher
