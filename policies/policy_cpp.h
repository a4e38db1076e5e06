// A parsed policy written as C++: the build turns each shipped profile into code that makes the
// same Policy (policies/profile_gen.cc), so that a start does not parse the profile's YAML
// again (yaml-cpp took ~0.45 ms of every start for the default profile). The loader uses the
// generated policy only for the text it was generated from (parsed_profiles.h).
#pragma once

#include <string>

#include "policies/policy.h"

namespace gander::policies {

// A C++ expression of type Policy equal to `policy`, in which every string equal to `source`
// (the policy's own name, in its `source`, `chain` and marks) is the identifier `name_var`
// instead, so that one generated function serves the built-in name and an installed file's path.
std::string PolicyToCpp(const Policy& policy, const std::string& source,
                        const std::string& name_var);

}  // namespace gander::policies
