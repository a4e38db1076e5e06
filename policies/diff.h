// The difference between two policies' effective rules (after `extends` is merged), as lines.
#pragma once

#include <string>
#include <vector>

#include "policies/policy.h"

namespace gander::policies {

// One line per rule of a merged policy, variables left as written: "filesystem.read /etc",
// "network.allow api.github.com 443", "limits.processes 1024", "secrets.T from=env ...".
std::vector<std::string> RuleLines(const Policy& merged);

// "- LINE" for each rule only `old_policy` has, then "+ LINE" for each only `new_policy` has,
// each in the order RuleLines gives. Empty when the rules are the same.
std::vector<std::string> DiffRules(const Policy& old_policy, const Policy& new_policy);

}  // namespace gander::policies
