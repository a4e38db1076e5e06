// A cgroup of its own for each run (issue 16, items 3 and 4): the policy's limits.memory and
// limits.processes bind the whole sandbox (MAP_SHARED, memfds and tmpfs pages included, which
// RLIMIT_DATA does not see), and at the end every process in it is killed, whatever it did to
// leave the process tree.
//
// Where one can be had:
//  - as root, cgroup v2 with the memory controller: HIERARCHY/gander/gander-run-PID-N
//    (memory.max, memory.swap.max, pids.max, killed with cgroup.kill);
//  - as root, the v1 controllers (memory, pids, freezer), each under gander's own cgroup in
//    that hierarchy (memory.limit_in_bytes, memory.memsw.limit_in_bytes, pids.max; killed by
//    freezing, SIGKILLing every pid in cgroup.procs and thawing, until it is empty);
//  - as a user, a cgroup v2 subtree delegated by the systemd user manager (user@UID.service),
//    when gander runs inside it: USER@UID.service/gander/gander-run-PID-N.
// The sandbox init is moved in before it may exec the extension (sandbox.cc). A run whose
// gander was SIGKILLed leaves its directory: the next start kills what is left in those of
// gone gander processes and removes them (SweepStaleCgroups), and runsc's gander-PID-* ones too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sandbox/cgroup_view.h"

namespace gander::sandbox {

struct CgroupLimits {
  uint64_t memory = 0;  // bytes, 0: none
  uint64_t pids = 0;    // processes and threads, 0: none
  friend bool operator==(const CgroupLimits&, const CgroupLimits&) = default;
};

enum class CgroupKind { kNone, kV2, kV1, kV2Delegated };
const char* CgroupKindName(CgroupKind kind);

// Where this process may make the run's cgroups, found without making one.
struct CgroupPlace {
  CgroupKind kind = CgroupKind::kNone;
  // The directories a run's cgroups are made in: one with v2; with v1 the memory hierarchy's
  // first, then pids and freezer where those are mounted and writable.
  std::vector<std::string> parents;
  bool memory = false;   // memory can be limited
  bool pids = false;     // pids can be limited
  bool freezer = false;  // v1: parents.back() is the freezer's
  std::string why_not;   // kind == kNone: why no cgroup can be had here
};

// Pure: from the hierarchies (HostCgroupMounts), the effective uid, and what `writable(dir)`
// and `controllers(dir)` (a v2 directory's cgroup.controllers) report.
struct CgroupProbe {
  bool (*writable)(const std::string& dir);
  std::string (*controllers)(const std::string& dir);
};
CgroupPlace FindCgroupPlace(const std::vector<CgroupMount>& mounts, uid_t euid,
                            const CgroupProbe& probe);
// The same on this host; given its hierarchies (HostCgroupMounts) when the caller read them.
CgroupPlace HostCgroupPlace();
CgroupPlace HostCgroupPlace(const std::vector<CgroupMount>& mounts);

// One run's cgroups. Killing and removing happens in the destructor: every process still in
// them is SIGKILLed and waited for (pidfds), then the directories are removed.
class RunCgroup {
 public:
  RunCgroup() = default;
  RunCgroup(RunCgroup&& other) noexcept { *this = std::move(other); }
  RunCgroup& operator=(RunCgroup&& other) noexcept;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  ~RunCgroup() { Remove(); }

  // A fresh name (gander-run-PID-N), known before the directories exist: the filesystem plan
  // grants read of them (PointAtRunCgroup).
  static std::string NextName();
  // Makes the directories `name` in each parent and writes the limits; removes stale ones
  // first.
  static Result<RunCgroup> Create(const CgroupPlace& place, const CgroupLimits& limits,
                                  const std::string& name);

  bool active() const { return !dirs_.empty(); }
  // Moves `pid` (and the threads of its process) into every directory.
  Status Enter(pid_t pid) const;
  // The cgroup.procs the sandbox init lists at gander's death (no pid namespace).
  std::string ProcsPath() const { return dirs_.empty() ? "" : dirs_.front() + "/cgroup.procs"; }
  // Kills every process in it and waits until none is left (bounded: a process stuck in the
  // kernel is reported, not waited for forever). Returns how many it killed.
  int KillAll();
  void Remove();
  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  std::vector<std::string> dirs_;
  bool v2_ = false;
  bool freezer_ = false;
};

// The sandbox's own cgroup directories as the sandbox will see them once moved into the run's
// cgroup `name`: each hierarchy the run's cgroup is made in points at it (HostCgroupMounts gave
// gander's own).
void PointAtRunCgroup(std::vector<CgroupMount>& mounts, const CgroupPlace& place,
                      const std::string& name);

// Removes gander-run-PID-* (and runsc's gander-PID-*) directories of gander processes that are
// gone, in each parent. One still holding processes (the gone gander's init on its way out,
// or what outlived it: `pkill -9 gander` kills the init too) has those of our own pid
// namespace killed first; one holding others is left as it is.
void SweepStaleCgroups(const std::vector<std::string>& parents);

// Where runsc makes its own cgroups (gander-PID-NAME, the container id): at each hierarchy's
// root and under gander's own cgroup in it. A gVisor run whose gander was SIGKILLed leaves
// them; StartGvisor sweeps these parents (as root: only root's runsc makes them).
std::vector<std::string> RunscCgroupParents(const std::vector<CgroupMount>& mounts);

// What the policy asks of a cgroup: limits.memory, limits.processes.
CgroupLimits CgroupLimitsOf(std::optional<uint64_t> memory, std::optional<uint64_t> processes);

// What cannot be had here, each a clause for the start line and `gander doctor`; empty when
// nothing is missing. `limits`/`processes`: the policy's memory or process count cannot bind
// the whole sandbox. `tree`: neither a pid namespace nor a cgroup holds every descendant.
struct CgroupShortfall {
  std::string limits;     // limits.memory: refused with --require
  std::string processes;  // limits.processes: said only (RLIMIT_NPROC still binds a user)
  std::string tree;
};
CgroupShortfall DescribeShortfall(const CgroupPlace& place, const CgroupLimits& wanted,
                                  bool pid_namespace);

// Pure: the gander pid a sweepable directory name carries, or 0 for any other name.
pid_t StaleCgroupOwner(const std::string& name);

}  // namespace gander::sandbox
