#include "sandbox/gvisor/runsc.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/exec_signals.h"
#include "common/path.h"
#include "common/remove_tree.h"
#include "sandbox/cgroup_limit.h"
#include "sandbox/child_setup.h"
#include "sandbox/sandbox.h"
#include "sandbox/spawn.h"

namespace gander::sandbox::gvisor {
namespace {

constexpr std::string_view kPrefix = "gander-gvisor-";

// mkdir -p inside the root directory (for the parents of a symlink).
void MakeDirs(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    mkdir(path.substr(0, slash).c_str(), 0755);
  }
}

// What the child reports after setting up the broker's namespace: the failed step and its
// errno (child_step.h; kListener with 0 when done), then its fd numbers of the listener and of
// the sockets (-1: none), which the parent takes with pidfd_getfd before acknowledging.
struct NetworkReport {
  unsigned char outcome[kChildReportBytes];
  int32_t listener = -1;
  int32_t sockets[kEgressSlotCount];
};

bool WriteText(const char* path, const char* text, size_t len) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text, len) == static_cast<ssize_t>(len);
  close(fd);
  return ok;
}

// In the forked child, before exec; async-signal-safe. A user namespace (uid and gid 0 mapped
// to the caller's) owning a network namespace with only loopback, the broker's sockets there,
// then the filter; reported on `sync`, whose ack means the parent holds copies.
void SetUpBrokerNetwork(int sync, const std::string& uid_map, const std::string& gid_map,
                        const std::vector<sock_filter>& filter) {
  NetworkReport report;
  for (int& fd : report.sockets) fd = -1;
  network::EgressSockets sockets;
  auto fail = [&](ChildStep step) {
    EncodeChildReport({step, errno, -1}, report.outcome);
    (void)!write(sync, &report, sizeof(report));
    _exit(125);
  };
  // gander is non-dumpable when it holds secrets (SecretManager::Protect), and so is this
  // fork: its /proc/self files would belong to root and the id maps be unwritable by any other
  // user. Dumpable again, as sandbox/sandbox.cc does for the native clone; runsc's exec next.
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) fail(ChildStep::kUnshare);
  if (!WriteText("/proc/self/setgroups", "deny", 4) ||
      !WriteText("/proc/self/uid_map", uid_map.data(), uid_map.size()) ||
      !WriteText("/proc/self/gid_map", gid_map.data(), gid_map.size())) {
    fail(ChildStep::kIdMaps);
  }
  if (int err = BringUpLoopback(); err != 0) {
    errno = err;
    fail(ChildStep::kLoopback);
  }
  if (int err = network::OpenEgressSockets(sockets); err != 0) {
    errno = err;
    fail(ChildStep::kEgressSockets);
  }
  OpenDnsStub(sockets);
  for (int i = 0; i < kEgressSlotCount; ++i) {
    const UniqueFd& fd = sockets.*kEgressSlots[i];
    report.sockets[i] = fd ? fd.get() : -1;
  }
  sock_fprog program{static_cast<unsigned short>(filter.size()),
                     const_cast<sock_filter*>(filter.data())};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(ChildStep::kSeccomp);
  report.listener = static_cast<int32_t>(
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program));
  if (report.listener < 0) fail(ChildStep::kSeccomp);
  EncodeChildReport({ChildStep::kListener, 0, -1}, report.outcome);
  // write and read: neither is among the filtered syscalls.
  if (write(sync, &report, sizeof(report)) != sizeof(report)) _exit(125);
  char ack;
  if (read(sync, &ack, 1) != 1) _exit(125);
  close(report.listener);  // the sockets close with `sockets`
}

}  // namespace

