#include "policies/backend.h"

#include "policies/parser.h"

namespace gander::policies {

Status CheckBackendSupport(const Policy& merged, Backend backend) {
  if (backend == Backend::kNative) return {};
  std::vector<std::string> refused;
  for (const NetworkRule& rule : merged.network.allow) {
    refused.push_back("network.allow (" + FormatMark(rule.mark) + ": " + rule.host +
                      "; gander's egress broker works with the native backend only, gVisor "
                      "runs with --network=none)");
  }
  if (refused.empty()) return {};
  std::string message = "backend " + std::string(ToString(backend)) + " cannot honour:";
  for (size_t i = 0; i < refused.size(); ++i) message += (i ? "; " : " ") + refused[i];
  std::string where = merged.backend ? FormatMark(merged.backend_mark) + ": " : "";
  return MakeError(where + message);
}

}  // namespace gander::policies
