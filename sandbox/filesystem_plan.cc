#include "sandbox/filesystem_plan.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <set>

namespace gander::sandbox {
namespace {

namespace ll = landlock;

// Access a policy rule grants, before it becomes Landlock rights or mount flags.
struct Access {
  bool write = false;
  bool exec = false;
  bool optional = false;  // an entry of a split directory (MountOp::optional)
  bool pinned = false;    // bound over itself even where its parent grants the same
};

uint64_t LandlockRights(Access a) {
  uint64_t rights = a.write ? ll::kWrite : ll::kRead;
  if (a.exec) rights |= ll::kExecute;
  return rights;
}

size_t Depth(const std::string& path) { return std::count(path.begin(), path.end(), '/'); }

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Splits a Landlock grant on `dir` into grants on its entries, leaving out each denied path
// (and recursing toward denied paths deeper down). The directory itself keeps READ_DIR so it
// can still be listed.
void Carve(const std::string& dir, uint64_t rights, const std::vector<std::string>& denied,
           const DirLister& lister, std::vector<ll::PathRule>& rules) {
  rules.push_back({dir, ll::kReadDir});
  for (const std::string& name : lister(dir)) {
    std::string child = JoinPath(dir, name);
    if (std::find(denied.begin(), denied.end(), child) != denied.end()) continue;
    std::vector<std::string> below;
    for (const auto& d : denied) {
      if (d != child && IsWithin(d, child)) below.push_back(d);
    }
    if (below.empty()) {
      rules.push_back({child, rights});
    } else {
      Carve(child, rights, below, lister, rules);
    }
  }
}

// Splits a write grant on `dir` around the protected paths below it (`below`): `dir` itself
// becomes read-only, so nothing new can be created in it (a missing ~/.bashrc stays missing),
// and each entry keeps the write grant, except a protected one, a denied one, a symlink (it
// stays as it is, read-only) and a directory on the way to a protected path deeper down
// (split the same way).
void CarveWrites(const std::string& dir, bool exec, const std::vector<std::string>& below,
                 const PathProbe& probe, const DirLister& lister,
                 const std::function<bool(const std::string&)>& denied,
                 std::map<std::string, Access>& out) {
  for (const std::string& name : lister(dir)) {
    std::string child = JoinPath(dir, name);
    if (std::any_of(below.begin(), below.end(),
                    [&](const std::string& q) { return IsWithin(child, q); })) {
      continue;
    }
    PathInfo info = probe(child);
    if (!info.exists || info.is_symlink || denied(child)) continue;
    std::vector<std::string> deeper;
    for (const auto& q : below) {
      if (IsWithin(q, child)) deeper.push_back(q);
    }
    if (deeper.empty()) {
      out[child] = {.write = true, .exec = exec, .optional = true};
    } else if (info.is_dir) {
      CarveWrites(child, exec, deeper, probe, lister, denied, out);
    }
  }
}

// Step 2b of PlanFilesystem: makes each write bind on a protected path read-only and splits
// each write bind that holds one (CarveWrites).
void ProtectBinds(const std::vector<std::string>& protected_paths, const PathProbe& probe,
                  const DirLister& lister, const std::function<bool(const std::string&)>& denied,
                  std::map<std::string, Access>& binds, FilesystemPlan& plan) {
  std::vector<std::string> protect = protected_paths;
  for (const auto& q : protected_paths) {
    PathInfo info = probe(q);
    if (info.exists && !info.canonical.empty() && info.canonical != q) {
      protect.push_back(info.canonical);
    }
  }
  std::map<std::string, Access> carved;
  for (auto& [path, access] : binds) {
    if (!access.write) continue;
    if (std::any_of(protect.begin(), protect.end(),
                    [&](const std::string& q) { return IsWithin(path, q); })) {
      access.write = false;
      plan.notes.push_back(path + ": protected (shell start-up, keys, autostart...): read-only");
      plan.protected_writes.push_back(path);
      continue;
    }
    std::vector<std::string> below;
    for (const auto& q : protect) {
      if (q != path && IsWithin(q, path)) below.push_back(q);
    }
    if (below.empty()) continue;
    access.write = false;
    plan.notes.push_back(path + ": holds protected paths: read-only, its other entries writable");
    CarveWrites(path, access.exec, below, probe, lister, denied, carved);
  }
  for (const auto& [path, access] : carved) {
    auto [it, added] = binds.try_emplace(path, access);
    if (!added) {
      it->second.write |= access.write;
      it->second.exec |= access.exec;
    }
  }
}

// Step 2c of PlanFilesystem: each entry (FilesystemInputs::read_only_entries) that exists, is
// no symlink and lies inside a write bind becomes a read-only bind of its own, over itself.
void BindReadOnlyEntries(const std::vector<std::string>& entries, const PathProbe& probe,
                         const std::function<bool(const std::string&)>& denied,
                         std::map<std::string, Access>& binds, FilesystemPlan& plan) {
  for (const auto& path : entries) {
    PathInfo info = probe(path);
    const std::string& at = info.canonical.empty() ? path : info.canonical;  // as binds are
    if (!info.exists || info.is_symlink || denied(at) || binds.count(at)) continue;
    const std::pair<const std::string, Access>* enclosing = nullptr;
    for (const auto& entry : binds) {
      if (IsWithin(at, entry.first) &&
          (!enclosing || entry.first.size() > enclosing->first.size())) {
        enclosing = &entry;
      }
    }
    if (!enclosing || !enclosing->second.write) continue;
    const std::string top = enclosing->first;
    const bool exec = enclosing->second.exec;
    binds[at] = {.write = false, .exec = exec, .optional = true};
    plan.notes.push_back(at + ": runs code on the host (git, direnv): read-only");
    // Its directories on the way (`.git`, `.git/modules/NAME`) stay writable but become
    // mount points, which cannot be renamed or removed: a `.git` moved aside and rebuilt
    // around the read-only entries would otherwise get a writable config.
    for (size_t slash = at.find('/', top.size() + 1); slash != std::string::npos;
         slash = at.find('/', slash + 1)) {
      const std::string dir = at.substr(0, slash);
      if (!binds.count(dir)) {
        binds[dir] = {.write = true, .exec = exec, .optional = true, .pinned = true};
      }
    }
  }
}

}  // namespace

PathInfo ProbeHostPath(const std::string& path) {
  PathInfo info;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return info;
  info.exists = true;
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved)) info.canonical = resolved;
  if (S_ISLNK(st.st_mode)) {
    info.is_symlink = true;
    char buf[4096];
    ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
    if (n > 0) info.link_target.assign(buf, static_cast<size_t>(n));
    struct stat target;
    info.exists = stat(path.c_str(), &target) == 0;  // a dangling link counts as absent
    info.is_dir = info.exists && S_ISDIR(target.st_mode);
  } else {
    info.is_dir = S_ISDIR(st.st_mode);
  }
  return info;
}

