// The filesystem plan against a fake host: which mounts and Landlock rules a policy yields.
#include "sandbox/filesystem_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace gander::sandbox {
namespace {

using Kind = MountOp::Kind;

// A fake host: directories, files and symlinks by absolute path.
struct FakeHost {
  std::map<std::string, PathInfo> paths;

  void Dir(const std::string& p) { paths[p] = {true, true, false, "", p}; }
  void File(const std::string& p) { paths[p] = {true, false, false, "", p}; }
  void Link(const std::string& p, const std::string& text, const std::string& canonical, bool dir) {
    paths[p] = {true, dir, true, text, canonical};
  }
  PathProbe Probe() const {
    return [this](const std::string& p) {
      if (auto it = paths.find(p); it != paths.end()) return it->second;
      // A path below a symlinked directory resolves through it.
      for (const auto& [q, info] : paths) {
        if (info.is_symlink && p.starts_with(q + "/")) {
          std::string rest = p.substr(q.size());
          if (auto t = paths.find(info.canonical + rest); t != paths.end()) {
            PathInfo resolved = t->second;
            resolved.is_symlink = false;
            return resolved;
          }
        }
      }
      return PathInfo{};
    };
  }
  DirLister Lister() const {
    return [this](const std::string& dir) {
      std::vector<std::string> names;
      for (const auto& [p, info] : paths) {
        if (p.size() > dir.size() + 1 && p.starts_with(dir + "/") &&
            p.find('/', dir.size() + 1) == std::string::npos) {
          names.push_back(p.substr(dir.size() + 1));
        }
      }
      return names;
    };
  }
};

FakeHost DebianHost() {
  FakeHost host;
  for (const char* d : {"/usr", "/usr/bin", "/etc", "/etc/ssh", "/home/u", "/home/u/.ssh",
                        "/home/u/proj", "/tmp"}) {
    host.Dir(d);
  }
  host.File("/usr/bin/dash");
  host.File("/etc/shadow");
  host.File("/etc/passwd");
  host.File("/home/u/.ssh/id_rsa");
  host.Link("/bin", "usr/bin", "/usr/bin", true);
  host.Link("/usr/bin/sh", "dash", "/usr/bin/dash", false);
  return host;
}

policies::ExpandedPolicy DefaultLike(const std::string& workspace) {
  policies::ExpandedPolicy p;
  p.exec = {"/usr", "/bin", "/lib64", workspace};
  p.read = {"/etc"};
  p.write = {workspace};
  p.private_ = {"/tmp", "/home/u"};
  p.deny = {"/home/u/.ssh", "/etc/shadow", "/etc/ssh"};
  return p;
}

const MountOp* FindMount(const FilesystemPlan& plan, const std::string& target) {
  for (const auto& op : plan.mounts) {
    if (op.target == target) return &op;
  }
  return nullptr;
}

uint64_t RuleFor(const FilesystemPlan& plan, const std::string& path) {
  for (const auto& r : plan.rules) {
    if (r.path == path) return r.access;
  }
  return 0;
}

// Every right granted on `path` itself (Landlock grants the union of its rules).
uint64_t RightsFor(const FilesystemPlan& plan, const std::string& path) {
  uint64_t rights = 0;
  for (const auto& r : plan.rules) {
    if (r.path == path) rights |= r.access;
  }
  return rights;
}

TEST(FilesystemPlan, BindsSystemPathsReadOnlyAndTheWorkspaceWritable) {
  FakeHost host = DebianHost();
  auto plan =
      PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}}, true, host.Probe(), host.Lister());
  const MountOp* usr = FindMount(plan, "/usr");
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ(usr->kind, Kind::kBind);
  EXPECT_FALSE(usr->writable);
  EXPECT_TRUE(usr->executable);
  const MountOp* etc = FindMount(plan, "/etc");
  ASSERT_NE(etc, nullptr);
  EXPECT_FALSE(etc->executable);
  const MountOp* ws = FindMount(plan, "/home/u/proj");
  ASSERT_NE(ws, nullptr);
  EXPECT_TRUE(ws->writable);
  EXPECT_TRUE(ws->executable);
  EXPECT_EQ(FindMount(plan, "/lib64"), nullptr) << "missing paths are skipped";
}

