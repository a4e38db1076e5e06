// The filesystem view of a sandbox, computed in the parent as plain data: which mounts build
// the new root (mount namespace) and which Landlock rules mirror them. Pure given a PathProbe,
// so unit tests cover it with a fake filesystem.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/path.h"
#include "policies/policy.h"
#include "sandbox/cgroup_view.h"
#include "sandbox/landlock.h"

namespace gander::sandbox {

// What the plan needs to know about a host path.
struct PathInfo {
  bool exists = false;
  bool is_dir = false;
  bool is_symlink = false;
  std::string link_target;  // as stored in the link, when is_symlink
  std::string canonical;    // every symlink resolved (realpath), when it exists
};
using PathProbe = std::function<PathInfo(const std::string&)>;
// Lists a directory's entry names (for carving denied paths out of Landlock rules).
using DirLister = std::function<std::vector<std::string>(const std::string&)>;

PathInfo ProbeHostPath(const std::string& path);
std::vector<std::string> ListHostDir(const std::string& path);

struct MountOp {
  enum class Kind {
    kBind,      // source (host) -> target, read-only unless writable
    kTmpfs,     // an empty private tmpfs (writable)
    kMaskDir,   // an empty read-only tmpfs over a denied directory
    kMaskFile,  // /dev/null over a denied file
    kSymlink,   // a symlink at target pointing to source (verbatim link text)
    kProc,      // a fresh /proc for the sandbox's pid namespace
    kDev,       // a minimal /dev: null zero full random urandom, fd links, shm
    kCgroup,    // a fresh read-only cgroup mount: source is the type (cgroup, cgroup2),
                // options the v1 hierarchy's controllers (sandbox/cgroup_view.h)
  };
  Kind kind = Kind::kBind;
  std::string source;
  std::string target;
  bool writable = false;
  bool executable = false;
  std::string options = "";  // kCgroup: mount data
  // kBind: an entry of a directory split around protected paths (ProtectBinds): gone by the
  // time the child mounts it (a file the user deleted meanwhile), it is skipped, not a failure.
  bool optional = false;
};

// Paths gander adds on top of the policy (the resolved command, its interpreter and their
// install prefixes): read and execute.
struct FilesystemInputs {
  policies::ExpandedPolicy policy;
  std::vector<std::string> extra_exec;
  // Without a mount namespace, each private path is replaced by a host directory the caller
  // created (policy path -> host dir).
  std::vector<std::pair<std::string, std::string>> private_host_dirs;
  // The host's cgroup hierarchies (HostCgroupMounts): shown read-only, so that runtimes read
  // their memory limits (with a mount namespace, mounted afresh; without, Landlock grants the
  // own cgroup directories).
  std::vector<CgroupMount> cgroups = {};
  // Readable where a grant shows them, never writable nor creatable (ProtectedHomePaths in
  // sandbox/home_guard.h): a write grant that contains one is split around it.
  std::vector<std::string> protected_paths = {};
  // Entries inside a write grant that run code on the host (ReadOnlyWorkspaceEntries in
  // sandbox/workspace_guard.h: the workspace's .git/config, hooks, .envrc): with a mount
  // namespace each is bound read-only over itself, its directory staying writable. Without one
  // Landlock cannot make a hole in a write grant: they are checked after the run instead.
  std::vector<std::string> read_only_entries = {};
};

struct FilesystemPlan {
  std::vector<MountOp> mounts;            // in order: parents before children, masks last
  std::vector<landlock::PathRule> rules;  // sandbox paths (== host paths for binds)
  std::vector<std::string> notes;         // what was skipped and why (for --log-level debug)
  // Grants left out because they go through a symlink the sandbox could have planted (said on
  // stderr: the extension gets less than its policy names). A read grant whose target another
  // grant shows anyway is left out without a word.
  std::vector<std::string> refused_links;
  // Write grants on a protected path (or inside one), kept as read grants (said on stderr).
  std::vector<std::string> protected_writes;
};

// Builds the plan. With `with_mount_namespace` false there are no mounts: private paths are
// the caller's host directories, and denied paths under allowed ones are carved out of the
// Landlock rules (Landlock can only grant, so the parent rule is split around them).
FilesystemPlan PlanFilesystem(const FilesystemInputs& in, bool with_mount_namespace,
                              const PathProbe& probe, const DirLister& lister);

// The CPU topology files runtimes size their thread pools from (glibc's get_nprocs reads
// `online`, node's thread pool among its callers): shown read-only in every mode, as the own
// cgroup is, and counted as system, so that reading them is no denial.
const std::vector<std::string>& CpuTopologyFiles();

// IsWithin (is `path` `dir` or beneath it) is common/path.h's.

}  // namespace gander::sandbox
