// What the sandbox needs for the egress broker besides its sockets: /etc/resolv.conf pointing
// at the DNS stub (127.0.0.1 inside the sandbox) and an /etc/hosts with loopback names only,
// so that every other name is asked of the stub (and pinned there to the address it returns).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "sandbox/filesystem_plan.h"

namespace gander::sandbox {

// Writes resolv.conf and hosts into `dir` (a host directory that outlives the start) and
// returns bind mounts over the sandbox's /etc/resolv.conf and /etc/hosts, for each one that
// the planned mounts make visible as a regular file.
Result<std::vector<MountOp>> EgressMounts(const std::string& dir,
                                          const std::vector<MountOp>& planned);

}  // namespace gander::sandbox