TEST(FilesystemPlan, ParentsAreMountedBeforeChildren) {
  FakeHost host = DebianHost();
  auto plan =
      PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}}, true, host.Probe(), host.Lister());
  auto index = [&](const std::string& target) {
    for (size_t i = 0; i < plan.mounts.size(); ++i) {
      if (plan.mounts[i].target == target) return i;
    }
    return plan.mounts.size();
  };
  EXPECT_LT(index("/home/u"), index("/home/u/proj"));
  EXPECT_EQ(plan.mounts[index("/home/u")].kind, Kind::kTmpfs);
}

TEST(FilesystemPlan, SymlinkedSystemDirectoryStaysALink) {
  FakeHost host = DebianHost();
  auto plan = PlanFilesystem({DefaultLike("/home/u/proj"), {"/bin/sh"}, {}}, true, host.Probe(),
                             host.Lister());
  const MountOp* bin = FindMount(plan, "/bin");
  ASSERT_NE(bin, nullptr);
  EXPECT_EQ(bin->kind, Kind::kSymlink);
  EXPECT_EQ(bin->source, "usr/bin");
  // /bin/sh -> /usr/bin/dash is covered by the /usr bind: no mount of its own.
  EXPECT_EQ(FindMount(plan, "/usr/bin/dash"), nullptr);
  EXPECT_EQ(FindMount(plan, "/bin/sh"), nullptr);
}

TEST(FilesystemPlan, AWriteGrantThroughASymlinkTheSandboxCouldPlantIsLeftOut) {
  // An earlier run replaced proj/data (granted writable, inside the writable workspace) by a
  // link to /etc: the next start must not make /etc writable.
  FakeHost host = DebianHost();
  host.Link("/home/u/proj/data", "/etc", "/etc", true);
  policies::ExpandedPolicy p = DefaultLike("/home/u/proj");
  p.write.push_back("/home/u/proj/data");
  auto plan = PlanFilesystem({p, {}, {}}, true, host.Probe(), host.Lister());
  const MountOp* etc = FindMount(plan, "/etc");
  ASSERT_NE(etc, nullptr);
  EXPECT_FALSE(etc->writable);
  EXPECT_EQ(FindMount(plan, "/home/u/proj/data"), nullptr);
  EXPECT_EQ(plan.refused_links, std::vector<std::string>{"/home/u/proj/data"});
  // The same link outside anything the sandbox may write is the user's own: followed.
  FakeHost user = DebianHost();
  user.Dir("/srv");
  user.Link("/srv/data", "/etc", "/etc", true);
  policies::ExpandedPolicy q = DefaultLike("/home/u/proj");
  q.write.push_back("/srv/data");
  auto followed = PlanFilesystem({q, {}, {}}, true, user.Probe(), user.Lister());
  EXPECT_TRUE(followed.refused_links.empty());
  const MountOp* bound = FindMount(followed, "/etc");
  ASSERT_NE(bound, nullptr);
  EXPECT_TRUE(bound->writable);
  // Without a mount namespace the Landlock rules leave it out the same way.
  auto degraded = PlanFilesystem({p, {}, {}}, false, host.Probe(), host.Lister());
  EXPECT_EQ(degraded.refused_links, std::vector<std::string>{"/home/u/proj/data"});
}

