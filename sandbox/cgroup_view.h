// The sandbox's view of its own cgroup: runtimes size their heaps from the cgroup's memory
// limits (node/libuv reads /proc/self/cgroup, then memory.limit_in_bytes and
// memory.soft_limit_in_bytes on cgroup v1, memory.max and memory.high on v2). The sandbox
// shows them read-only so those reads succeed and nothing is denied:
//  - with a mount namespace (the sandbox has its own cgroup namespace, rooted at its cgroup)
//    each cgroup hierarchy the host mounts under /sys/fs/cgroup is mounted afresh, read-only,
//    at the same place; inside the cgroup namespace its root is the sandbox's own cgroup;
//  - without one, Landlock grants read of the process's own cgroup directory in each
//    hierarchy (the paths /proc/self/cgroup names from the host's view).
// Parsing is pure (host files passed in) so unit tests cover it.
#pragma once

#include <string>
#include <vector>

namespace gander::sandbox {

struct CgroupMount {
  std::string type;        // "cgroup" (v1) or "cgroup2"
  std::string options;     // v1: the hierarchy's controllers ("memory", "cpu,cpuacct",
                           // "name=systemd"); v2: empty
  std::string mountpoint;  // on the host and in the sandbox, e.g. /sys/fs/cgroup/memory
  std::string own_dir;     // the caller's own cgroup in it on the host; empty if not visible
};

// From /proc/self/mountinfo and /proc/self/cgroup: the cgroup hierarchies mounted under
// /sys/fs/cgroup, each with the caller's cgroup directory in it.
std::vector<CgroupMount> ParseCgroupMounts(const std::string& mountinfo, const std::string& cgroup);

// The same for this process, read from /proc/self.
std::vector<CgroupMount> HostCgroupMounts();

// The paths the sandbox reads its limits from: the mountpoints with a mount namespace (a fresh
// mount's root is the sandbox's cgroup), the own directories without, but never a hierarchy's
// root (the run's cgroup, PointAtRunCgroup, is below it where one can be had).
std::vector<std::string> CgroupReadPaths(const std::vector<CgroupMount>& mounts,
                                         bool with_mount_namespace);

}  // namespace gander::sandbox
