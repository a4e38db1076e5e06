#include "policies/backend.h"

#include "policies/parser.h"

namespace gander::policies {

Status CheckBackendSupport(const Policy& merged, Backend backend) {
  // A feature a backend cannot honour is refused here, naming each entry with FormatMark.
  // gVisor honours the rest of policy v1: egress through gander's broker and DNS stub, secrets
  // as files at /run/secrets, monitor and learn modes.
  if (backend != Backend::kGvisor) return {};
  std::vector<std::string> refused;
  if (merged.syscalls.allow) {
    // The sentry implements the syscalls itself; gander's own filter only reaches runsc's
    // host-side processes (launcher/seccomp_filter.h, broker_only). runsc's -oci-seccomp would
    // apply an OCI profile inside the sandbox; not wired up yet.
    refused.push_back("syscalls.allow (" + FormatMark(merged.syscalls.allow_mark) +
                      "; the syscall allowlist is enforced by gander's seccomp filter, which "
                      "gVisor's sentry answers in place of the host kernel)");
  }
  if (refused.empty()) return {};
  std::string where = merged.backend ? FormatMark(merged.backend_mark) + ": " : "";
  std::string message = where + "backend gvisor cannot honour: ";
  for (size_t i = 0; i < refused.size(); ++i) message += (i ? ", " : "") + refused[i];
  return MakeError(message);
}

}  // namespace gander::policies
