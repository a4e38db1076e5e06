// What each backend can honour of a policy. One place: `gander run` (with the policy's
// `backend:` or --backend), `gander policy check` and `show` all ask here, so a policy the
// chosen backend cannot enforce is refused when it is loaded, before anything starts.
#pragma once

#include "common/result.h"
#include "policies/policy.h"

namespace gander::policies {

// Succeeds when `backend` honours everything `merged` (extends resolved) asks for. Otherwise
// one error naming every unsupported feature with where it was written, e.g.
//   "backend gvisor cannot honour: secrets.TOKEN.as: file (my.yaml:7:5; /run/secrets is not
//    mounted into the gVisor sandbox yet: use as: env)"
// The native backend honours everything.
Status CheckBackendSupport(const Policy& merged, Backend backend);

}  // namespace gander::policies
