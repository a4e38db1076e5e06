#include "launcher/run.h"

#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/install_paths.h"
#include "common/unique_fd.h"
#include "events/event_queue.h"
#include "exporters/audit_log.h"
#include "exporters/collector_client.h"
#include "exporters/collector_paths.h"
#include "launcher/command.h"
#include "launcher/denial_notice.h"
#include "launcher/secrets.h"
#include "monitor/path_classifier.h"
#include "monitor/seccomp_monitor.h"
#include "monitor/supervisor.h"
#include "network/egress.h"
#include "policies/backend.h"
#include "policies/expand.h"
#include "policies/fingerprint.h"
#include "policies/loader.h"
#include "policies/parser.h"
#include "policies/trial.h"
#include "relay/redactor.h"
#include "relay/rpc_monitor.h"
#include "sandbox/child_setup.h"
#include "sandbox/egress_setup.h"
#include "sandbox/environment.h"
#include "sandbox/filesystem_plan.h"
#include "sandbox/gvisor/runsc.h"
#include "sandbox/gvisor/strace.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp_filter.h"

namespace gander::launcher {
namespace {

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::optional<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (!realpath(path.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

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

// Private directories on the host, for a run without a mount namespace; removed at exit.
// MakeSmall is for the few small files of a start (the egress resolv.conf and hosts): on
// /dev/shm when it is a tmpfs, since creating and unlinking them on an ext4 /tmp at every
// start cost ~5 % of a /bin/true run's CPU (inode allocation, issue 20).
class PrivateDirs {
 public:
  ~PrivateDirs() {
    for (const std::string& base : {base_, small_base_}) {
      if (base.empty()) continue;
      nftw(
          base.c_str(),
          [](const char* path, const struct stat*, int, FTW*) { return remove(path); }, 16,
          FTW_DEPTH | FTW_PHYS);
    }
  }
  Result<std::string> Make(const std::string& name) { return Make(name, "/tmp", base_); }
  Result<std::string> MakeSmall(const std::string& name) {
    struct statfs fs {};
    bool shm = statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
               access("/dev/shm", W_OK | X_OK) == 0;
    return shm ? Make(name, "/dev/shm", small_base_) : Make(name);
  }

 private:
  Result<std::string> Make(const std::string& name, const char* parent, std::string& base) {
    if (base.empty()) {
      std::string pattern = std::string(parent) + "/gander-" + name + "-XXXXXX";
      if (!mkdtemp(pattern.data())) return ErrnoError("mkdtemp " + pattern);
      base = pattern;
    }
    std::string dir = base + "/" + std::to_string(count_++);
    if (mkdir(dir.c_str(), 0700) != 0) return ErrnoError("mkdir " + dir);
    return dir;
  }

  std::string base_, small_base_;
  int count_ = 0;
};

std::vector<std::pair<int, rlim_t>> Rlimits(const policies::Limits& limits) {
  std::vector<std::pair<int, rlim_t>> out;
  if (limits.processes) out.emplace_back(RLIMIT_NPROC, *limits.processes);
  if (limits.open_files) out.emplace_back(RLIMIT_NOFILE, *limits.open_files);
  if (limits.file_size) out.emplace_back(RLIMIT_FSIZE, *limits.file_size);
  if (limits.core_dumps && !*limits.core_dumps) out.emplace_back(RLIMIT_CORE, 0);
  // Per process: a whole-sandbox memory cap needs a delegated cgroup (not yet).
  if (limits.memory) out.emplace_back(RLIMIT_DATA, *limits.memory);
  return out;
}

// Everything a start attempt needs that does not depend on namespaces being available.
struct Prepared {
  std::string name;
  std::string workspace;
  std::string home;
  policies::ExpandedPolicy policy;
  ResolvedCommand command;
  std::vector<std::string> argv;
  std::map<std::string, std::string> environ;
  int landlock_abi = 0;
  bool notify = false;  // seccomp user notification available
  monitor::FilesWatch files = monitor::FilesWatch::kOpens;
  RunMode mode = RunMode::kEnforce;
  std::optional<policies::ExpandedPolicy> trial;  // --mode monitor: the policy on trial
  SecretManager* secrets = nullptr;               // the policy's secrets, fetched
  policies::Backend backend = policies::Backend::kNative;
};

// The gVisor backend: the same mount plan (with a mount namespace), environment, rlimits and
// command as the native sandbox, as an OCI bundle run by runsc (sandbox/gvisor/). With seccomp
// notification, network through the egress broker as native: runsc in an empty network
// namespace of gander's with --network=host, the sentry's host connects notified (a filter
// with only the broker's syscalls, `broker`), the DNS stub as the bundle's resolver.
// `root_symlinks` receives the plan's symlinks in the new root, for the strace mapper.
Result<std::unique_ptr<gvisor::GvisorRun>> StartGvisorSandbox(
    const Prepared& p, int in, int out, int err, PrivateDirs& dirs, const SeccompProgram* broker,
    std::vector<std::pair<std::string, std::string>>* root_symlinks) {
  FilesystemPlan plan =
      PlanFilesystem({p.policy, p.command.readable, {}, {}}, true, ProbeHostPath, ListHostDir);
  for (const auto& note : plan.notes) spdlog::debug("filesystem: {}", note);
  for (const auto& path : plan.refused_links) {
    spdlog::warn(
        "{}: write grant {} left out: it goes through a symlink in a directory the "
        "sandbox may write (name the real path in the policy)",
        p.name, path);
  }
  *root_symlinks = gvisor::RootSymlinks(plan.mounts);
  gvisor::BundleSpec spec;
  spec.mounts = std::move(plan.mounts);
  gvisor::RunscOptions options;
  if (broker) {
    auto dir = dirs.Make(p.name);
    if (!dir) return dir.error();
    auto mounts = EgressMounts(*dir, spec.mounts);
    if (!mounts) return mounts.error();
    spec.mounts.insert(spec.mounts.end(), mounts->begin(), mounts->end());
    spec.host_network = true;
    options.broker_filter = broker->instructions;
  }
  spec.argv = p.argv;
  spec.argv.at(0) = p.command.exec_path;  // OCI has no separate path: argv[0] is the program
  spec.envp = BuildEnvironment(p.policy, p.command.path_dirs, {{"HOME", p.home}}, p.environ,
                               p.secrets->Environment(true));
  // Secrets `as: file`: the same read-only /run/secrets as native; runsc's default
  // --file-access-mounts=shared revalidates bind mounts, so a refreshed (renamed-over) file
  // shows its new value inside without a restart.
  if (Status added = p.secrets->AddMount(spec.mounts); !added) return added.error();
  spec.cwd = p.workspace;
  spec.rlimits = Rlimits(p.policy.limits);
  spec.tmpfs_size = policies::TmpfsSize(p.policy.limits);
  spec.tmpfs_inodes = policies::TmpfsInodes(p.policy.limits);
  // The allowlist as in the native filter: enforce mode only (learning counts every syscall).
  if (p.mode != RunMode::kLearn) spec.syscalls_allow = p.policy.syscalls_allow;
  options.oci_seccomp = true;  // the floor, always (bundle.cc: SeccompSection)
  if (const char* platform = getenv("GANDER_RUNSC_PLATFORM"); platform && *platform) {
    options.platform = platform;
  }
  if (const char* runsc = getenv("GANDER_RUNSC"); runsc && *runsc) options.runsc = runsc;
  // Learn mode counts every syscall: gVisor traces them all (slow, as the native census is).
  options.strace_syscalls = p.mode == RunMode::kLearn ? std::vector<std::string>{gvisor::kStraceAll}
                                                      : gvisor::TracedSyscalls(p.files);
  return gvisor::StartGvisor(spec, options, in, out, err, p.name);
}

Result<SandboxSpec> BuildSpec(const Prepared& p, bool use_namespaces, PrivateDirs& dirs) {
  SandboxSpec spec;
  spec.use_namespaces = use_namespaces;
  spec.cgroups = HostCgroupMounts();
  FilesystemInputs inputs{p.policy, p.command.readable, {}, spec.cgroups};
  std::map<std::string, std::string> fixed{{"HOME", p.home}};
  if (!use_namespaces) {
    for (const auto& path : p.policy.private_) {
      auto dir = dirs.Make(p.name);
      if (!dir) return dir.error();
      inputs.private_host_dirs.emplace_back(path, *dir);
      if (path == p.home) fixed["HOME"] = *dir;
      if (path == "/tmp") fixed["TMPDIR"] = *dir;
    }
  }
  FilesystemPlan plan = PlanFilesystem(inputs, use_namespaces, ProbeHostPath, ListHostDir);
  for (const auto& note : plan.notes) spdlog::debug("filesystem: {}", note);
  for (const auto& path : plan.refused_links) {
    spdlog::warn(
        "{}: write grant {} left out: it goes through a symlink in a directory the "
        "sandbox may write (name the real path in the policy)",
        p.name, path);
  }
  spec.mounts = std::move(plan.mounts);
  // Egress: the broker needs notification. With namespaces the sandbox's resolver is the DNS
  // stub; without, the broker works on host loopback and only Landlock (ABI 4+) keeps the
  // extension's own TCP connect and bind off the host, so inet sockets need both.
  spec.egress = EgressModeOf(use_namespaces, p.landlock_abi, p.notify) != EgressMode::kNone;
  // Without namespaces glibc's resolver asks the host's nameservers over TCP, which the
  // broker hands to the DNS stub (docs/sandbox.md); the policy's env.set may override it.
  if (spec.egress && !use_namespaces) fixed["RES_OPTIONS"] = "use-vc";
  if (spec.egress && use_namespaces) {
    auto dir = dirs.MakeSmall(p.name);
    if (!dir) return dir.error();
    auto mounts = EgressMounts(*dir, spec.mounts);
    if (!mounts) return mounts.error();
    spec.mounts.insert(spec.mounts.end(), mounts->begin(), mounts->end());
  }

  if (p.landlock_abi > 0) {
    spec.landlock.abi = p.landlock_abi;
    spec.landlock.handled_fs = landlock::HandledFsRights(p.landlock_abi);
    // With a network namespace the sandbox's own loopback must keep working; without one,
    // Landlock is the only TCP backstop: every connect and bind is refused.
    if (!use_namespaces && p.landlock_abi >= 4) {
      spec.landlock.handled_net = landlock::kNetBindTcp | landlock::kNetConnectTcp;
    }
    if (p.landlock_abi >= 6) {
      spec.landlock.scoped = landlock::kScopeAbstractUnixSocket | landlock::kScopeSignal;
    }
    spec.landlock.rules = std::move(plan.rules);
  }
  // Executable memfds: sealed by the pid namespace's sysctl where there is one (Linux 6.3+),
  // else refused by the filter.
  // The sysctl is writable by the host's root only (uid 0 mapped to itself).
  spec.memfd_noexec =
      use_namespaces && geteuid() == 0 && access("/proc/sys/vm/memfd_noexec", F_OK) == 0;
  auto seccomp = CompileSeccompFilter({.deny_host_sockets = !use_namespaces,
                                       // Everywhere, the sysctl notwithstanding: the same
                                       // answer for every user and mode (defence in depth).
                                       .deny_exec_memfd = true,
                                       .notify = p.notify,
                                       .files = p.files,
                                       .census = p.mode == RunMode::kLearn,
                                       .network = spec.egress,
                                       .handoff_fd = kChildSyncFd,
                                       .allow = p.policy.syscalls_allow});
  if (!seccomp) return seccomp.error();
  spec.seccomp = std::move(seccomp).value();
  spec.rlimits = Rlimits(p.policy.limits);
  spec.tmpfs_size = policies::TmpfsSize(p.policy.limits);
  spec.tmpfs_inodes = policies::TmpfsInodes(p.policy.limits);
  if (use_namespaces && p.policy.limits.processes) {
    // pid_max bounds pid numbers (1..pid_max-1); the kernel refuses values below 301.
    spec.pid_max = std::max<uint64_t>(*p.policy.limits.processes + 1, 301);
  }
  spec.cwd = p.workspace;
  spec.exec_path = p.command.exec_path;
  spec.argv = p.argv;
  spec.envp = BuildEnvironment(p.policy, p.command.path_dirs, fixed, p.environ,
                               p.secrets->Environment(use_namespaces));
  if (Status added = p.secrets->AddToSandbox(spec); !added) return added.error();
  return spec;
}

// One running extension: its sandbox, our ends of its stdio and what watches it. A restart
// behind the relay (a refreshed environment secret) replaces it with a fresh one.
struct Extension {
  std::optional<SandboxSpec> spec;
  SandboxProcess sandbox;
  UniqueFd to_child, from_child, from_child_err;  // to_child goes to the supervisor loop
  StartFailure exec_failure;                      // reported on the sync socket after the start
  std::unique_ptr<monitor::KernelUnotify> unotify;
  std::unique_ptr<monitor::Egress> egress;
  std::unique_ptr<monitor::SeccompMonitor> seccomp_monitor;
  // The gVisor backend: runsc (killed, its files removed, when this goes) and what maps its
  // strace log onto events.
  std::unique_ptr<gvisor::GvisorRun> gvisor;
  std::unique_ptr<gvisor::StraceMapper> strace;
  std::vector<std::pair<std::string, std::string>> root_symlinks;  // of the gVisor root

  int pidfd() const { return gvisor ? gvisor->pidfd() : sandbox.pidfd.get(); }
  // Without a pid namespace, SIGKILL of the init does not take its children with it.
  pid_t KillGroup() const { return sandbox.namespaces ? -1 : sandbox.extension_pid; }
};

// Plans and starts one sandbox with its stdio on fresh pipes: the extension's stderr goes
// through the relay too (secret redaction). The environment is built from the secrets' current
// values.
Result<std::unique_ptr<Extension>> StartExtension(const Prepared& p, bool use_namespaces,
                                                  PrivateDirs& dirs, StartFailure* failure) {
  auto x = std::make_unique<Extension>();
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd child_stdin(in_pipe[0]);
  x->to_child.Reset(in_pipe[1]);
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  x->from_child.Reset(out_pipe[0]);
  UniqueFd child_stdout(out_pipe[1]);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  x->from_child_err.Reset(err_pipe[0]);
  UniqueFd child_stderr(err_pipe[1]);
  for (const UniqueFd* fd : {&x->to_child, &x->from_child, &x->from_child_err}) {
    fcntl(fd->get(), F_SETFL, O_NONBLOCK);
  }
  if (p.backend == policies::Backend::kGvisor) {
    // The broker's part of the filter only; the spec carries it for the monitor (no denials).
    x->spec.emplace();
    if (p.notify) {
      auto broker = CompileSeccompFilter({.notify = true,
                                          .files = monitor::FilesWatch::kOff,
                                          .network = true,
                                          .broker_only = true,
                                          .allow = std::nullopt});
      if (!broker) return broker.error();
      x->spec->seccomp = std::move(broker).value();
      x->spec->egress = true;
    }
    auto started =
        StartGvisorSandbox(p, child_stdin.get(), child_stdout.get(), child_stderr.get(), dirs,
                           x->spec->egress ? &x->spec->seccomp : nullptr, &x->root_symlinks);
    if (!started) return MakeError("gvisor: " + started.error().Describe());
    x->gvisor = std::move(started).value();
    x->sandbox.listener = std::move(x->gvisor->listener);
    x->sandbox.egress = std::move(x->gvisor->egress);
    x->sandbox.pid = x->gvisor->pid();
    x->sandbox.namespaces = true;  // runsc's sandbox and gofer die with it (PDEATHSIG)
    x->sandbox.started = true;
    return x;
  }
  auto built = BuildSpec(p, use_namespaces, dirs);
  if (!built) return built.error();
  x->spec = std::move(built).value();
  x->spec->stdin_fd = child_stdin.get();
  x->spec->stdout_fd = child_stdout.get();
  x->spec->stderr_fd = child_stderr.get();
  spdlog::debug("phase: sandbox planned, seccomp compiled");
  auto sandbox = StartSandbox(*x->spec, failure);
  if (!sandbox) return sandbox.error();
  x->sandbox = std::move(sandbox).value();
  return x;
}

// The egress broker over the sockets the sandbox init handed over; nullptr when the policy's
// network rules do not compile (the parser validated them, so this is a bug).
std::unique_ptr<monitor::Egress> MakeEgress(const Prepared& p, SandboxProcess& sandbox,
                                            monitor::Unotify& unotify,
                                            monitor::TargetMemory& memory,
                                            monitor::BoundedEventQueue& queue,
                                            monitor::ToolCallTracker& tool_calls) {
  // Learn mode: every destination, recorded; the policy on trial says what it would refuse.
  auto matcher = p.mode == RunMode::kLearn && p.trial
                     ? Result<policies::NetworkMatcher>(policies::NetworkMatcher::Everything())
                     : policies::NetworkMatcher::Compile(p.policy.network);
  if (!matcher) {
    spdlog::error("{}: network policy: {}", p.name, matcher.error().message);
    return nullptr;
  }
  monitor::EgressConfig config;
  config.extension = p.name;
  config.matcher = std::move(matcher).value();
  config.namespaces = sandbox.namespaces;
  config.tool_calls = &tool_calls;
  if (sandbox.namespaces) config.sandbox_pid = sandbox.pid;
  if (p.trial) {
    auto trial = policies::NetworkMatcher::Compile(p.trial->network);
    if (!trial) {
      spdlog::error("{}: network policy on trial: {}", p.name, trial.error().message);
      return nullptr;
    }
    config.trial = std::move(trial).value();
  }
  if (p.policy.network.deny_errno) {
    config.deny_errno =
        policies::DenyErrnoValue(*p.policy.network.deny_errno).value_or(ECONNREFUSED);
  }
  // Test knobs: a short UDP idle time and a small flow table (egress_udp_tests).
  if (const char* ms = getenv("GANDER_UDP_IDLE_MS"); ms && std::atoi(ms) > 0) {
    config.udp_idle = std::chrono::milliseconds(std::atoi(ms));
  }
  if (const char* n = getenv("GANDER_UDP_MAX_FLOWS"); n && std::atoi(n) > 0) {
    config.max_udp_flows = static_cast<size_t>(std::atoi(n));
  }
  config.sockets = std::move(sandbox.egress);
  // No network namespace: the relay, park and refuse sockets on host loopback, and the DNS
  // stub's TCP listener there: the host's resolv.conf stays in force, and a TCP connect to
  // one of its nameservers on port 53 (RES_OPTIONS=use-vc, BuildSpec) reaches the stub.
  if (!sandbox.namespaces) {
    if (int err = monitor::OpenEgressSockets(config.sockets); err != 0) {
      spdlog::error("{}: egress sockets: {}", p.name, std::strerror(err));
      return nullptr;
    }
    OpenDnsStub(config.sockets, true);
    if (config.sockets.dns_tcp) {
      spdlog::info(
          "{}: egress broker only: DNS over TCP (RES_OPTIONS=use-vc, glibc resolvers) "
          "to the host's nameservers is served by the stub; UDP is refused",
          p.name);
    } else {
      spdlog::warn("{}: no DNS stub: names do not resolve", p.name);
    }
    for (const policies::NetworkRule& rule : p.policy.network.allow) {
      if (rule.protocol == policies::Protocol::kUdp) {
        spdlog::warn("{}: {}: protocol: udp has no effect without namespaces (UDP is refused)",
                     p.name, policies::FormatMark(rule.mark));
      }
    }
    std::ifstream resolv_conf("/etc/resolv.conf");
    std::stringstream text;
    text << resolv_conf.rdbuf();
    config.nameservers = monitor::ParseNameservers(text.str());
    std::ifstream hosts("/etc/hosts");
    std::stringstream hosts_text;
    hosts_text << hosts.rdbuf();
    config.hosts_file = monitor::ParseHostsFile(hosts_text.str());
  }
  return std::make_unique<monitor::Egress>(std::move(config), unotify, memory, queue);
}

// Did the start fail because user namespaces are unavailable here (refused at clone, or
// created without the power to mount, as under AppArmor's restriction)?
bool NamespacesRefused(const Error& error, const StartFailure& failure) {
  if (error.message == "clone") {
    return error.code == EPERM || error.code == ENOSPC || error.code == EINVAL ||
           error.code == EUSERS;
  }
  bool setup_step = failure.step.starts_with("make mounts private") ||
                    failure.step.starts_with("mount staging") ||
                    failure.step.starts_with("write uid");
  return setup_step && (failure.err == EPERM || failure.err == EACCES);
}

int Fail(int status, const std::string& message) {
  spdlog::error("{}", message);
  return status;
}

bool UserNotificationAvailable() {
  uint32_t action = SECCOMP_RET_USER_NOTIF;
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

// mkdir -p; errors are left to the open that follows.
void MakeParentDirs(const std::string& file) {
  for (size_t slash = file.find('/', 1); slash != std::string::npos;
       slash = file.find('/', slash + 1)) {
    mkdir(file.substr(0, slash).c_str(), 0700);
  }
}

// The install sandbox's sink: each event marked as the install phase's, so that nothing
// gander's own installer does is counted as the extension's (metrics, audit, suggest).
class InstallPhaseSink final : public monitor::EventSink {
 public:
  explicit InstallPhaseSink(monitor::EventSink* inner) : inner_(inner) {}
  void Publish(const monitor::Event& event) override {
    monitor::Event marked = event;
    marked.install_phase = true;
    inner_->Publish(marked);
  }
  void Flush() override { inner_->Flush(); }

 private:
  monitor::EventSink* inner_;
};

// The audit log, or nothing (with a warning): losing the log must not stop the extension.
std::unique_ptr<exporters::AuditLog> OpenAuditLog(exporters::AuditLogOptions options,
                                                  const std::string& name) {
  MakeParentDirs(options.path);
  auto log = exporters::AuditLog::Open(std::move(options));
  if (!log) {
    spdlog::warn("{}: no audit log: {}", name, log.error().Describe());
    return nullptr;
  }
  return std::move(log).value();
}

// How often the syscall counts are published while the extension runs.
constexpr auto kCountsInterval = std::chrono::seconds(5);

// `secrets_mounted`: file-delivered secrets appear at /run/secrets (namespaces or gVisor).
monitor::RunInfo RunInfo(const Prepared& p, IsolationLevel level, const std::string& accounting,
                         bool secrets_mounted) {
  std::vector<monitor::RunSecret> secrets;
  for (const auto& [name, rule] : p.policy.secrets) {
    const bool file = rule.as == policies::SecretDelivery::kFile;
    secrets.push_back({.name = name,
                       .from = rule.from == policies::SecretSource::kEnv    ? "env"
                               : rule.from == policies::SecretSource::kFile ? "file"
                                                                            : "command",
                       .as = file ? "file" : "env",
                       .file = file ? p.secrets->FilePath(name, secrets_mounted) : ""});
  }
  std::string sources;
  for (const auto& source : p.policy.sources) sources += (sources.empty() ? "" : " <- ") + source;
  const bool gvisor = p.backend == policies::Backend::kGvisor;
  return {.backend = gvisor ? "gvisor" : "native",
          .isolation = gvisor ? "gvisor" : LevelName(level),
          .mode = ModeName(p.mode),
          .syscall_accounting = accounting,
          .policy_sha256 = policies::PolicySha256(p.policy),
          .policy = sources,
          .workspace = p.workspace,
          .command_grants = p.command.readable,
          .secrets = std::move(secrets)};
}

monitor::Event Lifecycle(const std::string& name, monitor::LifecyclePhase what,
                         std::string detail) {
  monitor::Event e;
  e.time_ns = monitor::WallClockNowNs();
  e.extension = name;
  e.payload = monitor::LifecycleEvent{what, std::move(detail)};
  return e;
}

// The `process` exit event of the extension (`status`: its exit code, or 128+N for signal N).
monitor::Event ExtensionExit(const Prepared& p, const SandboxProcess& sandbox, int status) {
  monitor::Event exit = Lifecycle(p.name, monitor::LifecyclePhase::kStop, "");
  // The init reports the extension's pid as it sees it: inside the pid namespace, if any.
  if (sandbox.extension_pid > 0) {
    (sandbox.namespaces ? exit.sandbox_pid : exit.pid) = sandbox.extension_pid;
  }
  monitor::ProcessEvent process{.action = monitor::ProcessAction::kExit,
                                .path = p.command.exec_path};
  if (status > 128) {
    process.signal = status - 128;
  } else {
    process.exit_code = status;
  }
  exit.payload = process;
  return exit;
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
// through the egress broker, every network destination (MakeEgress). The one place where
// learn mode's reach is decided: the mount view and the Landlock rules follow from the
// widened policy; the seccomp floor is the same in every mode.
void PrepareLearn(Prepared& p, const std::vector<std::string>& keep_denied) {
  // Every directory of / but the kernel's and the runtime's: /proc and /dev are the sandbox's
  // own, /sys and /run (sockets of system daemons: docker, D-Bus) stay out of reach. The
  // host's /tmp is shown and writable like the home: what an extension reads there (a data
  // directory under /tmp) is what learning must see.
  std::vector<std::string> roots;
  for (const auto& name : ListHostDir("/")) {
    std::string path = "/" + name;
    if (path == "/proc" || path == "/dev" || path == "/sys" || path == "/run" || path == "/tmp") {
      continue;
    }
    PathInfo info = ProbeHostPath(path);
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

}  // namespace

const char* ModeName(RunMode mode) {
  switch (mode) {
    case RunMode::kEnforce:
      return "enforce";
    case RunMode::kMonitor:
      return "monitor";
    case RunMode::kLearn:
      return "learn";
  }
  return "enforce";
}

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

int Run(const RunOptions& o) {
  spdlog::debug("phase: arguments parsed");
  Prepared p;
  p.environ = CurrentEnvironment();
  p.name = o.name.empty() ? Basename(o.command.at(0)) : o.name;
  const std::string cwd = CurrentDirectory();

  // The workspace: an existing directory, never `/`, never inside a denied path.
  std::string workspace = o.workspace.empty() ? cwd : o.workspace;
  auto real_workspace = RealPath(workspace);
  struct stat st;
  if (!real_workspace || stat(real_workspace->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Fail(kExitUsage, "workspace " + workspace + " is not an existing directory");
  }
  if (*real_workspace == "/") return Fail(kExitUsage, "the workspace cannot be /");
  p.workspace = *real_workspace;
  p.home = HomeDirectory(p.environ);

  auto policy = LoadEffectivePolicy(o.policy_file, o.profile);
  if (!policy) return Fail(kExitUsage, policy.error().Describe());
  p.backend = o.backend.value_or(policy->backend.value_or(policies::Backend::kNative));
  if (Status ok = policies::CheckBackendSupport(*policy, p.backend, {o.no_namespaces}); !ok) {
    return Fail(kExitUsage, ok.error().Describe());
  }
  const bool gvisor = p.backend == policies::Backend::kGvisor;
  const std::string data = DataDirectory(p.name);
  auto expanded = policies::Expand(*policy, {p.workspace, p.home, p.environ, data});
  if (!expanded) return Fail(kExitUsage, expanded.error().Describe());
  p.policy = std::move(expanded).value();
  // The data directory exists before the sandbox binds it, owned by the user, 0700.
  for (const auto& path : p.policy.write) {
    if (IsWithin(path, data)) MakeParentDirs(path + "/");
  }
  p.mode = o.mode;
  if (p.mode == RunMode::kMonitor) {
    if (auto trial = PrepareTrial(p); !trial) return Fail(kExitUsage, trial.error().Describe());
    spdlog::warn(
        "{}: --mode monitor: the policy is on trial, not enforced beyond the default "
        "profile; what it would refuse is logged as would_deny",
        p.name);
  } else if (p.mode == RunMode::kLearn && !gvisor) {
    std::string audit_log = !o.audit_log.empty() ? o.audit_log
                            : p.policy.audit_log ? *p.policy.audit_log
                                                 : DefaultAuditLogPath(p.name);
    PrepareLearn(p, GanderOwnDirs(audit_log));
    spdlog::warn(
        "{}: --mode learn exposes your files and network: the extension can read the host's "
        "files, read and write your home directory ({}) and connect anywhere, host loopback "
        "included; what the policy would refuse is logged as would_deny. Learn only with "
        "extensions you trust.",
        p.name, p.home);
  }
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
        return Fail(kExitUsage, "workspace " + p.workspace + " lies inside denied path " + denied);
      }
    }
  }

  spdlog::debug("phase: policy loaded");
  auto command = ResolveCommand(o.command, p.environ["PATH"], cwd, p.home, p.environ);
  if (!command) {
    const Error& e = command.error();
    if (e.code == EACCES) return Fail(kExitCannotExecute, e.message + ": permission denied");
    return Fail(kExitNotFound, e.message + ": command not found");
  }
  p.command = std::move(command).value();
  p.argv = o.command;

  spdlog::debug("phase: command resolved");
  p.landlock_abi = landlock::ProbeAbi();
  p.notify = UserNotificationAvailable();
  if (gvisor && !p.notify && !p.policy.network.allow.empty()) {
    return Fail(kExitSetupFailed,
                "--backend gvisor: network.allow needs seccomp user notification (the egress "
                "broker), which this kernel does not offer");
  }
  p.files = static_cast<monitor::FilesWatch>(p.policy.files);  // same order: off, opens, all
  if (o.files) p.files = *o.files;

  // Secrets, fetched on the host before anything starts (a failing source stops the run);
  // revoked when `secrets` goes out of scope, however Run ends.
  auto secrets = SecretManager::Load(p.policy.secrets, p.environ, p.name);
  if (!secrets) return Fail(kExitSetupFailed, secrets.error().Describe());
  p.secrets = secrets->get();
  if (!p.secrets->empty()) SecretManager::Protect();

  const IsolationLevel required = o.require.value_or(IsolationLevel::kBasic);
  bool use_namespaces = !o.no_namespaces;
  if (!use_namespaces && required == IsolationLevel::kFull) {
    return Fail(kExitSetupFailed, "--require full refuses --no-namespaces");
  }

  PrivateDirs private_dirs;
  std::unique_ptr<Extension> current;
  IsolationLevel level = IsolationLevel::kBasic;
  for (;;) {
    level = gvisor ? IsolationLevel::kFull : LevelOf(use_namespaces, p.landlock_abi > 0, true);
    if (level < required) {
      return Fail(kExitSetupFailed,
                  std::string("--require ") + LevelName(required) + ": this host gives '" +
                      LevelName(level) + "'" +
                      (p.landlock_abi == 0 ? " (Landlock is not available)" : "") +
                      "; see `gander doctor`");
    }
    StartFailure failure;
    auto started = StartExtension(p, use_namespaces, private_dirs, &failure);
    if (started) {
      current = std::move(started).value();
      break;
    }
    if (!gvisor && use_namespaces && NamespacesRefused(started.error(), failure) &&
        required < IsolationLevel::kFull) {
      spdlog::warn(
          "{}: user namespaces are not available here ({}); running with Landlock and "
          "seccomp only. `gander doctor` explains; --require full refuses instead.",
          p.name, started.error().Describe());
      use_namespaces = false;
      continue;
    }
    if (failure.exec_failed) {
      return Fail(failure.err == ENOENT ? kExitNotFound : kExitCannotExecute,
                  "cannot execute " + p.command.exec_path + ": " + std::strerror(failure.err));
    }
    return Fail(kExitSetupFailed, started.error().Describe());
  }

  // The monitor: events go through a bounded queue (never blocking the extension) to the
  // collector, which counts them and writes the audit log, or to the audit log directly.
  const bool learn = p.mode == RunMode::kLearn;
  // Under gVisor with notification the egress broker accounts for the network too.
  const std::string accounting =
      gvisor ? std::string(learn ? "gvisor-census" : "gvisor-strace") + (p.notify ? "+broker" : "")
      : !p.notify ? "none"
      : learn     ? "census"
                  : "watched";
  const monitor::RunInfo info = RunInfo(p, level, accounting, use_namespaces || gvisor);
  monitor::BoundedEventQueue queue(8192);
  std::string audit_path = !o.audit_log.empty() ? o.audit_log
                           : p.policy.audit_log ? *p.policy.audit_log
                                                : DefaultAuditLogPath(p.name);
  exporters::AuditLogOptions audit_options{.path = audit_path,
                                           .max_bytes = p.policy.audit_log_max_size,
                                           .max_files = p.policy.audit_log_files};
  std::unique_ptr<exporters::AuditLog> audit;
  std::unique_ptr<exporters::CollectorClient> collector;
  monitor::EventSink* sink = nullptr;
  if (o.collector == CollectorUse::kOff) {
    audit = OpenAuditLog(audit_options, p.name);
    sink = audit.get();
  } else {
    MakeParentDirs(audit_path);
    exporters::CollectorClientOptions options;
    options.hello.extension = p.name;
    options.hello.info.run = info;
    options.hello.home = p.home;
    for (const auto& rule : p.policy.network.allow) {
      options.hello.info.destinations.push_back(rule.host);  // their series start at 0
    }
    for (const auto& [name, rule] : p.policy.secrets) options.hello.info.secrets.push_back(name);
    if (o.collector == CollectorUse::kAuto) {
      options.start_command = exporters::DefaultCollectorStartCommand();
    }
    options.audit_log = audit_options;
    collector = exporters::CollectorClient::Create(std::move(options));
    if (collector->fallback()) {
      spdlog::debug("{}: no collector ({}): writing the audit log directly", p.name,
                    collector->last_error() ? collector->last_error()->Describe() : "none");
    }
    sink = collector.get();
  }
  InstallPhaseSink install_sink(sink);
  if (o.install_phase && sink) sink = &install_sink;
  // A refusal is never silent: one actionable line on stderr when a call or the run fails after
  // one (launcher/denial_notice.h).
  DenialNotice notice(sink, p.name,
                      !o.policy_file.empty() ? o.policy_file
                      : o.profile.empty()    ? std::string("your policy")
                                             : "a policy of your own (extends: " + o.profile + ")");
  sink = &notice;
  monitor::Event start = Lifecycle(
      p.name, monitor::LifecyclePhase::kStart,
      p.command.exec_path + " (backend " + info.backend + ", isolation " + info.isolation +
          ", mode " + ModeName(p.mode) + ", syscall accounting " + accounting + ")");
  std::get<monitor::LifecycleEvent>(start.payload).info = info;
  queue.Push(std::move(start));

  // The MCP-aware stdio relay (relay issue): the tracker labels every event with the tool call
  // in flight and reports each call; injected secrets are redacted from stdout and stderr.
  constexpr size_t kMaxLine = 64u << 20;
  monitor::RpcMonitor rpc(p.name, &queue, kMaxLine);
  std::set<std::string> warned_unredacted;
  auto redacted = [&] {
    std::vector<monitor::Secret> out;
    for (auto& [name, value] : p.secrets->Redactions()) {
      if (!monitor::IsRedactable(value) && warned_unredacted.insert(name).second) {
        spdlog::warn(
            "{}: secret {} is not redacted from the extension's output: its value is too short "
            "or too common to be a secret ({}+ characters, not a plain word or number); if it is "
            "configuration, pass it with env.pass instead",
            p.name, name, monitor::kMinSecretBytes);
      }
      out.push_back({name, value});
    }
    return out;
  };
  auto redaction_events = [&](std::string channel) {
    return [&, channel](const std::string& secret, uint64_t count) {
      monitor::Event e = Lifecycle(p.name, monitor::LifecyclePhase::kStart, "");
      e.tool_call = rpc.tracker().Slot();
      e.payload = monitor::RedactionEvent{secret, channel, count};
      queue.Push(std::move(e));
    };
  };
  monitor::Redactor stdout_redactor(redacted(), redaction_events("stdout"));
  monitor::Redactor stderr_redactor(redacted(), redaction_events("stderr"));
  stdout_redactor.SetJsonLines(true);      // MCP's JSON-RPC lines stay valid JSON
  p.secrets->hooks.values_changed = [&] {  // a refresh: old and new values are redacted
    stdout_redactor.SetSecrets(redacted());
    stderr_redactor.SetSecrets(redacted());
  };

  monitor::SupervisorOptions supervise;
  supervise.up.max_line = supervise.down.max_line = kMaxLine;
  supervise.err.hold_lines = false;
  supervise.client_observer = &rpc.client_side();
  supervise.server_observer = &rpc.server_side();
  if (!stdout_redactor.empty()) supervise.stdout_rewriter = &stdout_redactor;
  if (!stderr_redactor.empty()) supervise.stderr_rewriter = &stderr_redactor;
  supervise.on_relay_done = [&](const monitor::LineRelayStats& up,
                                const monitor::LineRelayStats& down,
                                const monitor::LineRelayStats& err) {
    queue.Push(Lifecycle(
        p.name, monitor::LifecyclePhase::kRelay,
        fmt::format(
            "client_lines={} client_not_json={} client_oversize={} server_lines={} "
            "server_not_json={} server_oversize={} stderr_bytes={} tool_calls_unanswered={}",
            up.lines, up.non_json_lines, up.oversize_lines, down.lines, down.non_json_lines,
            down.oversize_lines, err.bytes_in, rpc.tracker().tool_calls_in_flight())));
  };
  // Everything that watches one extension: its start report on the sync socket (watched before
  // the listener, so the extension's pid is known before any of its exits is decided), its
  // seccomp listener and egress broker. Their watches are the extension's own: a restart drops
  // them with it.
  // gVisor's strace log, mapped onto events; false once every writer of the log is gone.
  auto read_strace = [&](Extension& x) {
    char buf[65536];
    std::vector<monitor::Event> events;
    for (;;) {
      ssize_t n = read(x.gvisor->strace_fd(), buf, sizeof(buf));
      if (n > 0) {
        x.strace->Feed({buf, static_cast<size_t>(n)}, events);
        continue;
      }
      for (auto& e : events) queue.Push(std::move(e));
      return n < 0 && errno == EAGAIN;
    }
  };
  monitor::KernelTargetMemory memory;
  monitor::ProcfsProcesses processes;
  auto watch_extension = [&](Extension& x,
                             bool restarted) -> std::optional<std::vector<monitor::Watch>> {
    std::vector<monitor::Watch> watches;
    if (!x.sandbox.started) {
      watches.push_back({x.sandbox.sync.get(), [&, ex = &x, restarted](short) {
                           if (ReadStartReport(ex->sandbox, *ex->spec, &ex->exec_failure)) {
                             spdlog::info(
                                 "{}: {}, isolation {} (namespaces {}, landlock ABI {}), mode "
                                 "{}, accounting {}",
                                 p.name, restarted ? "restarted" : "started", LevelName(level),
                                 use_namespaces ? "on" : "off", p.landlock_abi, ModeName(p.mode),
                                 accounting);
                           }
                           return false;
                         }});
    }
    if (x.gvisor && x.gvisor->strace_fd() >= 0) {
      x.strace = std::make_unique<gvisor::StraceMapper>(gvisor::StraceMapperConfig{
          .extension = p.name,
          .rules = monitor::ClassifierRules::From(p.policy, p.workspace, p.command.readable,
                                                  {gvisor::kCgroupMountpoint}),
          .trial =
              p.trial ? std::optional(monitor::ClassifierRules::From(
                            *p.trial, p.workspace, p.command.readable, {gvisor::kCgroupMountpoint}))
                      : std::nullopt,
          .home = p.home,
          .workspace = p.workspace,
          .root_symlinks = x.root_symlinks,
          .files = p.files,
          .log_all_files = learn,
          .census = learn,
          .tool_calls = &rpc.tracker()});
      watches.push_back({x.gvisor->strace_fd(), [&, ex = &x](short) { return read_strace(*ex); }});
    }
    if (!x.sandbox.listener) return watches;
    x.unotify = std::make_unique<monitor::KernelUnotify>(std::move(x.sandbox.listener));
    // What the sandbox shows of its own cgroup is system, as /proc is (not for gVisor's
    // broker, whose notifications carry no file paths).
    std::vector<std::string> cgroup = x.spec
                                          ? CgroupReadPaths(x.spec->cgroups, x.spec->use_namespaces)
                                          : std::vector<std::string>{};
    cgroup.insert(cgroup.end(), CpuTopologyFiles().begin(), CpuTopologyFiles().end());
    monitor::SeccompMonitorConfig config{
        .extension = p.name,
        .rules = monitor::ClassifierRules::From(p.policy, p.workspace, p.command.readable, cgroup),
        .trial = p.trial ? std::optional(monitor::ClassifierRules::From(*p.trial, p.workspace,
                                                                        p.command.readable, cgroup))
                         : std::nullopt,
        .denials = x.spec->seccomp.denials,
        .unlisted = x.spec->seccomp.unlisted,
        .unlisted_errno = kUnlistedErrno,
        .files = p.files,
        .census = learn && !x.gvisor,  // under gVisor: the broker's notifications only
        .log_all_files = learn,
        .log_home = o.log_home,
        .home = p.home,
        .workspace = p.workspace,
        .extension_pid = &x.sandbox.extension_pid,
        .namespaces = x.sandbox.namespaces,
        .tool_calls = &rpc.tracker(),
        .count_syscalls = !x.gvisor};
    if (x.spec->egress) {
      x.egress = MakeEgress(p, x.sandbox, *x.unotify, memory, queue, rpc.tracker());
      if (!x.egress) return std::nullopt;
      config.network = x.egress.get();
      watches.push_back({x.egress->fd(), [ex = &x](short) {
                           ex->egress->OnReady();
                           return true;
                         }});
    }
    x.seccomp_monitor = std::make_unique<monitor::SeccompMonitor>(*x.unotify, memory, processes,
                                                                  std::move(config), queue);
    // POLLHUP: no process uses the filter any more (the sandbox is gone).
    watches.push_back({x.unotify->fd(), [ex = &x](short revents) {
                         if (revents & POLLIN) return ex->seccomp_monitor->HandleOne();
                         return false;
                       }});
    return watches;
  };
  auto first_watches = watch_extension(*current, false);
  if (!first_watches) return Fail(kExitSetupFailed, "egress: bad network policy");
  for (auto& w : *first_watches) {
    w.extension = true;
    supervise.watches.push_back(std::move(w));
  }
  supervise.client_in = o.client_in;
  supervise.client_out = o.client_out;
  supervise.child_in = current->to_child.Release();
  supervise.child_out = current->from_child.get();
  supervise.child_err = current->from_child_err.get();
  supervise.pidfd = current->pidfd();
  supervise.kill_group = current->KillGroup();
  if (gvisor) {
    supervise.terminate = [&] { current->gvisor->Terminate(); };
    supervise.started = [&] { return !current->strace || current->strace->started(); };
    // The strace lines of a tool call are in the log before its answer on stdout: read them
    // first, so they are attributed to the call rather than to the idle time after it.
    supervise.before_relay = [&] {
      if (current->strace) read_strace(*current);
    };
  }
  if (collector) {
    // Acknowledgements, a lost connection, or the reconnection timer.
    supervise.watches.push_back({collector->fd(), [&](short) {
                                   collector->Flush();
                                   return true;
                                 }});
  }
  // Syscall counts go out every few seconds, so metrics move while the extension runs.
  auto publish_counts = [&](Extension& x) {
    // Learn mode under gVisor: the strace census counts the sandbox's syscalls; the broker's
    // notifications are the sentry's host-side view of the same connects, not counted twice.
    if (x.seccomp_monitor && !(x.gvisor && learn)) x.seccomp_monitor->PublishCounts();
    if (x.strace) {
      for (auto& e : x.strace->TakeCounts()) queue.Push(std::move(e));
    }
  };
  auto counts_due = std::chrono::steady_clock::now() + kCountsInterval;
  supervise.after_turn = [&] {
    if (std::chrono::steady_clock::now() >= counts_due) {
      publish_counts(*current);
      counts_due = std::chrono::steady_clock::now() + kCountsInterval;
    }
    if (sink) queue.Drain(*sink, std::chrono::milliseconds(2));
  };

  // Restart behind the relay, for an environment secret that was refreshed: the supervisor
  // kills the extension and drops its watches, then asks here for a fresh sandbox (same policy,
  // same isolation, the secrets' current values in its environment). The previous Extension
  // is kept until the next restart: the loop may still hold its fds for the rest of the turn.
  std::unique_ptr<Extension> previous;
  monitor::RestartControl restart;
  restart.rpc = &rpc;
  int64_t restart_began_ms = 0;
  restart.start = [&]() -> std::optional<monitor::ExtensionHandles> {
    restart_began_ms = monitor::MonotonicNowMs();
    publish_counts(*current);
    queue.Push(ExtensionExit(p, current->sandbox, 128 + SIGKILL));  // the loop just killed it
    StartFailure failure;
    auto fresh = StartExtension(p, use_namespaces, private_dirs, &failure);
    if (!fresh) {
      spdlog::error("{}: restart: {}{}", p.name, fresh.error().Describe(),
                    failure.step.empty() ? "" : " (at '" + failure.step + "')");
      return std::nullopt;
    }
    auto watches = watch_extension(**fresh, true);
    if (!watches) {
      syscall(SYS_pidfd_send_signal, (*fresh)->sandbox.pidfd.get(), SIGKILL, nullptr, 0);
      siginfo_t info{};
      waitid(static_cast<idtype_t>(P_PIDFD), (*fresh)->sandbox.pidfd.get(), &info, WEXITED);
      return std::nullopt;
    }
    previous = std::move(current);
    current = std::move(fresh).value();
    return monitor::ExtensionHandles{.child_in = current->to_child.Release(),
                                     .child_out = current->from_child.get(),
                                     .child_err = current->from_child_err.get(),
                                     .pidfd = current->pidfd(),
                                     .kill_group = current->KillGroup(),
                                     .watches = std::move(*watches)};
  };
  restart.on_restart = [&](const std::string& reason, bool ok) {
    int64_t ms = monitor::MonotonicNowMs() - restart_began_ms;
    if (ok) {
      spdlog::info("{}: restarted behind the relay ({}): a fresh sandbox in {} ms", p.name, reason,
                   ms);
      monitor::Event e = Lifecycle(p.name, monitor::LifecyclePhase::kRestart, reason);
      if (pid_t pid = current->sandbox.extension_pid; pid > 0) {
        (current->sandbox.namespaces ? e.sandbox_pid : e.pid) = pid;
      }
      queue.Push(std::move(e));
    } else {
      spdlog::error("{}: the restart behind the relay ({}) failed: the extension is gone", p.name,
                    reason);
      queue.Push(Lifecycle(p.name, monitor::LifecyclePhase::kRestart,
                           reason + "; the fresh extension could not be started"));
    }
    p.secrets->OnRestarted();
  };
  supervise.restart = &restart;
  p.secrets->hooks.restart = [&](const std::string& reason) { restart.requested = reason; };
  p.secrets->hooks.report = [&](const std::string& detail) {
    queue.Push(Lifecycle(p.name, monitor::LifecyclePhase::kSecret, detail));
  };
  for (auto& watch : p.secrets->Watches()) supervise.watches.push_back(std::move(watch));

  int status = monitor::Supervise(supervise);
  // Connections still closing when the extension exited end now, each with its event.
  if (current->egress) current->egress->Shutdown(std::chrono::milliseconds(500));
  if (current->strace) read_strace(*current);  // what gVisor wrote before it exited
  rpc.FailInFlight("the session ended");       // calls never answered end as `aborted` events
  p.secrets->RevokeAll();                      // now, so its events reach the audit log
  p.secrets->hooks = {};

  publish_counts(*current);
  const StartFailure& exec_failure = current->exec_failure;
  const SandboxProcess& sandbox = current->sandbox;
  if (!exec_failure.step.empty()) {
    queue.Push(Lifecycle(
        p.name, monitor::LifecyclePhase::kStop,
        "could not start: " + exec_failure.step + ": " + std::strerror(exec_failure.err)));
  } else {
    queue.Push(ExtensionExit(p, sandbox, status));
    queue.Push(Lifecycle(p.name, monitor::LifecyclePhase::kStop,
                         "exited with status " + std::to_string(status)));
  }
  while (sink && !queue.empty()) queue.Drain(*sink, std::chrono::milliseconds(100));
  if (audit && audit->last_error()) {
    spdlog::warn("{}: audit log {}: {}", p.name, audit_path, audit->last_error()->Describe());
  }
  if (collector) {
    collector->Finish(std::chrono::milliseconds(500));
    if (collector->last_error() && !collector->fallback()) {
      spdlog::warn("{}: collector: {}", p.name, collector->last_error()->Describe());
    }
  }

  if (!exec_failure.step.empty()) {
    if (exec_failure.exec_failed) {
      return Fail(exec_failure.err == ENOENT ? kExitNotFound : kExitCannotExecute,
                  "cannot execute " + p.command.exec_path + ": " + std::strerror(exec_failure.err));
    }
    return Fail(kExitSetupFailed, "sandbox set-up failed at '" + exec_failure.step +
                                      "': " + std::strerror(exec_failure.err));
  }
  notice.OnExit(status);
  spdlog::info("{}: exited with status {}", p.name, status);
  return status;
}

}  // namespace gander::launcher