std::vector<std::string> ListHostDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (!dir) return names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

const std::vector<std::string>& CpuTopologyFiles() {
  static const std::vector<std::string> files = {"/sys/devices/system/cpu/online",
                                                 "/sys/devices/system/cpu/possible",
                                                 "/sys/devices/system/cpu/present"};
  return files;
}

namespace {

using DeniedTest = std::function<bool(const std::string&)>;
using AccessMap = std::map<std::string, Access>;

// Denied paths count under their own name and under their canonical one.
std::vector<std::string> DeniedWithCanonical(const std::vector<std::string>& policy_deny,
                                             const PathProbe& probe) {
  std::vector<std::string> deny = policy_deny;
  for (const auto& d : policy_deny) {
    PathInfo info = probe(d);
    if (info.exists && !info.canonical.empty() && info.canonical != d) {
      deny.push_back(info.canonical);
    }
  }
  return deny;
}

// Step 1 of PlanFilesystem: what each allowed path grants; a path listed twice gets the union.
AccessMap GrantPaths(const FilesystemInputs& in, const DeniedTest& denied, FilesystemPlan& plan) {
  const auto& policy = in.policy;
  AccessMap grants;
  auto grant = [&](const std::vector<std::string>& paths, Access a) {
    for (const auto& path : paths) {
      if (denied(path)) {
        plan.notes.push_back(path + ": inside a denied path, left out");
        continue;
      }
      Access& g = grants[path];
      g.write |= a.write;
      g.exec |= a.exec;
    }
  };
  grant(policy.read, {});
  grant(policy.exec, {.write = false, .exec = true});
  grant(policy.write, {.write = true, .exec = false});
  grant(in.extra_exec, {.write = false, .exec = true});
  return grants;
}

// The first symlink component of `path` ("" when none is).
std::string FirstSymlinkComponent(const std::string& path, const PathProbe& probe) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (probe(prefix).is_symlink) return prefix;
    if (slash == std::string::npos) break;
  }
  return "";
}

