// What each backend can honour of a policy. One place: `gander run` (with the policy's
// `backend:` or --backend), `gander policy check` and `show` all ask here, so a policy the
// chosen backend cannot enforce is refused when it is loaded, before anything starts.
#pragma once

#include "common/result.h"
#include "policies/policy.h"

namespace gander::policies {

// Succeeds when `backend` honours everything `merged` (extends resolved) asks for. Otherwise
// one error naming every unsupported feature with where it was written ("my.yaml:3:10: backend
// gvisor cannot honour: FEATURE (my.yaml:7:5; why)"). Both backends honour everything today.
Status CheckBackendSupport(const Policy& merged, Backend backend);

}  // namespace gander::policies