// Item 4 of the review: the same holds for read and exec grants. A link planted in the writable
// workspace to another user's home would show it at the next start.
TEST(FilesystemPlan, AReadGrantThroughASymlinkTheSandboxCouldPlantIsLeftOut) {
  FakeHost host = DebianHost();
  host.Dir("/home/v");
  host.File("/home/v/secret");
  host.Link("/home/u/proj/peek", "/home/v", "/home/v", true);
  host.Link("/home/u/proj/tool", "/usr/bin/dash", "/usr/bin/dash", false);
  policies::ExpandedPolicy p = DefaultLike("/home/u/proj");
  p.read.push_back("/home/u/proj/peek");
  p.exec.push_back("/home/u/proj/tool");
  auto plan = PlanFilesystem({p, {}, {}}, true, host.Probe(), host.Lister());
  EXPECT_EQ(FindMount(plan, "/home/v"), nullptr) << "the link's target is not shown";
  EXPECT_EQ(RuleFor(plan, "/home/v"), 0u);
  // The exec grant's target is shown by /usr anyway: left out without a word.
  EXPECT_EQ(plan.refused_links, std::vector<std::string>{"/home/u/proj/peek"});
  auto bare = PlanFilesystem({p, {}, {}}, false, host.Probe(), host.Lister());
  EXPECT_EQ(RuleFor(bare, "/home/v"), 0u);
  EXPECT_EQ(bare.refused_links, std::vector<std::string>{"/home/u/proj/peek"});
  // Control: the same read grant through a link outside anything writable is followed.
  FakeHost user = DebianHost();
  user.Dir("/home/v");
  user.Dir("/srv");
  user.Link("/srv/peek", "/home/v", "/home/v", true);
  policies::ExpandedPolicy q = DefaultLike("/home/u/proj");
  q.read.push_back("/srv/peek");
  auto followed = PlanFilesystem({q, {}, {}}, true, user.Probe(), user.Lister());
  EXPECT_NE(FindMount(followed, "/home/v"), nullptr);
}

TEST(FilesystemPlan, DeniedPathsUnderABindAreMasked) {
  FakeHost host = DebianHost();
  auto plan = PlanFilesystem({DefaultLike("/home/u"), {}, {}}, true, host.Probe(), host.Lister());
  const MountOp* ssh = FindMount(plan, "/home/u/.ssh");
  ASSERT_NE(ssh, nullptr);
  EXPECT_EQ(ssh->kind, Kind::kMaskDir);
  const MountOp* shadow = FindMount(plan, "/etc/shadow");
  ASSERT_NE(shadow, nullptr);
  EXPECT_EQ(shadow->kind, Kind::kMaskFile);
  EXPECT_EQ(plan.mounts.back().kind == Kind::kMaskDir || plan.mounts.back().kind == Kind::kMaskFile,
            true)
      << "masks come last";
  // The workspace is the home directory: the grant wins over the private tmpfs.
  const MountOp* home = FindMount(plan, "/home/u");
  ASSERT_NE(home, nullptr);
  EXPECT_EQ(home->kind, Kind::kBind);
}

TEST(FilesystemPlan, DeniedPathsInsideAPrivateTmpfsNeedNoMask) {
  FakeHost host = DebianHost();
  auto plan =
      PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}}, true, host.Probe(), host.Lister());
  EXPECT_EQ(FindMount(plan, "/home/u/.ssh"), nullptr);
}

// Learn mode shows the real home and denies gander's own state directory and the audit log
// in it: the directory's mask already hides the log, and a mask mounted on a path inside an
// earlier mask fails (the target is not there), which failed every second learning run.
TEST(FilesystemPlan, DeniedPathsInsideAMaskedDirectoryNeedNoMaskOfTheirOwn) {
  FakeHost host = DebianHost();
  host.Dir("/home/u/.local/state/gander");
  host.Dir("/home/u/.local/state/gander/audit");
  host.File("/home/u/.local/state/gander/audit/x.jsonl");
  policies::ExpandedPolicy policy = DefaultLike("/home/u");
  policy.deny.push_back("/home/u/.local/state/gander");
  policy.deny.push_back("/home/u/.local/state/gander/audit/x.jsonl");
  auto plan = PlanFilesystem({policy, {}, {}}, true, host.Probe(), host.Lister());
  const MountOp* state = FindMount(plan, "/home/u/.local/state/gander");
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->kind, Kind::kMaskDir);
  EXPECT_EQ(FindMount(plan, "/home/u/.local/state/gander/audit/x.jsonl"), nullptr);
}