// Step 2 of PlanFilesystem: binds are made at canonical paths. A granted path that goes
// through a symlink (/bin -> usr/bin on merged-/usr systems, /bin/sh -> dash) keeps its first
// symlink component in the view, as a symlink, so the path still resolves to the bind.
// A symlink in a directory the sandbox may write can have been planted by the extension
// on an earlier run: a grant through one is left out, never followed (a write grant would
// make whatever the link names, /etc say, writable at the next start; a read grant would
// show it).
AccessMap BindGrants(const AccessMap& grants, const PathProbe& probe, const DeniedTest& denied,
                     std::vector<MountOp>& ops, FilesystemPlan& plan) {
  auto sandbox_writable = [&](const std::string& dir) {
    for (const auto& [g, a] : grants) {
      if (!a.write) continue;
      PathInfo gi = probe(g);
      if (IsWithin(dir, g) || (gi.exists && !gi.canonical.empty() && IsWithin(dir, gi.canonical)))
        return true;
    }
    return false;
  };
  std::set<std::string> links;
  AccessMap binds;
  for (const auto& [path, access] : grants) {
    PathInfo info = probe(path);
    if (!info.exists) {
      plan.notes.push_back(path + ": does not exist, skipped");
      continue;
    }
    const std::string& canonical = info.canonical.empty() ? path : info.canonical;
    if (canonical != path) {
      const std::string link = FirstSymlinkComponent(path, probe);
      const std::string parent = link.empty() ? "" : link.substr(0, link.rfind('/'));
      if (!link.empty() && sandbox_writable(parent.empty() ? "/" : parent)) {
        // Read and exec grants too: a planted link would show whatever it names (another
        // user's files, a key store outside the deny list) at the next start. What another
        // grant shows anyway is not news; the rest is said on stderr.
        plan.notes.push_back(path + ": goes through the symlink " + link +
                             " in a directory the sandbox may write: left out");
        bool shown = !access.write && std::any_of(grants.begin(), grants.end(), [&](const auto& g) {
          return g.first != path && IsWithin(canonical, g.first) && (!access.exec || g.second.exec);
        });
        if (!shown) plan.refused_links.push_back(path);
        continue;
      }
      if (!link.empty() && links.insert(link).second) {
        ops.push_back({MountOp::Kind::kSymlink, probe(link).link_target, link});
      }
      if (denied(canonical)) {
        plan.notes.push_back(path + ": resolves into a denied path, left out");
        continue;
      }
    }
    Access& b = binds[canonical];
    b.write |= access.write;
    b.exec |= access.exec;
  }
  return binds;
}

// Step 3 of PlanFilesystem: private tmpfs paths, unless an explicit rule already shows the
// host path there.
std::vector<std::string> PrivatePaths(const std::vector<std::string>& private_,
                                      const AccessMap& binds, FilesystemPlan& plan) {
  std::vector<std::string> privates;
  for (const auto& path : private_) {
    if (binds.count(path)) {
      plan.notes.push_back(path + ": private, but also granted: the grant wins");
      continue;
    }
    privates.push_back(path);
  }
  return privates;
}

