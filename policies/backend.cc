#include "policies/backend.h"

#include "policies/parser.h"

namespace gander::policies {

Status CheckBackendSupport(const Policy& merged, Backend backend) {
  if (backend == Backend::kNative) return {};
  std::vector<std::string> refused;
  for (const auto& [name, rule] : merged.secrets) {
    if (rule.as == SecretDelivery::kFile) {
      refused.push_back("secrets." + name + ".as: file (" + FormatMark(rule.mark) +
                        "; /run/secrets is not mounted into the gVisor sandbox yet: use as: env)");
    }
  }
  if (refused.empty()) return {};
  std::string message = "backend " + std::string(ToString(backend)) + " cannot honour:";
  for (size_t i = 0; i < refused.size(); ++i) message += (i ? "; " : " ") + refused[i];
  std::string where = merged.backend ? FormatMark(merged.backend_mark) + ": " : "";
  return MakeError(where + message);
}

}  // namespace gander::policies
