// The OCI bundle gVisor runs: config.json generated from the same compiled policy the native
// backend uses (mount plan, environment, rlimits, cwd, resolved command). Pure: the caller
// writes the text and creates the root directory.
#pragma once

#include <sys/resource.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/filesystem_plan.h"

namespace gander::sandbox::gvisor {

struct BundleSpec {
  std::string root;                             // the (empty, private) root directory
  std::vector<MountOp> mounts;                  // PlanFilesystem's, with a mount namespace
  std::vector<std::string> argv;                // argv[0] is the resolved, absolute command
  std::vector<std::string> envp;                // NAME=value, exactly what the extension gets
  std::string cwd;                              // absolute, inside the sandbox
  std::vector<std::pair<int, rlim_t>> rlimits;  // RLIMIT_* -> soft and hard value
  uint64_t tmpfs_size = 0;                      // size= and nr_inodes= of each private tmpfs
  uint64_t tmpfs_inodes = 0;                    // (0: none)
  // linux.resources: runsc puts the sandbox (sentry, gofer and all) in a cgroup with these
  // where it may make one (root here), which is what binds the extension's memory: the
  // sentry's own accounting does not. 0: none.
  uint64_t memory_limit = 0;  // memory.limit and memory.swap (the same: no swap beyond it)
  uint64_t pids_limit = 0;
  std::string hostname = "gander";
  // No network namespace of the container's own: the sandbox uses runsc's (--network=host,
  // an empty namespace gander made for its egress broker).
  bool host_network = false;
  // `syscalls.allow` (enforce mode): OCI `linux.seccomp` allowing only these (and
  // policies::kImplicitSyscalls), every other syscall refused. Unset: every syscall but the
  // floor's. runsc applies it inside the sandbox with --oci-seccomp, always set.
  std::optional<std::vector<std::string>> syscalls_allow;
};

// config.json. Binds become OCI bind mounts (ro unless writable, noexec unless executable),
// private paths tmpfs, masks a read-only tmpfs (directories) or a read-only bind of /dev/null
// (files); /proc and /dev are gVisor's own. kSymlink entries are not mounts: the caller
// creates them in the root directory (RootSymlinks).
std::string OciConfig(const BundleSpec& spec);

// The rules of the bundle's linux.seccomp (one JSON object each): gander's dangerous-syscall
// floor refused under a default that allows (no `allow`), or `allow` minus the floor under a
// default that refuses. Exposed for unit tests.
std::vector<std::string> FloorSeccompRules(const std::optional<std::vector<std::string>>& allow);

// The symlinks the plan puts in the new root (target path -> link text).
std::vector<std::pair<std::string, std::string>> RootSymlinks(const std::vector<MountOp>& mounts);

// The OCI name of an rlimit resource ("RLIMIT_NOFILE"), "" for one OCI does not know.
std::string RlimitName(int resource);

}  // namespace gander::sandbox::gvisor