std::vector<std::string> RunscRunArgv(const RunscOptions& options, const std::string& state_dir,
                                      const std::string& bundle_dir,
                                      const std::string& container_id,
                                      const std::string& debug_log) {
  std::vector<std::string> argv{options.runsc, "--rootless",
                                options.broker_filter.empty() ? "--network=none" : "--network=host",
                                "--root=" + state_dir};
  // The sentry's own cgroupfs at /sys/fs/cgroup (kCgroupMountpoint): runtimes read their
  // memory limits there, as in the native sandbox's cgroup namespace.
  argv.push_back("--cgroupfs");
  if (!options.platform.empty()) argv.push_back("--platform=" + options.platform);
  if (!options.strace_syscalls.empty()) {
    std::string list;
    for (const auto& name : options.strace_syscalls) list += (list.empty() ? "" : ",") + name;
    argv.push_back("--strace");
    if (list != kStraceAll) argv.push_back("--strace-syscalls=" + list);
    argv.push_back("--debug-log=" + debug_log);
  }
  if (options.oci_seccomp) argv.push_back("--oci-seccomp");
  argv.insert(argv.end(), {"run", "--bundle=" + bundle_dir, container_id});
  return argv;
}

std::string RunDirBase() { return "/tmp"; }

void RemoveStaleRunDirs(const std::string& base) {
  DIR* dir = opendir(base.c_str());
  if (!dir) return;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (!name.starts_with(kPrefix)) continue;
    pid_t owner = static_cast<pid_t>(atoi(name.c_str() + kPrefix.size()));
    if (owner <= 0 || owner == getpid()) continue;
    struct stat st;
    std::string path = base + "/" + name;
    // Only our own, and only when their gander is gone.
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    if (kill(owner, 0) == 0 || errno != ESRCH) continue;
    RemoveTree(path);
  }
  closedir(dir);
}

Result<std::unique_ptr<GvisorRun>> StartGvisor(const BundleSpec& spec, const RunscOptions& options,
                                               int stdin_fd, int stdout_fd, int stderr_fd,
                                               const std::string& name) {
  const std::string base = RunDirBase();
  RemoveStaleRunDirs(base);
  // runsc's own cgroups of a gander that was SIGKILLed (its runsc never ran `delete`).
  if (geteuid() == 0) SweepStaleCgroups(RunscCgroupParents(HostCgroupMounts()));
  std::unique_ptr<GvisorRun> run(new GvisorRun());
  run->options_ = options;
  std::string pattern = base + "/" + std::string(kPrefix) + std::to_string(getpid()) + "-XXXXXX";
  if (!mkdtemp(pattern.data())) return ErrnoError("mkdtemp " + pattern);
  run->dir_ = pattern;
  run->state_dir_ = run->dir_ + "/state";
  run->container_id_ = "gander-" + std::to_string(getpid()) + "-" + name.substr(0, 32);
  for (char& c : run->container_id_) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  const std::string bundle = run->dir_ + "/bundle";
  BundleSpec with_root = spec;
  with_root.root = bundle + "/rootfs";
  // runsc's gofer runs as the caller and must open a mount's target to mount over it: a file
  // the caller cannot read (/etc/shadow for a user) makes the whole start fail. Such a file
  // needs no mask: the gofer opens every file with the caller's permissions, so the extension
  // cannot read it either.
  std::erase_if(with_root.mounts, [](const MountOp& m) {
    return m.kind == MountOp::Kind::kMaskFile && access(m.target.c_str(), R_OK) != 0;
  });
  for (const std::string& dir : {run->state_dir_, bundle, with_root.root}) {
    if (mkdir(dir.c_str(), 0700) != 0) return ErrnoError("mkdir " + dir);
  }
  chmod(with_root.root.c_str(), 0755);
  for (const auto& [target, text] : RootSymlinks(spec.mounts)) {
    std::string at = with_root.root + target;
    MakeDirs(at);
    if (symlink(text.c_str(), at.c_str()) != 0) return ErrnoError("symlink " + at);
  }
  if (Status written = WriteFile(bundle + "/config.json", OciConfig(with_root)); !written) {
    return written.error();
  }
  std::string debug_log;
  if (!options.strace_syscalls.empty()) {
    // A pipe in the file system: runsc opens it as its debug log, gander reads the strace
    // lines from it as they are written (no file grows on disk).
    debug_log = run->dir_ + "/strace.fifo";
    if (mkfifo(debug_log.c_str(), 0600) != 0) return ErrnoError("mkfifo " + debug_log);
    int fd = open(debug_log.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return ErrnoError("open " + debug_log);
    run->strace_.Reset(fd);
  }
  // Built before fork (sandbox/spawn.h): the child allocates nothing.
  const ExecSpec runsc(
      RunscRunArgv(options, run->state_dir_, bundle, run->container_id_, debug_log));

  const bool broker = !options.broker_filter.empty();
  int pair[2] = {-1, -1};
  if (broker && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return ErrnoError("socketpair");
  }
  UniqueFd parent_end(pair[0]), child_end(pair[1]);
  const std::string uid_map = "0 " + std::to_string(geteuid()) + " 1\n";
  const std::string gid_map = "0 " + std::to_string(getegid()) + " 1\n";

  pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    // runsc dies with gander, and its sandbox and gofer with it (they have PDEATHSIG).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(125);
    setsid();
    if (broker) SetUpBrokerNetwork(child_end.get(), uid_map, gid_map, options.broker_filter);
    dup2(stdin_fd, 0);
    dup2(stdout_fd, 1);
    dup2(stderr_fd, 2);
    ResetSignalsForExec();
    syscall(SYS_close_range, 3, ~0U, 0);
    _exit(runsc.Exec() == ENOENT ? 127 : 126);
  }
  run->pid_ = pid;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return ErrnoError("pidfd_open");
  run->pidfd_.Reset(pidfd);
  if (broker) {
    child_end.Reset();
    if (Status taken = run->TakeBrokerFds(parent_end.get()); !taken) return taken.error();
  }
  return run;
}

