// What an extension may never write in the user's home, and what becomes of a write grant on
// the home itself. Persistence through the home is the cheapest escape there is: a line
// appended to ~/.bashrc runs outside any sandbox at the next shell. Pure: the caller passes the
// home and the environment, the plan (filesystem_plan.h) turns the list into mounts and rules.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "monitor/path_classifier.h"
#include "policies/policy.h"

namespace gander::sandbox {

// Paths in `home` that run code or decide what runs at the user's next login, shell, desktop
// session or Goose start, and gander's own configuration, state and other extensions' install
// caches: readable where a grant shows them, never writable, and never creatable where they do
// not exist yet. XDG_CONFIG_HOME / XDG_DATA_HOME / XDG_STATE_HOME add their own copies.
// `installing`: the install phase, whose one write grant is its own cache: the install caches
// are then left off (no grant reaches another extension's).
std::vector<std::string> ProtectedHomePaths(const std::string& home,
                                            const std::map<std::string, std::string>& environ,
                                            bool installing = false);

// A write grant that is `home`, an ancestor of it or `/` (the workspace when Goose starts from
// ~) is not made recursively writable unless `allow_home_write`: it becomes a read grant, and
// the returned lines (for stderr) say so. The policy's other write grants (goose wrap's
// directory arguments, ${DATA}) stay as they are. With `allow_home_write` the grant stays and
// the lines say what stays read-only all the same (ProtectedHomePaths).
std::vector<std::string> NarrowHomeWrites(policies::ExpandedPolicy& policy, const std::string& home,
                                          bool allow_home_write);

// The monitor's classifier rules for `policy` as the sandbox enforces it once the guard has
// applied, so that a file event (and `--mode monitor`'s would_deny) says what the mount view
// and Landlock do: a protected path shown inside a write grant or the workspace is read-only
// (a write grant on or inside one is a read grant), and a workspace NarrowHomeWrites made
// read-only (`workspace_writable` false) is no workspace class but a read grant.
// `extra_exec` and `system` as for ClassifierRules::From.
monitor::ClassifierRules GuardedClassifierRules(policies::ExpandedPolicy policy,
                                                const std::string& workspace,
                                                bool workspace_writable,
                                                const std::vector<std::string>& protected_paths,
                                                const std::vector<std::string>& extra_exec,
                                                const std::vector<std::string>& system);

}  // namespace gander::sandbox