// The sandbox's own cgroup, read-only: with a mount namespace a fresh mount of each host
// hierarchy (the cgroup namespace roots it at the sandbox's cgroup) and a Landlock read rule;
// without, a Landlock read rule on the process's own cgroup directory.
TEST(FilesystemPlan, TheOwnCgroupIsShownReadOnly) {
  FakeHost host = DebianHost();
  std::vector<CgroupMount> cgroups{
      {"cgroup", "memory", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/user/1"},
      {"cgroup2", "", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/user/1"}};
  auto plan = PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}, cgroups}, true, host.Probe(),
                             host.Lister());
  const MountOp* memory = FindMount(plan, "/sys/fs/cgroup/memory");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->kind, Kind::kCgroup);
  EXPECT_EQ(memory->source, "cgroup");
  EXPECT_EQ(memory->options, "memory");
  EXPECT_FALSE(memory->writable);
  EXPECT_EQ(RuleFor(plan, "/sys/fs/cgroup/memory"), landlock::kRead);
  EXPECT_EQ(RuleFor(plan, "/sys/fs/cgroup/unified"), landlock::kRead);
  auto bare = PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}, cgroups}, false, host.Probe(),
                             host.Lister());
  EXPECT_TRUE(bare.mounts.empty());
  EXPECT_EQ(RuleFor(bare, "/sys/fs/cgroup/memory/user/1"), landlock::kRead);
  EXPECT_EQ(RuleFor(bare, "/sys/fs/cgroup/memory"), 0u);
}

// glibc's get_nprocs (node's thread pool) reads /sys/devices/system/cpu/online: shown read-only,
// a file bind of its own, in both modes; a topology file the host lacks is not asked for.
TEST(FilesystemPlan, TheCpuTopologyIsShownReadOnly) {
  FakeHost host = DebianHost();
  host.File("/sys/devices/system/cpu/online");
  host.File("/sys/devices/system/cpu/possible");
  auto plan =
      PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}, {}}, true, host.Probe(), host.Lister());
  const MountOp* online = FindMount(plan, "/sys/devices/system/cpu/online");
  ASSERT_NE(online, nullptr);
  EXPECT_EQ(online->kind, Kind::kBind);
  EXPECT_EQ(online->source, "/sys/devices/system/cpu/online");
  EXPECT_FALSE(online->writable);
  EXPECT_FALSE(online->executable);
  EXPECT_EQ(RuleFor(plan, "/sys/devices/system/cpu/online"), landlock::kRead);
  EXPECT_EQ(RuleFor(plan, "/sys/devices/system/cpu/possible"), landlock::kRead);
  EXPECT_EQ(FindMount(plan, "/sys/devices/system/cpu/present"), nullptr);
  auto bare =
      PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}, {}}, false, host.Probe(), host.Lister());
  EXPECT_TRUE(bare.mounts.empty());
  EXPECT_EQ(RuleFor(bare, "/sys/devices/system/cpu/online"), landlock::kRead);
  EXPECT_EQ(RuleFor(bare, "/sys/devices/system/cpu/present"), 0u);
}

