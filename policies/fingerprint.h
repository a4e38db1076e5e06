// A policy's fingerprint: SHA-256 of a canonical text of the expanded policy, so that metrics
// and logs can say "this run enforced exactly that policy" without carrying it. Two runs with
// the same paths, limits, network rules, environment rules and monitor settings have the same
// fingerprint, whatever file layout or `extends` chain produced them.
#pragma once

#include <string>

#include "policies/policy.h"

namespace gander::policies {

// One line per rule, in a fixed order ("read /usr", "limit processes 1024", ...).
std::string CanonicalText(const ExpandedPolicy& policy);

// Lower-case hex SHA-256 of CanonicalText.
std::string PolicySha256(const ExpandedPolicy& policy);

}  // namespace gander::policies
