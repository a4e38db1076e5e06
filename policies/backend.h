// What each backend can honour of a policy. One place: `gander run` (with the policy's
// `backend:` or --backend), `gander policy check` and `show` all ask here, so a policy the
// chosen backend cannot enforce is refused when it is loaded, before anything starts.
#pragma once

#include "common/result.h"
#include "policies/policy.h"

namespace gander::policies {

// What `gander run` asks of the backend beyond the policy (its command-line flags).
struct LaunchFlags {
  bool no_namespaces = false;  // --no-namespaces: Landlock + seccomp only, native sandbox
};

// Succeeds when `backend` honours everything `merged` (extends resolved) and `flags` ask for.
// Otherwise one error naming every unsupported feature with where it was written ("my.yaml:3:10:
// backend gvisor cannot honour: FEATURE (my.yaml:7:5; why)"). Both backends honour every policy
// feature today; gVisor refuses --no-namespaces (runsc always makes its own namespaces).
Status CheckBackendSupport(const Policy& merged, Backend backend, const LaunchFlags& flags = {});

}  // namespace gander::policies