TEST(CgroupView, ParsesHierarchiesAndTheOwnDirectory) {
  const std::string mountinfo =
      "30 25 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755\n"
      "33 30 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup "
      "rw,cpu,cpuacct\n"
      "36 30 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "37 30 0:33 /ctr /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
      "38 30 0:34 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
      "39 30 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n"
      "40 25 0:36 / /mnt/elsewhere rw - cgroup2 cgroup2 rw\n";
  const std::string cgroup =
      "5:name=systemd:/user.slice\n4:pids:/ctr/job\n3:memory:/job\n2:cpu,cpuacct:/\n0::/job\n";
  auto mounts = ParseCgroupMounts(mountinfo, cgroup);
  ASSERT_EQ(mounts.size(), 5u);
  EXPECT_EQ(mounts[0].options, "cpu,cpuacct");
  EXPECT_EQ(mounts[0].own_dir, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(mounts[1].own_dir, "/sys/fs/cgroup/memory/job");
  EXPECT_EQ(mounts[2].own_dir, "/sys/fs/cgroup/pids/job") << "relative to the mount's root";
  EXPECT_EQ(mounts[3].options, "name=systemd");
  EXPECT_EQ(mounts[4].type, "cgroup2");
  EXPECT_EQ(mounts[4].own_dir, "/sys/fs/cgroup/unified/job");
}

// Only a line whose filesystem type (after " - ") is cgroup or cgroup2 counts: a mountpoint
// that spells " - cgroup" is escaped in mountinfo (\040), and the last line may lack its '\n'.
TEST(CgroupView, OnlyTheTypeAfterTheSeparatorCounts) {
  const std::string mountinfo =
      "41 25 0:37 / /mnt/x\\040-\\040cgroup rw - tmpfs tmpfs rw\n"
      "42 25 0:38 / /sys/fs/cgroup/tmp\\040-\\040cgroup rw - tmpfs cgroup rw,memory\n"
      "36 30 0:32 / /sys/fs/cgroup/memory rw,relatime shared:1 master:2 - cgroup cgroup rw,memory";
  auto mounts = ParseCgroupMounts(mountinfo, "3:memory:/job");
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].mountpoint, "/sys/fs/cgroup/memory");
  EXPECT_EQ(mounts[0].own_dir, "/sys/fs/cgroup/memory/job");
}

TEST(FilesystemPlan, GrantsInsideDeniedPathsAreDropped) {
  FakeHost host = DebianHost();
  auto policy = DefaultLike("/home/u/proj");
  policy.read.push_back("/home/u/.ssh");
  auto plan = PlanFilesystem({policy, {}, {}}, true, host.Probe(), host.Lister());
  EXPECT_EQ(FindMount(plan, "/home/u/.ssh"), nullptr);
  EXPECT_EQ(RuleFor(plan, "/home/u/.ssh"), 0u);
}

TEST(FilesystemPlan, LandlockRulesMirrorTheGrants) {
  FakeHost host = DebianHost();
  auto plan =
      PlanFilesystem({DefaultLike("/home/u/proj"), {}, {}}, true, host.Probe(), host.Lister());
  EXPECT_EQ(RuleFor(plan, "/etc"), landlock::kRead);
  EXPECT_EQ(RuleFor(plan, "/usr"), landlock::kExec);
  EXPECT_EQ(RuleFor(plan, "/home/u/proj"), landlock::kWrite | landlock::kExecute);
  EXPECT_EQ(RuleFor(plan, "/tmp"), landlock::kWrite);
  EXPECT_EQ(RuleFor(plan, "/dev/null"), landlock::kDevice);
}

TEST(FilesystemPlan, WithoutMountNamespaceDeniedPathsAreCarvedOut) {
  FakeHost host = DebianHost();
  auto policy = DefaultLike("/home/u");
  auto plan = PlanFilesystem({policy, {}, {{"/tmp", "/tmp/gander-x/0"}}}, false, host.Probe(),
                             host.Lister());
  EXPECT_TRUE(plan.mounts.empty());
  // /etc is split around /etc/shadow and /etc/ssh.
  EXPECT_EQ(RuleFor(plan, "/etc"), landlock::kReadDir);
  EXPECT_EQ(RuleFor(plan, "/etc/passwd"), landlock::kRead);
  EXPECT_EQ(RuleFor(plan, "/etc/shadow"), 0u);
  EXPECT_EQ(RuleFor(plan, "/etc/ssh"), 0u);
  // The home workspace is split around ~/.ssh.
  EXPECT_EQ(RuleFor(plan, "/home/u/.ssh"), 0u);
  EXPECT_NE(RuleFor(plan, "/home/u/proj"), 0u);
  EXPECT_EQ(RuleFor(plan, "/tmp/gander-x/0"), landlock::kWrite);
  // No per-process /proc directories without a pid namespace.
  EXPECT_EQ(RuleFor(plan, "/proc"), 0u);
}

