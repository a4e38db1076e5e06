// The start line about limits and process tracking that cannot be had on this host (issue 16,
// items 3 and 4): one warning on stderr, or with --require a refusal.
#pragma once

#include <string>

#include "policies/policy.h"
#include "sandbox/cgroup_limit.h"

namespace gander::launcher {

// Warns once per distinct text (a fallback to --no-namespaces may change it) about what the
// policy's limits or the run's process tracking lack here. With `require` (any --require), a
// memory limit that cannot be enforced is a refusal instead (a process count is only said:
// RLIMIT_NPROC still binds a user, and the default profile sets one): the text to fail with is
// returned (empty: go on). `host`: where a run's cgroup can be made (HostCgroupPlace, read once
// per run). `gvisor`: runsc applies the limits through a cgroup of its own.
std::string CheckLimits(const std::string& name, const policies::Limits& limits,
                        const sandbox::CgroupPlace& host, bool pid_namespace, bool gvisor,
                        bool require, std::string* said);

}  // namespace gander::launcher