// Step 4 of PlanFilesystem: a bind for each granted path, except a path whose nearest
// enclosing bind already grants the same (a mount would change nothing); then the private
// tmpfs, /proc, /dev, the cgroups and the CPU topology files no bind shows, sorted parents
// first. Returns those topology files.
std::vector<std::string> PlanMounts(const AccessMap& binds,
                                    const std::vector<std::string>& privates,
                                    const std::vector<CgroupMount>& cgroups, const PathProbe& probe,
                                    std::vector<MountOp>& ops) {
  for (const auto& [path, access] : binds) {
    const std::pair<const std::string, Access>* enclosing = nullptr;
    for (const auto& entry : binds) {
      if (entry.first != path && IsWithin(path, entry.first) &&
          (!enclosing || entry.first.size() > enclosing->first.size())) {
        enclosing = &entry;
      }
    }
    bool under_private = std::any_of(privates.begin(), privates.end(), [&](const auto& p) {
      return IsWithin(path, p) && (!enclosing || p.size() > enclosing->first.size());
    });
    if (enclosing && !under_private && !access.pinned && enclosing->second.write == access.write &&
        enclosing->second.exec == access.exec) {
      continue;
    }
    ops.push_back(
        {MountOp::Kind::kBind, path, path, access.write, access.exec, "", access.optional});
  }
  for (const auto& path : privates) ops.push_back({MountOp::Kind::kTmpfs, "", path, true});
  ops.push_back({MountOp::Kind::kProc, "", "/proc"});
  ops.push_back({MountOp::Kind::kDev, "", "/dev"});
  for (const auto& cg : cgroups) {
    ops.push_back({MountOp::Kind::kCgroup, cg.type, cg.mountpoint, false, false, cg.options});
  }
  std::vector<std::string> topology;
  for (const auto& file : CpuTopologyFiles()) {
    bool shown = std::any_of(binds.begin(), binds.end(),
                             [&](const auto& b) { return IsWithin(file, b.first); });
    if (!shown && probe(file).exists) topology.push_back(file);
  }
  for (const auto& file : topology) ops.push_back({MountOp::Kind::kBind, file, file, false, false});
  std::stable_sort(ops.begin(), ops.end(), [](const MountOp& a, const MountOp& b) {
    return std::make_pair(Depth(a.target), a.target) < std::make_pair(Depth(b.target), b.target);
  });
  return topology;
}

// Step 5 of PlanFilesystem: masks over denied paths that a bind would otherwise show (inside
// a private tmpfs they are absent anyway). They go last, deepest last. A denied path inside
// another denied directory needs none: that directory's mask (or its absence) hides it
// already, and a mount there would fail, its target gone under the outer mask (learn mode
// denies gander's state directory and the audit log inside it).
std::vector<MountOp> PlanMasks(const std::vector<std::string>& deny,
                               const std::vector<MountOp>& ops, const PathProbe& probe,
                               FilesystemPlan& plan) {
  auto inside_other_denied = [&](const std::string& path) {
    return std::any_of(deny.begin(), deny.end(), [&](const std::string& d) {
      return d != path && IsWithin(path, d) && !probe(d).is_symlink;
    });
  };
  std::vector<MountOp> masks;
  for (const auto& path : deny) {
    if (inside_other_denied(path)) continue;
    const MountOp* nearest = nullptr;
    for (const auto& op : ops) {
      if ((op.kind == MountOp::Kind::kBind || op.kind == MountOp::Kind::kTmpfs) &&
          IsWithin(path, op.target) && (!nearest || op.target.size() > nearest->target.size())) {
        nearest = &op;
      }
    }
    if (!nearest || nearest->kind != MountOp::Kind::kBind) continue;
    PathInfo info = probe(path);
    if (!info.exists) continue;
    if (info.is_symlink) {
      plan.notes.push_back(path + ": denied path is a symlink; its target stays as granted");
      continue;
    }
    masks.push_back({info.is_dir ? MountOp::Kind::kMaskDir : MountOp::Kind::kMaskFile, "", path});
  }
  std::stable_sort(masks.begin(), masks.end(), [](const MountOp& a, const MountOp& b) {
    return Depth(a.target) < Depth(b.target);
  });
  return masks;
}

// What is left of a view to mirror in Landlock once the mounts are planned (step 6).
struct LandlockInputs {
  const std::vector<std::string>& deny;
  const AccessMap& binds;
  const std::vector<std::string>& privates;
  const std::vector<std::string>& topology;
};