// Workspace = $HOME with --allow-home-write (or a policy granting ~/.config): what runs at the
// next shell, login or Goose start stays read-only, and a missing start-up file cannot be
// created: the directory holding it is read-only, its other entries writable.
FakeHost HomeWithStartupFiles() {
  FakeHost host = DebianHost();
  for (const char* d : {"/home/u/.config", "/home/u/.config/autostart", "/home/u/.config/app",
                        "/home/u/.local", "/home/u/.local/bin", "/home/u/.cache"}) {
    host.Dir(d);
  }
  host.File("/home/u/.bashrc");
  host.File("/home/u/notes.txt");
  host.Link("/home/u/etc-link", "/etc", "/etc", true);
  return host;
}

const std::vector<std::string> kProtected = {"/home/u/.bashrc",         "/home/u/.profile",
                                             "/home/u/.zshrc",          "/home/u/.ssh",
                                             "/home/u/.local/bin",      "/home/u/.config/autostart",
                                             "/home/u/.config/systemd", "/home/u/.config/goose",
                                             "/home/u/.config/fish"};

TEST(FilesystemPlan, AWritableHomeIsSplitAroundItsProtectedPaths) {
  FakeHost host = HomeWithStartupFiles();
  FilesystemInputs in{DefaultLike("/home/u"), {}, {}, {}, kProtected};
  auto plan = PlanFilesystem(in, true, host.Probe(), host.Lister());
  const MountOp* home = FindMount(plan, "/home/u");
  ASSERT_NE(home, nullptr);
  EXPECT_FALSE(home->writable) << "no new entries at the top of ~ (a missing ~/.profile)";
  EXPECT_FALSE(home->optional);
  ASSERT_NE(FindMount(plan, "/home/u/notes.txt"), nullptr);
  EXPECT_TRUE(FindMount(plan, "/home/u/notes.txt")->optional)
      << "an entry deleted before the child mounts it must not fail the start";
  for (const char* writable :
       {"/home/u/proj", "/home/u/notes.txt", "/home/u/.cache", "/home/u/.config/app"}) {
    const MountOp* m = FindMount(plan, writable);
    ASSERT_NE(m, nullptr) << writable;
    EXPECT_TRUE(m->writable) << writable;
  }
  for (const char* ro : {"/home/u/.bashrc", "/home/u/.config/autostart", "/home/u/.local/bin",
                         "/home/u/.config", "/home/u/.local", "/home/u/etc-link"}) {
    const MountOp* m = FindMount(plan, ro);
    EXPECT_TRUE(m == nullptr || !m->writable) << ro;
  }
  EXPECT_EQ(RightsFor(plan, "/home/u") & landlock::kWriteFile, 0u);
  EXPECT_EQ(RightsFor(plan, "/home/u/.bashrc"), 0u) << "read through the home's own rule";
  EXPECT_EQ(RightsFor(plan, "/home/u/.config") & landlock::kMakeReg, 0u);
  EXPECT_EQ(RightsFor(plan, "/home/u/.config/app") & landlock::kWrite, landlock::kWrite);
  // Without a mount namespace the Landlock rules are split the same way.
  auto bare = PlanFilesystem(in, false, host.Probe(), host.Lister());
  EXPECT_EQ(RightsFor(bare, "/home/u") & landlock::kMakeReg, 0u);
  EXPECT_EQ(RightsFor(bare, "/home/u/.bashrc") & landlock::kWriteFile, 0u);
  EXPECT_EQ(RightsFor(bare, "/home/u/.local/bin") & landlock::kWriteFile, 0u);
  EXPECT_EQ(RightsFor(bare, "/home/u/notes.txt") & landlock::kWriteFile, landlock::kWriteFile);
  EXPECT_TRUE(plan.protected_writes.empty());
  // Without protected paths (the control) the home is one writable bind, as before.
  auto control =
      PlanFilesystem({DefaultLike("/home/u"), {}, {}}, true, host.Probe(), host.Lister());
  ASSERT_NE(FindMount(control, "/home/u"), nullptr);
  EXPECT_TRUE(FindMount(control, "/home/u")->writable);
}

