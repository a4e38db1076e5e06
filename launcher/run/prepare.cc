// Stages "prepare" and "compile" of `gander run`, and the run's paths (audit log, data
// directory, user policies) that other commands share.
#include "launcher/run/prepare.h"

#include <linux/seccomp.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "common/enum_names.h"
#include "common/install_paths.h"
#include "common/path.h"
#include "policies/backend.h"
#include "policies/loader.h"
#include "policies/parser.h"
#include "policies/trial.h"
#include "sandbox/filesystem_plan.h"
#include "sandbox/gvisor/runsc.h"
#include "sandbox/home_guard.h"
#include "sandbox/landlock.h"

namespace gander::launcher {
namespace {

std::string CurrentDirectory() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof(buf)) ? std::string(buf) : std::string("/");
}

std::string HomeDirectory(const std::map<std::string, std::string>& env) {
  std::string home;
  if (auto it = env.find("HOME"); it != env.end() && !it->second.empty()) {
    home = it->second;
  } else if (const passwd* pw = getpwuid(getuid())) {
    home = pw->pw_dir;
  }
  if (home.empty()) return "/nonexistent";
  return RealPath(home).value_or(home);
}

bool UserNotificationAvailable() {
  uint32_t action = SECCOMP_RET_USER_NOTIF;
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

// --mode monitor: `p.policy` becomes the policy on trial, and what the sandbox enforces is the
// default profile plus the trial's grants (policies/trial.h).
Status PrepareTrial(Prepared& p) {
  auto base = LoadEffectivePolicy("", "default");
  if (!base) return base.error();
  auto expanded = policies::Expand(*base, {p.workspace, p.home, p.environ, DataDirectory(p.name)});
  if (!expanded) return expanded.error();
  p.trial = std::move(p.policy);
  p.policy = policies::TrialEnforcement(*p.trial, *expanded);
  return {};
}

// --mode learn: `p.policy` goes on trial as in monitor mode (what it would refuse is logged as
// would_deny), and the sandbox enforces it widened to the host's files (policies/trial.h) and,
// through the egress broker, every network destination (CompilePolicy). The one place where
// learn mode's reach is decided: the mount view and the Landlock rules follow from the
// widened policy; the seccomp floor is the same in every mode.
void PrepareLearn(Prepared& p, const std::vector<std::string>& keep_denied) {
  // Every directory of / but the kernel's and the runtime's: /proc and /dev are the sandbox's
  // own, /sys and /run (sockets of system daemons: docker, D-Bus) stay out of reach. The
  // host's /tmp is shown and writable like the home: what an extension reads there (a data
  // directory under /tmp) is what learning must see.
  std::vector<std::string> roots;
  for (const auto& name : sandbox::ListHostDir("/")) {
    std::string path = "/" + name;
    if (path == "/proc" || path == "/dev" || path == "/sys" || path == "/run" || path == "/tmp") {
      continue;
    }
    sandbox::PathInfo info = sandbox::ProbeHostPath(path);
    if (info.exists && info.is_dir && !info.is_symlink) roots.push_back(path);
  }
  // A home that is or lies in a system directory (HOME=/, /usr, /etc/x) is never made
  // writable; /var and /opt themselves neither, a home below them (/var/lib/NAME) is a home.
  std::string home = p.home;
  if (home == "/" || home == "/var" || home == "/opt") home.clear();
  for (const char* system : {"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                             "/boot", "/proc", "/dev", "/sys"}) {
    if (IsWithin(home, system)) home.clear();
  }
  if (home.empty()) spdlog::warn("{}: --mode learn: home {} stays private", p.name, p.home);
  std::vector<std::string> writable = {"/tmp"};
  if (!home.empty()) writable.push_back(home);
  p.trial = p.policy;
  p.policy = policies::LearnEnforcement(*p.trial, roots, writable, keep_denied);
}

// gander's own configuration and state (policies, mcp.yaml, audit logs): never reachable by
// what it sandboxes, even when learn mode shows the real home. Created if missing where the
// sandbox could otherwise write them (always in learn mode; else inside one of `writable`), so
// they can be masked: else an extension could plant a policy there for later runs.
std::vector<std::string> GanderOwnDirs(const std::string& audit_log,
                                       const std::vector<std::string>* writable = nullptr) {
  std::vector<std::string> dirs;
  for (const std::string& policies : UserPolicyDirs()) {
    dirs.push_back(policies.substr(0, policies.rfind('/')));  // .../gander: mcp.yaml too
  }
  std::string audit_dir = DefaultAuditLogPath("x");
  audit_dir.resize(audit_dir.rfind('/'));                     // .../gander/audit
  dirs.push_back(audit_dir.substr(0, audit_dir.rfind('/')));  // .../gander
  for (size_t i = 0, n = dirs.size(); i < n; ++i) {
    bool exposed = !writable || std::any_of(writable->begin(), writable->end(),
                                            [&](const auto& w) { return IsWithin(dirs[i], w); });
    if (exposed) MakeParentDirs(dirs[i] + "/");
    auto real = RealPath(dirs[i]);
    if (real && *real != dirs[i]) dirs.push_back(*real);
  }
  struct stat st;
  if (!audit_log.empty() && stat(audit_log.c_str(), &st) == 0) {
    dirs.push_back(RealPath(audit_log).value_or(audit_log));
  }
  return dirs;
}

// The workspace: an existing directory, never `/`.
std::optional<Stop> PrepareWorkspace(const RunOptions& o, const std::string& cwd, Prepared& p) {
  std::string workspace = o.workspace.empty() ? cwd : o.workspace;
  auto real_workspace = RealPath(workspace);
  struct stat st;
  if (!real_workspace || stat(real_workspace->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Stop{kExitUsage, "workspace " + workspace + " is not an existing directory"};
  }
  if (*real_workspace == "/") return Stop{kExitUsage, "the workspace cannot be /"};
  p.workspace = *real_workspace;
  return std::nullopt;
}

// The policy: loaded, expanded, put on trial (monitor) or widened (learn), gander's own
// directories denied; the workspace never inside a denied path.
std::optional<Stop> PreparePolicy(const RunOptions& o, Prepared& p) {
  auto policy = LoadEffectivePolicy(o.policy_file, o.profile);
  if (!policy) return Stop{kExitUsage, policy.error().Describe()};
  p.backend = o.backend.value_or(policy->backend.value_or(policies::Backend::kNative));
  if (Status ok = policies::CheckBackendSupport(*policy, p.backend, {o.no_namespaces}); !ok) {
    return Stop{kExitUsage, ok.error().Describe()};
  }
  const std::string data = DataDirectory(p.name);
  auto expanded = policies::Expand(*policy, {p.workspace, p.home, p.environ, data});
  if (!expanded) return Stop{kExitUsage, expanded.error().Describe()};
  p.policy = std::move(expanded).value();
  // The data directory exists before the sandbox binds it, owned by the user, 0700.
  for (const auto& path : p.policy.write) {
    if (IsWithin(path, data)) MakeParentDirs(path + "/");
  }
  // The one place the audit log's path is decided (the trial and the widened policy keep it).
  p.audit_log = !o.audit_log.empty() ? o.audit_log
                : p.policy.audit_log ? *p.policy.audit_log
                                     : DefaultAuditLogPath(p.name);
  p.mode = o.mode;
  if (p.mode == RunMode::kMonitor) {
    if (auto trial = PrepareTrial(p); !trial) return Stop{kExitUsage, trial.error().Describe()};
    spdlog::warn(
        "{}: --mode monitor: the policy is on trial, not enforced beyond the default "
        "profile; what it would refuse is logged as would_deny",
        p.name);
  } else if (p.mode == RunMode::kLearn && !p.gvisor()) {
    PrepareLearn(p, GanderOwnDirs(p.audit_log));
    spdlog::warn(
        "{}: --mode learn exposes your files and network: the extension can read the host's "
        "files, read and write your home directory ({}) and connect anywhere, host loopback "
        "included; what the policy would refuse is logged as would_deny. Learn only with "
        "extensions you trust.",
        p.name, p.home);
  }
  // A workspace (or write grant) that is $HOME or holds it is not writable without
  // --allow-home-write; what is protected stays read-only in every mode (home_guard.h).
  if (p.mode != RunMode::kLearn) {
    for (const auto& line : sandbox::NarrowHomeWrites(p.policy, p.home, o.allow_home_write)) {
      spdlog::warn("{}: {}", p.name, line);
    }
    // The policy on trial is judged as enforce would apply it (its lines are the same).
    if (p.trial) sandbox::NarrowHomeWrites(*p.trial, p.home, o.allow_home_write);
    p.workspace_writable = o.allow_home_write || !IsWithin(p.home, p.workspace);
  }
  p.protected_paths = sandbox::ProtectedHomePaths(p.home, p.environ, o.install_phase);
  p.workspace_snapshot = sandbox::TakeWorkspaceSnapshot(p.workspace);
  p.read_only_entries = sandbox::ReadOnlyWorkspaceEntries(p.workspace_snapshot);
  // gander's own configuration and state (policies, audit logs, the collector's socket when
  // there is no runtime directory) are never the extension's, whatever the policy grants: a
  // workspace that is $HOME (Goose's usual cwd) would otherwise let it plant a policy for its
  // next start or speak to the collector in another extension's name.
  if (p.mode != RunMode::kLearn) {
    std::vector<std::string> writable = p.policy.write;
    writable.push_back(p.workspace);
    const std::vector<std::string> own = GanderOwnDirs("", &writable);
    for (auto* policy : {&p.policy, p.trial ? &*p.trial : nullptr}) {
      if (policy) policy->deny.insert(policy->deny.end(), own.begin(), own.end());
    }
  }
  for (const auto* policy : {&p.policy, p.trial ? &*p.trial : nullptr}) {
    for (const auto& denied : policy ? policy->deny : std::vector<std::string>{}) {
      if (IsWithin(p.workspace, denied)) {
        return Stop{kExitUsage, "workspace " + p.workspace + " lies inside denied path " + denied};
      }
    }
  }
  p.policy_label = !o.policy_file.empty() ? o.policy_file
                   : o.profile.empty()    ? std::string("your policy")
                                          : "a policy of your own (extends: " + o.profile + ")";
  return std::nullopt;
}

}  // namespace

std::optional<Stop> Prepare(const RunOptions& o, Prepared& p) {
  p.environ = sandbox::CurrentEnvironment();
  p.name = o.name.empty() ? Basename(o.command.at(0)) : o.name;
  const std::string cwd = CurrentDirectory();
  if (auto stop = PrepareWorkspace(o, cwd, p)) return stop;
  p.home = HomeDirectory(p.environ);
  if (auto stop = PreparePolicy(o, p)) return stop;

  spdlog::debug("phase: policy loaded");
  auto command = ResolveCommand(o.command, p.environ["PATH"], cwd, p.home, p.environ);
  if (!command) {
    const Error& e = command.error();
    if (e.code == EACCES) return Stop{kExitCannotExecute, e.message + ": permission denied"};
    return Stop{kExitNotFound, e.message + ": command not found"};
  }
  p.command = std::move(command).value();
  p.argv = o.command;

  spdlog::debug("phase: command resolved");
  p.landlock_abi = sandbox::landlock::ProbeAbi();
  p.notify = UserNotificationAvailable();
  if (p.gvisor() && !p.notify && !p.policy.network.allow.empty()) {
    return Stop{kExitSetupFailed,
                "--backend gvisor: network.allow needs seccomp user notification (the egress "
                "broker), which this kernel does not offer"};
  }
  p.files = static_cast<policies::FilesWatch>(p.policy.files);  // same order: off, opens, all
  if (o.files) p.files = *o.files;

  // Secrets, fetched on the host before anything starts (a failing source stops the run);
  // revoked when `p` goes, however Run ends.
  auto secrets = SecretManager::Load(p.policy.secrets, p.environ, p.name);
  if (!secrets) return Stop{kExitSetupFailed, secrets.error().Describe()};
  p.secrets_owner = std::move(secrets).value();
  p.secrets = p.secrets_owner.get();
  if (!p.secrets->empty()) SecretManager::Protect();
  return std::nullopt;
}

std::optional<Stop> CompilePolicy(Prepared& p, bool use_namespaces) {
  CompiledPolicy& c = p.compiled;
  // Learn mode: every destination, recorded; the policy on trial says what it would refuse.
  if (p.mode == RunMode::kLearn && p.trial) {
    c.network = policies::NetworkMatcher::Everything();
  } else {
    auto matcher = policies::NetworkMatcher::Compile(p.policy.network);
    // The parser validated the rules: a failure here is a bug, reported as before any start.
    if (!matcher) return Stop{kExitSetupFailed, "network policy: " + matcher.error().message};
    c.network = std::move(matcher).value();
  }
  c.network_trial.reset();
  if (p.trial) {
    auto trial = policies::NetworkMatcher::Compile(p.trial->network);
    if (!trial) return Stop{kExitSetupFailed, "network policy on trial: " + trial.error().message};
    c.network_trial = std::move(trial).value();
  }
  if (!c.host_cgroups_read) {  // once per run: the start's limits check reads the place too
    std::vector<sandbox::CgroupMount> mounts = sandbox::HostCgroupMounts();  // read once
    c.host_cgroup_place = sandbox::HostCgroupPlace(mounts);
    if (!p.gvisor()) c.host_cgroups = std::move(mounts);
    c.host_cgroups_read = true;
  }
  if (!p.gvisor()) {
    // A cgroup of the run's own only where it adds something: a memory limit, or, without a
    // pid namespace, holding the whole tree. With one, the pid namespace holds the tree and
    // pid_max bounds it, and moving the init into a v1 memory cgroup costs ~10 ms a start.
    const bool want = p.policy.limits.memory.has_value() || !use_namespaces;
    c.cgroup_place = want ? c.host_cgroup_place : sandbox::CgroupPlace{};
    c.cgroup_name = sandbox::RunCgroup::NextName();
    c.cgroups = c.host_cgroups;
    if (want) sandbox::PointAtRunCgroup(c.cgroups, c.cgroup_place, c.cgroup_name);
  }
  // What the sandbox shows of its own cgroup is system, as /proc is (under gVisor: its
  // cgroupfs mountpoint).
  // So are the CPU topology files (sandbox/filesystem_plan.h: CpuTopologyFiles).
  std::vector<std::string> system =
      p.gvisor() ? std::vector<std::string>{sandbox::gvisor::kCgroupMountpoint}
                 : sandbox::CgroupReadPaths(c.cgroups, use_namespaces);
  system.insert(system.end(), sandbox::CpuTopologyFiles().begin(),
                sandbox::CpuTopologyFiles().end());
  c.namespaces = use_namespaces;
  // As the sandbox enforces them once the home guard applied (home_guard.h).
  auto rules = [&](const policies::ExpandedPolicy& policy) {
    return sandbox::GuardedClassifierRules(policy, p.workspace, p.workspace_writable,
                                           p.protected_paths, p.command.readable, system);
  };
  c.files = rules(p.policy);
  c.files_trial.reset();
  if (p.trial) c.files_trial = rules(*p.trial);
  return std::nullopt;
}

void MakeParentDirs(const std::string& file) {
  for (size_t slash = file.find('/', 1); slash != std::string::npos;
       slash = file.find('/', slash + 1)) {
    mkdir(file.substr(0, slash).c_str(), 0700);
  }
}

constexpr EnumName<RunMode> kModeNames[] = {
    {RunMode::kEnforce, "enforce"}, {RunMode::kMonitor, "monitor"}, {RunMode::kLearn, "learn"}};

const char* ModeName(RunMode mode) { return NameOf(kModeNames, mode); }

std::string DefaultAuditLogPath(const std::string& name) {
  std::string state;
  if (const char* xdg = getenv("XDG_STATE_HOME"); xdg && *xdg) {
    state = xdg;
  } else if (const char* home = getenv("HOME"); home && *home) {
    state = std::string(home) + "/.local/state";
  } else {
    state = "/tmp";
  }
  return state + "/gander/audit/" + name + ".jsonl";
}

std::string DataDirectory(const std::string& name) {
  if (const char* xdg = getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/gander/data/" + name;
  }
  const char* home = getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/share/gander/data/" + name;
}

std::vector<std::string> UserPolicyDirs() {
  std::vector<std::string> dirs;
  if (const char* xdg = getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    dirs.push_back(std::string(xdg) + "/gander/policies");
  } else if (const char* home = getenv("HOME"); home && *home) {
    dirs.push_back(std::string(home) + "/.config/gander/policies");
  }
  return dirs;
}

Result<policies::Policy> LoadEffectivePolicy(const std::string& policy_file,
                                             const std::string& profile) {
  auto dirs = UserPolicyDirs();
  // The shipped profiles as installed files (PREFIX/share/gander/profiles) come after the
  // user's and before the copies built into the binary.
  if (auto data = InstalledDataDir()) dirs.push_back(*data + "/profiles");
  auto leaf = policy_file.empty() ? policies::LoadProfile(profile, dirs)
                                  : policies::LoadPolicyFile(policy_file);
  if (!leaf) return leaf.error();
  auto merged = policies::ResolveExtends(std::move(leaf).value(), dirs);
  if (!merged) return merged;
  Status supported =
      policies::CheckBackendSupport(*merged, merged->backend.value_or(policies::Backend::kNative));
  if (!supported) return supported.error();
  return merged;
}

std::string DefaultExtensionName(const std::string& argv0, const std::string& command) {
  struct stat st;
  std::string invoked = Basename(argv0);
  if (!invoked.empty() && invoked != "gander" && lstat(argv0.c_str(), &st) == 0 &&
      S_ISLNK(st.st_mode)) {
    return invoked;
  }
  if (argv0.find('/') == std::string::npos && invoked != "gander") {
    return invoked;  // found through PATH under another name: a symlink or a copy
  }
  return Basename(command);
}

}  // namespace gander::launcher
