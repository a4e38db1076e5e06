// `gander policy suggest` and `gander policy diff`: baselining from learning runs' audit logs
// (learn/) and comparing policies (policies/diff.h).
#pragma once

#include <string>
#include <vector>

namespace gander::launcher {

struct SuggestOptions {
  std::string name;               // the extension; empty (with --from): every line
  std::vector<std::string> from;  // audit logs; empty: DefaultAuditLogPath(name)
  std::string workspace;  // empty: the learning runs' (the latest), else the current directory
  std::string base = "default";  // profile name or policy file the suggestion extends
  std::string check;             // non-empty: check this policy (name or file) instead
  std::string format = "yaml";   // yaml (a policy) or oci-seccomp (an OCI seccomp profile)
};

// Prints the suggestion (a policy, or with format oci-seccomp an OCI runtime-spec seccomp
// profile; with `check`, what is not covered) on stdout; 0 when fine, 1 when
// `check` found behaviour the policy does not cover, 2 on usage errors.
int PolicySuggest(const SuggestOptions& options);

// Prints "- RULE" / "+ RULE" lines; 0 when the effective rules are the same, 1 when they differ.
int PolicyDiff(const std::string& old_policy, const std::string& new_policy);

}  // namespace gander::launcher
