#include "policies/backend.h"

#include "policies/parser.h"

namespace gander::policies {

Status CheckBackendSupport(const Policy& merged, Backend backend, const LaunchFlags& flags) {
  // Both backends honour every feature of policy v1 today: gVisor takes egress through
  // gander's broker and DNS stub, secrets as files at /run/secrets, monitor and learn modes,
  // and `syscalls.allow` as OCI seccomp applied by runsc inside the sandbox (--oci-seccomp).
  // A feature a backend cannot honour is refused here, naming each entry with FormatMark
  // (policies/parser.h): "my.yaml:3:10: backend gvisor cannot honour: FEATURE (my.yaml:7:5;
  // why)".
  (void)merged;
  if (backend == Backend::kGvisor && flags.no_namespaces) {
    return MakeError("--backend gvisor: --no-namespaces is for the native backend only");
  }
  return {};
}

}  // namespace gander::policies