// Step 6 of PlanFilesystem: Landlock mirrors the view: the same grants by path.
void PlanLandlock(const FilesystemInputs& in, bool with_mount_namespace, const LandlockInputs& v,
                  const PathProbe& probe, const DirLister& lister, FilesystemPlan& plan) {
  for (const auto& [path, access] : v.binds) {
    std::vector<std::string> inside;
    for (const auto& d : v.deny) {
      if (d != path && IsWithin(d, path) && probe(d).exists) inside.push_back(d);
    }
    if (with_mount_namespace || inside.empty()) {
      plan.rules.push_back({path, LandlockRights(access)});
    } else {
      Carve(path, LandlockRights(access), inside, lister, plan.rules);
    }
  }
  if (with_mount_namespace) {
    // Listing directories is harmless inside a view built from the policy (`ls /`).
    plan.rules.push_back({"/", ll::kReadDir});
    for (const auto& path : v.privates) plan.rules.push_back({path, ll::kWrite});
    plan.rules.push_back({"/proc", ll::kRead});
    plan.rules.push_back({"/dev", ll::kRead});
    for (const char* dev : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
      plan.rules.push_back({dev, ll::kDevice});
    }
    plan.rules.push_back({"/dev/shm", ll::kWrite});
    for (const auto& path : CgroupReadPaths(in.cgroups, true))
      plan.rules.push_back({path, ll::kRead});
    for (const auto& file : v.topology) plan.rules.push_back({file, ll::kRead});
  } else {
    for (const auto& [path, host_dir] : in.private_host_dirs) {
      plan.rules.push_back({host_dir, ll::kWrite});
    }
    // Without a pid namespace /proc shows every process of the user (environments
    // included): only system-wide files, never the per-process directories.
    for (const char* file : {"/proc/meminfo", "/proc/cpuinfo", "/proc/stat", "/proc/loadavg",
                             "/proc/uptime", "/proc/version", "/proc/sys"}) {
      plan.rules.push_back({file, ll::kRead});
    }
    for (const char* dev : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
      plan.rules.push_back({dev, ll::kDevice});
    }
    for (const auto& path : CgroupReadPaths(in.cgroups, false))
      plan.rules.push_back({path, ll::kRead});
    for (const auto& file : v.topology) plan.rules.push_back({file, ll::kRead});
  }
}

}  // namespace

FilesystemPlan PlanFilesystem(const FilesystemInputs& in, bool with_mount_namespace,
                              const PathProbe& probe, const DirLister& lister) {
  FilesystemPlan plan;
  const std::vector<std::string> deny = DeniedWithCanonical(in.policy.deny, probe);
  auto denied = [&](const std::string& path) {
    return std::any_of(deny.begin(), deny.end(),
                       [&](const std::string& d) { return IsWithin(path, d); });
  };
  const AccessMap grants = GrantPaths(in, denied, plan);
  std::vector<MountOp> ops;  // the symlinks of step 2, then the mounts of step 4
  AccessMap binds = BindGrants(grants, probe, denied, ops, plan);
  // 2b. Protected paths (home_guard.h): a write bind on or inside one is read-only; a write
  //     bind that contains one is split around it (CarveWrites). Both the mount view and
  //     Landlock follow from the split binds.
  ProtectBinds(in.protected_paths, probe, lister, denied, binds, plan);
  // 2c. The workspace's code-running entries (workspace_guard.h), read-only over themselves.
  if (with_mount_namespace) BindReadOnlyEntries(in.read_only_entries, probe, denied, binds, plan);
  const std::vector<std::string> privates = PrivatePaths(in.policy.private_, binds, plan);
  const std::vector<std::string> topology = PlanMounts(binds, privates, in.cgroups, probe, ops);
  std::vector<MountOp> masks = PlanMasks(deny, ops, probe, plan);
  PlanLandlock(in, with_mount_namespace, {deny, binds, privates, topology}, probe, lister, plan);
  if (with_mount_namespace) {
    ops.insert(ops.end(), masks.begin(), masks.end());
    plan.mounts = std::move(ops);
  }
  return plan;
}

}  // namespace gander::sandbox
