// Stage "start" of `gander run`: the native sandbox's spec or the gVisor bundle, from the
// prepared run and the compiled policy; the first start's fallback to no namespaces.
#include "launcher/run/start.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "common/remove_tree.h"
#include "launcher/limits_notice.h"
#include "monitor/supervisor.h"
#include "policies/parser.h"
#include "sandbox/child_setup.h"
#include "sandbox/egress_setup.h"
#include "sandbox/environment.h"
#include "sandbox/filesystem_plan.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp_filter.h"

namespace gander::launcher {

void PrivateDirs::Remove() {
  for (std::string* base : {&base_, &small_base_}) {
    if (base->empty()) continue;
    RemoveTree(*base);
    base->clear();
  }
}

Result<std::string> PrivateDirs::MakeSmall(const std::string& name) {
  struct statfs fs {};
  bool shm = statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
             access("/dev/shm", W_OK | X_OK) == 0;
  return shm ? Make(name, "/dev/shm", small_base_) : Make(name);
}

Result<std::string> PrivateDirs::Make(const std::string& name, const char* parent,
                                      std::string& base) {
  if (base.empty()) {
    std::string pattern = std::string(parent) + "/gander-" + name + "-XXXXXX";
    if (!mkdtemp(pattern.data())) return ErrnoError("mkdtemp " + pattern);
    base = pattern;
  }
  std::string dir = base + "/" + std::to_string(count_++);
  if (mkdir(dir.c_str(), 0700) != 0) return ErrnoError("mkdir " + dir);
  return dir;
}

namespace {

std::vector<std::pair<int, rlim_t>> Rlimits(const policies::Limits& limits) {
  std::vector<std::pair<int, rlim_t>> out;
  if (limits.processes) out.emplace_back(RLIMIT_NPROC, *limits.processes);
  if (limits.open_files) out.emplace_back(RLIMIT_NOFILE, *limits.open_files);
  if (limits.file_size) out.emplace_back(RLIMIT_FSIZE, *limits.file_size);
  if (limits.core_dumps && !*limits.core_dumps) out.emplace_back(RLIMIT_CORE, 0);
  // Per process, beside the run's cgroup (sandbox/cgroup_limit.h), which binds the whole
  // sandbox where one can be had.
  if (limits.memory) out.emplace_back(RLIMIT_DATA, *limits.memory);
  return out;
}

// The mount plan and Landlock rules on this host, with its notes logged and a warning per
// grant left out or made read-only.
sandbox::FilesystemPlan Plan(const Prepared& p, const sandbox::FilesystemInputs& inputs,
                             bool use_namespaces) {
  // Each path probed once per plan (the planner asks again for a parent or a grant it met
  // before: an lstat and a realpath walk each time); nothing writes the host meanwhile.
  std::map<std::string, sandbox::PathInfo> probed;
  auto probe = [&probed](const std::string& path) {
    auto [it, fresh] = probed.try_emplace(path);
    if (fresh) it->second = sandbox::ProbeHostPath(path);
    return it->second;
  };
  sandbox::FilesystemPlan plan =
      sandbox::PlanFilesystem(inputs, use_namespaces, probe, sandbox::ListHostDir);
  for (const auto& note : plan.notes) spdlog::debug("filesystem: {}", note);
  for (const auto& path : plan.refused_links) {
    spdlog::warn(
        "{}: grant {} left out: it goes through a symlink in a directory the "
        "sandbox may write (name the real path in the policy)",
        p.name, path);
  }
  for (const auto& path : plan.protected_writes) {
    spdlog::warn(
        "{}: write grant {} is read-only: shell start-up files, keys, autostart and gander's "
        "own state are never writable from a sandbox",
        p.name, path);
  }
  return plan;
}

// The gVisor backend: the same mount plan (with a mount namespace), environment, rlimits and
// command as the native sandbox, as an OCI bundle run by runsc (sandbox/gvisor/). With seccomp
// notification, network through the egress broker as native: runsc in an empty network
// namespace of gander's with --network=host, the sentry's host connects notified (a filter
// with only the broker's syscalls, `broker`), the DNS stub as the bundle's resolver.
// `root_symlinks` receives the plan's symlinks in the new root, for the strace mapper.
Result<std::unique_ptr<sandbox::gvisor::GvisorRun>> StartGvisorSandbox(
    const Prepared& p, int in, int out, int err, PrivateDirs& dirs,
    const sandbox::SeccompProgram* broker,
    std::vector<std::pair<std::string, std::string>>* root_symlinks) {
  sandbox::FilesystemPlan plan =
      Plan(p, {p.policy, p.command.readable, {}, {}, p.protected_paths, p.read_only_entries}, true);
  *root_symlinks = sandbox::gvisor::RootSymlinks(plan.mounts);
  sandbox::gvisor::BundleSpec spec;
  spec.mounts = std::move(plan.mounts);
  sandbox::gvisor::RunscOptions options;
  if (broker) {
    auto dir = dirs.Make(p.name);
    if (!dir) return dir.error();
    auto mounts = sandbox::EgressMounts(*dir, spec.mounts);
    if (!mounts) return mounts.error();
    spec.mounts.insert(spec.mounts.end(), mounts->begin(), mounts->end());
    spec.host_network = true;
    options.broker_filter = broker->instructions;
  }
  spec.argv = p.argv;
  spec.argv.at(0) = p.command.exec_path;  // OCI has no separate path: argv[0] is the program
  spec.envp = sandbox::BuildEnvironment(p.policy, p.command.path_dirs, {{"HOME", p.home}},
                                        p.environ, p.secrets->Environment(true));
  // Secrets `as: file`: the same read-only /run/secrets as native; runsc's default
  // --file-access-mounts=shared revalidates bind mounts, so a refreshed (renamed-over) file
  // shows its new value inside without a restart.
  if (Status added = p.secrets->AddMount(spec.mounts); !added) return added.error();
  spec.cwd = p.workspace;
  spec.rlimits = Rlimits(p.policy.limits);
  spec.tmpfs_size = policies::TmpfsSize(p.policy.limits);
  spec.tmpfs_inodes = policies::TmpfsInodes(p.policy.limits);
  spec.memory_limit = p.policy.limits.memory.value_or(0);
  // No pids.limit: runsc's cgroup holds the sentry's threads and the ptrace stubs too, and a
  // fork bomb at the limit broke runsc itself (exit 2); gVisor applies RLIMIT_NPROC inside.
  // The allowlist as in the native filter: enforce mode only (learning counts every syscall).
  if (p.mode != RunMode::kLearn) spec.syscalls_allow = p.policy.syscalls_allow;
  options.oci_seccomp = true;  // the floor, always (bundle.cc: SeccompSection)
  if (const char* platform = getenv("GANDER_RUNSC_PLATFORM"); platform && *platform) {
    options.platform = platform;
  }
  if (const char* runsc = getenv("GANDER_RUNSC"); runsc && *runsc) options.runsc = runsc;
  // Learn mode counts every syscall: gVisor traces them all (slow, as the native census is).
  options.strace_syscalls = p.mode == RunMode::kLearn
                                ? std::vector<std::string>{sandbox::gvisor::kStraceAll}
                                : sandbox::gvisor::TracedSyscalls(p.files);
  return sandbox::gvisor::StartGvisor(spec, options, in, out, err, p.name);
}

Result<sandbox::SandboxSpec> BuildSpec(const Prepared& p, bool use_namespaces, PrivateDirs& dirs) {
  sandbox::SandboxSpec spec;
  spec.use_namespaces = use_namespaces;
  spec.cgroups = p.compiled.cgroups;
  spec.cgroup = p.compiled.cgroup_place;
  spec.cgroup_name = p.compiled.cgroup_name;
  sandbox::FilesystemInputs inputs{p.policy,     p.command.readable, {},
                                   spec.cgroups, p.protected_paths,  p.read_only_entries};
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
  sandbox::FilesystemPlan plan = Plan(p, inputs, use_namespaces);
  spdlog::debug("phase: filesystem planned");
  spec.mounts = std::move(plan.mounts);
  // Egress: the broker needs notification. With namespaces the sandbox's resolver is the DNS
  // stub; without, the broker works on host loopback and only Landlock (ABI 4+) keeps the
  // extension's own TCP connect and bind off the host, so inet sockets need both.
  spec.egress =
      sandbox::EgressModeOf(use_namespaces, p.landlock_abi, p.notify) != sandbox::EgressMode::kNone;
  // Without namespaces glibc's resolver asks the host's nameservers over TCP, which the
  // broker hands to the DNS stub (docs/sandbox.md); the policy's env.set may override it.
  if (spec.egress && !use_namespaces) fixed["RES_OPTIONS"] = "use-vc";
  if (spec.egress && use_namespaces) {
    auto dir = dirs.MakeSmall(p.name);
    if (!dir) return dir.error();
    auto mounts = sandbox::EgressMounts(*dir, spec.mounts);
    if (!mounts) return mounts.error();
    spec.mounts.insert(spec.mounts.end(), mounts->begin(), mounts->end());
  }

  if (p.landlock_abi > 0) {
    spec.landlock.abi = p.landlock_abi;
    spec.landlock.handled_fs = sandbox::landlock::HandledFsRights(p.landlock_abi);
    // With a network namespace the sandbox's own loopback must keep working; without one,
    // Landlock is the only TCP backstop: every connect and bind is refused.
    if (!use_namespaces && p.landlock_abi >= 4) {
      spec.landlock.handled_net =
          sandbox::landlock::kNetBindTcp | sandbox::landlock::kNetConnectTcp;
    }
    if (p.landlock_abi >= 6) {
      spec.landlock.scoped =
          sandbox::landlock::kScopeAbstractUnixSocket | sandbox::landlock::kScopeSignal;
    }
    spec.landlock.rules = std::move(plan.rules);
  }
  // Executable memfds: sealed by the pid namespace's sysctl where there is one (Linux 6.3+),
  // else refused by the filter.
  // The sysctl is writable by the host's root only (uid 0 mapped to itself).
  spec.memfd_noexec =
      use_namespaces && geteuid() == 0 && access("/proc/sys/vm/memfd_noexec", F_OK) == 0;
  // Compiled while the init builds the sandbox (SandboxSpec::compile_seccomp).
  sandbox::SeccompOptions seccomp{.deny_host_sockets = !use_namespaces,
                                  // Everywhere, the sysctl notwithstanding: the same answer
                                  // for every user and mode (defence in depth).
                                  .deny_exec_memfd = true,
                                  .notify = p.notify,
                                  .files = p.files,
                                  .census = p.mode == RunMode::kLearn,
                                  .network = spec.egress,
                                  .handoff_fd = sandbox::kChildSyncFd,
                                  .allow = p.policy.syscalls_allow};
  spec.seccomp.notify = seccomp.notify;
  spec.compile_seccomp = [seccomp] {
    auto program = sandbox::CompileSeccompFilter(seccomp);
    spdlog::debug("phase: seccomp compiled, while the sandbox is built");
    return program;
  };
  spec.rlimits = Rlimits(p.policy.limits);
  spec.tmpfs_size = policies::TmpfsSize(p.policy.limits);
  spec.tmpfs_inodes = policies::TmpfsInodes(p.policy.limits);
  spec.cgroup_limits = sandbox::CgroupLimitsOf(p.policy.limits.memory, p.policy.limits.processes);
  if (use_namespaces && p.policy.limits.processes) {
    // pid_max bounds pid numbers (1..pid_max-1); the kernel refuses values below 301.
    spec.pid_max = std::max<uint64_t>(*p.policy.limits.processes + 1, 301);
  }
  spec.cwd = p.workspace;
  spec.exec_path = p.command.exec_path;
  spec.argv = p.argv;
  spec.stop_fd = p.stop_signals.get();
  spec.envp = sandbox::BuildEnvironment(p.policy, p.command.path_dirs, fixed, p.environ,
                                        p.secrets->Environment(use_namespaces));
  if (Status added = p.secrets->AddToSandbox(spec); !added) return added.error();
  return spec;
}

}  // namespace

Result<std::unique_ptr<Extension>> StartExtension(const Prepared& p, bool use_namespaces,
                                                  PrivateDirs& dirs,
                                                  sandbox::StartFailure* failure) {
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
      auto broker = sandbox::CompileSeccompFilter({.notify = true,
                                                   .files = policies::FilesWatch::kOff,
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
  if (x->spec->seccomp.notify) {
    x->spec->while_building = [ext = x.get()] {
      ext->standby = monitor::WatchThread::TryStandby();
    };
  }
  spdlog::debug("phase: sandbox planned");
  auto sandbox = sandbox::StartSandbox(*x->spec, failure);
  if (!sandbox) return sandbox.error();
  x->sandbox = std::move(sandbox).value();
  if (x->sandbox.seccomp) x->spec->seccomp = std::move(*x->sandbox.seccomp);
  return x;
}

std::optional<Stop> StartWithFallback(const RunOptions& o, Prepared& p, PrivateDirs& dirs,
                                      Started& out) {
  const sandbox::IsolationLevel required = o.require.value_or(sandbox::IsolationLevel::kBasic);
  std::string limits_said;  // the start line about limits, said once
  out.use_namespaces = !o.no_namespaces;
  if (!out.use_namespaces && required == sandbox::IsolationLevel::kFull) {
    return Stop{kExitSetupFailed, "--require full refuses --no-namespaces"};
  }
  for (;;) {
    out.level = p.gvisor() ? sandbox::IsolationLevel::kFull
                           : sandbox::LevelOf(out.use_namespaces, p.landlock_abi > 0, true);
    if (out.level < required) {
      return Stop{kExitSetupFailed,
                  std::string("--require ") + sandbox::LevelName(required) + ": this host gives '" +
                      sandbox::LevelName(out.level) + "'" +
                      (p.landlock_abi == 0 ? " (Landlock is not available)" : "") +
                      "; see `gander doctor`"};
    }
    if (std::string refused = CheckLimits(p.name, p.policy.limits, p.compiled.host_cgroup_place,
                                          out.use_namespaces || p.gvisor(), p.gvisor(),
                                          o.require.has_value(), &limits_said);
        !refused.empty()) {
      return Stop{kExitSetupFailed, refused};
    }
    sandbox::StartFailure failure;
    auto started = StartExtension(p, out.use_namespaces, dirs, &failure);
    if (started) {
      out.extension = std::move(started).value();
      return std::nullopt;
    }
    if (!p.gvisor() && out.use_namespaces && failure.reported() &&
        sandbox::NamespacesRefused(*failure.step, failure.err) &&
        required < sandbox::IsolationLevel::kFull) {
      spdlog::warn(
          "{}: user namespaces are not available here ({}); running with Landlock and "
          "seccomp only. `gander doctor` explains; --require full refuses instead.",
          p.name, started.error().Describe());
      out.use_namespaces = false;
      if (auto stop = CompilePolicy(p, false)) return stop;  // the cgroup view differs
      continue;
    }
    if (failure.stopped) return StoppedWhileStarting(StoppedBy());
    return StartFailureStop(failure, started.error(), p.command.exec_path);
  }
}

int StoppedBy() {
  int signal = monitor::PendingTerminationSignal();
  return signal != 0 ? signal : SIGTERM;
}

Stop StoppedWhileStarting(int signal) {
  const char* name = sigabbrev_np(signal);
  return Stop{128 + signal, std::string("told to end (SIG") + (name ? name : "?") +
                                ") while the sandbox was being built: it is gone, nothing started"};
}

Stop StartFailureStop(const sandbox::StartFailure& failure, const Error& error,
                      const std::string& exec_path) {
  if (failure.exec_failed()) {
    return Stop{failure.err == ENOENT ? kExitNotFound : kExitCannotExecute,
                "cannot execute " + exec_path + ": " + std::strerror(failure.err)};
  }
  return Stop{kExitSetupFailed, error.Describe()};
}

}  // namespace gander::launcher