TEST(FilesystemPlan, AWriteGrantOnAProtectedPathIsReadOnly) {
  FakeHost host = HomeWithStartupFiles();
  policies::ExpandedPolicy p = DefaultLike("/home/u/proj");
  p.write.push_back("/home/u/.local/bin");
  p.write.push_back("/home/u/.config/autostart");
  auto plan = PlanFilesystem({p, {}, {}, {}, kProtected}, true, host.Probe(), host.Lister());
  for (const char* ro : {"/home/u/.local/bin", "/home/u/.config/autostart"}) {
    const MountOp* m = FindMount(plan, ro);
    ASSERT_NE(m, nullptr) << ro;
    EXPECT_FALSE(m->writable) << ro;
  }
  EXPECT_EQ(plan.protected_writes,
            (std::vector<std::string>{"/home/u/.config/autostart", "/home/u/.local/bin"}));
  ASSERT_NE(FindMount(plan, "/home/u/proj"), nullptr);
  EXPECT_TRUE(FindMount(plan, "/home/u/proj")->writable);
}

// The workspace's git and direnv entries (workspace_guard.h): with a mount namespace each is a
// read-only bind over itself while the workspace and .git stay writable; without one, no rule
// changes (Landlock cannot make a hole in a write grant; the run undoes writes instead).
TEST(FilesystemPlan, TheWorkspacesCodeRunningEntriesAreReadOnlyOverThemselves) {
  FakeHost host = DebianHost();
  host.Dir("/home/u/proj/.git");
  host.Dir("/home/u/proj/.git/hooks");
  host.File("/home/u/proj/.git/config");
  host.File("/home/u/proj/.envrc");
  host.Link("/home/u/proj/.git/commondir", "/elsewhere", "/elsewhere", false);
  FilesystemInputs in{DefaultLike("/home/u/proj"), {}, {}, {}, {}};
  in.read_only_entries = {"/home/u/proj/.git/config", "/home/u/proj/.git/hooks",
                          "/home/u/proj/.envrc", "/home/u/proj/.git/commondir",
                          "/home/u/proj/.git/config.worktree"};
  auto plan = PlanFilesystem(in, true, host.Probe(), host.Lister());
  for (const char* ro :
       {"/home/u/proj/.git/config", "/home/u/proj/.git/hooks", "/home/u/proj/.envrc"}) {
    const MountOp* m = FindMount(plan, ro);
    ASSERT_NE(m, nullptr) << ro;
    EXPECT_EQ(m->kind, Kind::kBind) << ro;
    EXPECT_EQ(m->source, ro);
    EXPECT_FALSE(m->writable) << ro;
    EXPECT_TRUE(m->optional) << ro << ": gone before the child mounts it is no failure";
  }
  // A symlink and a missing entry get no bind (checked after the run instead).
  EXPECT_EQ(FindMount(plan, "/home/u/proj/.git/commondir"), nullptr);
  EXPECT_EQ(FindMount(plan, "/home/u/proj/.git/config.worktree"), nullptr);
  ASSERT_NE(FindMount(plan, "/home/u/proj"), nullptr);
  EXPECT_TRUE(FindMount(plan, "/home/u/proj")->writable);
  // .git stays writable (objects, refs) but is a mount point: it cannot be moved aside and
  // rebuilt around the read-only entries.
  const MountOp* dot_git = FindMount(plan, "/home/u/proj/.git");
  ASSERT_NE(dot_git, nullptr);
  EXPECT_TRUE(dot_git->writable);
  EXPECT_EQ(dot_git->source, "/home/u/proj/.git");
  // Without a mount namespace the rules are those of a plan without the entries.
  auto without = PlanFilesystem(in, false, host.Probe(), host.Lister());
  in.read_only_entries.clear();
  auto control = PlanFilesystem(in, false, host.Probe(), host.Lister());
  EXPECT_EQ(without.rules.size(), control.rules.size());
}

TEST(IsWithin, ComparesWholeComponents) {
  EXPECT_TRUE(IsWithin("/home/u/.ssh", "/home/u"));
  EXPECT_TRUE(IsWithin("/home/u", "/home/u"));
  EXPECT_FALSE(IsWithin("/home/user", "/home/u"));
  EXPECT_TRUE(IsWithin("/anything", "/"));
}

}  // namespace
}  // namespace gander::sandbox