Status GvisorRun::TakeBrokerFds(int sync) {
  NetworkReport report;
  ssize_t n;
  do {
    n = read(sync, &report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  if (n != sizeof(report)) return MakeError("runsc's network setup ended without a report");
  auto outcome = DecodeChildReport(report.outcome, sizeof(report.outcome));
  if (!outcome) return MakeError("runsc's network setup sent an unreadable report");
  if (outcome->step != ChildStep::kListener || outcome->err != 0) {
    return Error{outcome->err, "runsc network setup: " + DescribeChildReport(*outcome)};
  }
  auto take = [&](int fd) {
    return UniqueFd(fd < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, pidfd_.get(), fd, 0)));
  };
  listener = take(report.listener);
  if (!listener) return ErrnoError("pidfd_getfd (seccomp listener of runsc)");
  for (int i = 0; i < kEgressSlotCount; ++i) egress.*kEgressSlots[i] = take(report.sockets[i]);
  if (!egress.relay_v4) return ErrnoError("pidfd_getfd (egress relay of runsc)");
  char ack = 1;
  if (write(sync, &ack, 1) != 1) return ErrnoError("runsc network setup ack");
  return {};
}

void GvisorRun::Terminate() {
  const ExecSpec kill(
      {options_.runsc, "--root=" + state_dir_, "kill", "--all", container_id_, "TERM"});
  // With the broker, runsc's control socket is an abstract unix socket in runsc's network
  // namespace: `runsc kill` must run there (and in its user namespace, which owns it).
  UniqueFd user, net;
  if (!options_.broker_filter.empty()) {
    std::string ns = "/proc/" + std::to_string(pid_) + "/ns/";
    user.Reset(open((ns + "user").c_str(), O_RDONLY | O_CLOEXEC));
    net.Reset(open((ns + "net").c_str(), O_RDONLY | O_CLOEXEC));
    if (!user || !net) return;  // runsc is gone already
  }
  pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    if (user && (setns(user.get(), CLONE_NEWUSER) != 0 || setns(net.get(), CLONE_NEWNET) != 0)) {
      _exit(126);
    }
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    ResetSignalsForExec();
    kill.Exec();
    _exit(127);
  }
  helpers_.push_back(pid);
}

void GvisorRun::Reap() {
  for (pid_t helper : helpers_) waitpid(helper, nullptr, 0);
  helpers_.clear();
  if (pidfd_) {
    syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
    siginfo_t info{};
    waitid(static_cast<idtype_t>(P_PIDFD), pidfd_.get(), &info, WEXITED);
  }
}

GvisorRun::~GvisorRun() {
  Reap();
  strace_.Reset();
  if (!dir_.empty()) RemoveTree(dir_);
}

}  // namespace gander::sandbox::gvisor
