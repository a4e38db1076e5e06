#include "policies/backend.h"

namespace gander::policies {

Status CheckBackendSupport(const Policy& merged, Backend backend, const LaunchFlags& flags) {
  // gVisor honours every feature of policy v1 today: egress through gander's broker and DNS
  // stub, secrets as files at /run/secrets, monitor and learn modes. A feature a backend
  // cannot honour is refused here, naming each entry with FormatMark (policies/parser.h).
  (void)merged;
  if (backend == Backend::kGvisor && flags.no_namespaces) {
    return MakeError("--backend gvisor: --no-namespaces is for the native backend only");
  }
  return {};
}

}  // namespace gander::policies
