// The parent's half of starting a sandbox (the child's half is child_setup.cc).
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "common/background_close.h"
#include "common/fd_passing.h"
#include "common/path.h"
#include "sandbox/child_setup.h"
#include "sandbox/init/init_image.h"

namespace gander::sandbox {
namespace {

constexpr unsigned long kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
                                          CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                                          CLONE_NEWCGROUP;

// Maps the caller's uid and gid to themselves, so workspace files keep their owner.
Status WriteIdMaps(pid_t pid, uid_t uid, gid_t gid) {
  std::string proc = "/proc/" + std::to_string(pid);
  if (auto s = WriteFile(proc + "/setgroups", "deny"); !s) return s;
  if (auto s = WriteFile(proc + "/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1");
      !s) {
    return s;
  }
  return WriteFile(proc + "/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1");
}

std::string TmpfsOptions(const std::string& target, const SandboxSpec& spec) {
  std::string options = target == "/tmp" ? "mode=1777" : "mode=0700";
  if (spec.tmpfs_size) options += ",size=" + std::to_string(spec.tmpfs_size);
  if (spec.tmpfs_inodes) options += ",nr_inodes=" + std::to_string(spec.tmpfs_inodes);
  return options;
}

// Fills `plan` in place: its mounts point into its own `strings`, which must not move after.
void PrepareChildPlan(const SandboxSpec& spec, int sync_fd, ChildPlan& plan) {
  plan.spec = &spec;
  plan.sync_fd = sync_fd;
  struct Offsets {
    size_t source, target, options;
  };
  std::vector<Offsets> offsets;
  offsets.reserve(spec.mounts.size());
  auto add = [&plan](const std::string& a, const std::string& b = "") {
    size_t at = plan.strings.size();
    plan.strings.append(a).append(b).push_back('\0');
    return at;
  };
  for (const MountOp& op : spec.mounts) {
    Offsets o{};
    o.source = add(op.kind == MountOp::Kind::kBind ? "/oldroot" : "", op.source);
    o.target = add("/newroot", op.target);
    std::string options;
    if (op.kind == MountOp::Kind::kTmpfs) options = TmpfsOptions(op.target, spec);
    if (op.kind == MountOp::Kind::kCgroup) options = op.options;
    o.options = add(options);
    offsets.push_back(o);
  }
  const char* base = plan.strings.c_str();
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    const MountOp& op = spec.mounts[i];
    plan.mounts.push_back({op.kind, base + offsets[i].source, base + offsets[i].target,
                           base + offsets[i].options, op.writable, op.executable, op.optional});
  }
  for (const auto& arg : spec.argv) plan.argv.push_back(const_cast<char*>(arg.c_str()));
  plan.argv.push_back(nullptr);
  for (const auto& env : spec.envp) plan.envp.push_back(const_cast<char*>(env.c_str()));
  plan.envp.push_back(nullptr);
}

static_assert(kEgressSlotCount <= kMaxPassedFds, "the egress sockets go in one message");

// One report from the child, with the fds it carries (the seccomp listener, the egress
// sockets), if any; `fd` receives the first, `more` the others. False when nothing readable
// came (the init is gone).
bool ReceiveReport(int sync, ChildReport* report, int* fd, std::vector<int>* more = nullptr) {
  unsigned char wire[kChildReportBytes];
  int fds[kEgressSlotCount];
  int count = 0;
  int err = ReceiveFds(sync, wire, sizeof(wire), fds, kEgressSlotCount, &count);
  // An init that exited with the seccomp program still unread (it failed a step before taking
  // it) leaves ECONNRESET on our end, which the kernel returns before the reports the init
  // queued; the next receive gives them (the step that failed, the fallback's input).
  if (err == ECONNRESET) err = ReceiveFds(sync, wire, sizeof(wire), fds, kEgressSlotCount, &count);
  *fd = count > 0 ? fds[0] : -1;
  for (int i = 1; i < count; ++i) {
    if (more) {
      more->push_back(fds[i]);
    } else {
      close(fds[i]);
    }
  }
  auto decoded = err == 0 ? DecodeChildReport(wire, sizeof(wire)) : std::nullopt;
  if (decoded) {
    *report = *decoded;
    return true;
  }
  // No report to go with them: nothing is taken (a listener kept here unserved would hang the
  // extension at its first notification).
  if (*fd >= 0) close(*fd);
  *fd = -1;
  if (more) {
    for (int extra : *more) close(extra);
    more->clear();
  }
  return false;
}

// Waits until the init's next report (or its exit) can be read. False when gander was told to
// end first (`stop_fd`, when there is one, readable): its signal stays pending for the loop.
bool AwaitReadable(int sync, int stop_fd) {
  if (stop_fd < 0) return true;
  pollfd fds[2] = {{sync, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[0].revents) return true;  // a failed poll: the receive decides
    if (fds[1].revents) return false;
  }
}

StartFailure DescribeFailure(const ChildReport& report, const SandboxSpec& spec) {
  StartFailure failure{report.step, report.err, ""};
  if (report.step == ChildStep::kMount && report.detail >= 0 &&
      static_cast<size_t>(report.detail) < spec.mounts.size()) {
    failure.where = spec.mounts[report.detail].target;
  }
  return failure;
}

// The report that ends a start: the listener (the start is confirmed later), the start itself,
// or the failure, into `failure`. True when the sandbox runs.
bool TakeReport(SandboxProcess& process, const ChildReport& report, int fd, const SandboxSpec& spec,
                StartFailure* failure) {
  if (report.step == ChildStep::kListener && fd >= 0) {
    process.listener = UniqueFd(fd);
    // The extension's exit may be notified before the start report is read (a busy host
    // can leave the init unscheduled while the extension runs and exits).
    if (report.detail > 0) process.extension_pid = report.detail;
    return true;
  }
  if (fd >= 0) close(fd);
  if (report.step == ChildStep::kStarted) {
    process.started = true;
    process.extension_pid = report.detail;
    return true;
  }
  *failure = DescribeFailure(report, spec);
  return false;
}

}  // namespace

std::string StartFailure::Describe() const {
  if (!step) return "";
  std::string text = ChildStepName(*step);
  return where.empty() ? text : text + " " + where;
}

Result<SandboxProcess> StartSandbox(const SandboxSpec& spec, StartFailure* failure) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return ErrnoError("socketpair");
  }
  UniqueFd parent_end(pair[0]);
  UniqueFd child_end(pair[1]);
  ChildPlan plan;
  PrepareChildPlan(spec, child_end.get(), plan);
  plan.parent = getpid();
  plan.init_image = InitImageFd();
  // Made before the clone (the child cannot allocate) and left uninitialised: zeroing its
  // 32 KiB touched eight pages on the start's path for the one the child writes.
  std::unique_ptr<sock_filter[]> seccomp_room;
  if (spec.compile_seccomp) {
    seccomp_room.reset(new sock_filter[BPF_MAXINSNS]);
    plan.seccomp_room = seccomp_room.get();
  }
  // The run's cgroup first, so the init can be moved in before it execs anything.
  RunCgroup cgroup;
  if (spec.cgroup.kind != CgroupKind::kNone) {
    auto made = RunCgroup::Create(spec.cgroup, spec.cgroup_limits, spec.cgroup_name);
    if (!made) return Error{made.error().code, "cgroup: " + made.error().message};
    cgroup = std::move(made).value();
  }
  const std::string procs = cgroup.ProcsPath();
  if (!procs.empty() && !spec.use_namespaces) plan.cgroup_procs = procs.c_str();
  plan.unshare_cgroup = spec.use_namespaces && cgroup.active();

  const uid_t uid = getuid();
  const gid_t gid = getgid();
  unsigned long flags = SIGCHLD | (spec.use_namespaces ? kNamespaceFlags : 0);
  if (plan.unshare_cgroup) flags &= ~static_cast<unsigned long>(CLONE_NEWCGROUP);
  // gander may be non-dumpable (it holds secrets: SecretManager::Protect). The child inherits
  // that, and the /proc files of a non-dumpable process belong to root: we could not write
  // its uid map, nor the monitor read the extension's memory before its execve. So the clone
  // is made dumpable, and gander goes back to what it was right after.
  const int was_dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  if (was_dumpable == 0) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  // A fork-like clone (no new stack): the child continues here with a copy of our memory.
  long rc = syscall(SYS_clone, flags, nullptr, nullptr, nullptr, 0);
  if (rc != 0 && was_dumpable == 0) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (rc < 0) {
    if (failure) *failure = {ChildStep::kClone, errno, ""};
    return ErrnoError("clone");
  }
  if (rc == 0) {
    parent_end.Release();  // the child must not close what it did not open
    ChildMain(plan);
  }
  const pid_t pid = static_cast<pid_t>(rc);
  child_end.Reset();

  SandboxProcess process;
  process.pid = pid;
  process.namespaces = spec.use_namespaces;
  process.pidfd = UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  auto abandon = [&](Error error) -> Result<SandboxProcess> {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return error;
  };
  if (!process.pidfd) return abandon(ErrnoError("pidfd_open"));
  // Now, while the init waits for "g" and is still dumpable: a non-root gander could not open
  // it once the init has made itself non-dumpable.
  if (spec.use_namespaces) process.mount_ns = HeldMountNamespace::Of(pid);

  if (spec.use_namespaces) {
    if (auto s = WriteIdMaps(pid, uid, gid); !s) return abandon(std::move(s).error());
  }
  // Into the run's cgroup while the init still waits for "g": nothing of the extension ever
  // runs outside it.
  if (auto s = cgroup.Enter(pid); !s) return abandon(MakeError("cgroup: " + s.error().message));
  process.cgroup = std::move(cgroup);
  if (write(parent_end.get(), "g", 1) != 1) return abandon(ErrnoError("start the sandbox"));
  // The init gone before the program could be sent (EPIPE): a step failed, and its report,
  // read below, decides (the fallback without namespaces among others).
  bool init_gone = false;
  try {
    if (spec.compile_seccomp) {
      auto program = spec.compile_seccomp();
      if (!program) return abandon(std::move(program).error());
      const size_t bytes = program->instructions.size() * sizeof(sock_filter);
      if (program->instructions.empty() || program->instructions.size() > BPF_MAXINSNS) {
        return abandon(MakeError("seccomp: a program of " +
                                 std::to_string(program->instructions.size()) + " instructions"));
      }
      if (send(parent_end.get(), program->instructions.data(), bytes, MSG_NOSIGNAL) !=
          static_cast<ssize_t>(bytes)) {
        // Anything else (EMSGSIZE where net.core.wmem_default is tiny, ENOBUFS) leaves an init
        // that would wait for the program for ever.
        if (errno != EPIPE && errno != ECONNRESET) {
          return abandon(ErrnoError("send the seccomp filter to the sandbox"));
        }
        init_gone = true;
      }
      process.seccomp = std::move(program).value();
    }
    if (spec.while_building) spec.while_building();
  } catch (const std::exception& e) {  // bad_alloc: the init is not left behind unreaped
    return abandon(MakeError(std::string("while the sandbox was built: ") + e.what()));
  }

  process.sync = std::move(parent_end);
  StartFailure local;
  if (!failure) failure = &local;
  ChildReport report{};
  int fd = -1;
  std::vector<int> more;
  if (!AwaitReadable(process.sync.get(), spec.stop_fd)) {
    failure->stopped = true;
    kill(pid, SIGKILL);
    // Reaped if it dies within a second. An init stuck where no signal reaches it (a FUSE
    // request its daemon took and never answers) is left behind: it dies when the wait ends.
    pollfd gone{process.pidfd.get(), POLLIN, 0};
    if (poll(&gone, 1, 1000) == 1) waitpid(pid, nullptr, 0);
    return MakeError("told to end while the sandbox was being built");
  }
  if (!ReceiveReport(process.sync.get(), &report, &fd, &more)) {
    return abandon(MakeError("the sandbox init exited during set-up"));
  }
  // An init that was gone before the program was sent may have reported a step done first
  // (its egress sockets): the failure it reported after that is the start's.
  while (init_gone && report.step == ChildStep::kEgressSockets && report.err == 0) {
    if (fd >= 0) close(fd);
    for (int extra : more) close(extra);
    fd = -1;
    more.clear();
    if (!ReceiveReport(process.sync.get(), &report, &fd, &more)) {
      return abandon(Error{EPIPE, "send the seccomp filter to the sandbox"});
    }
  }
  if (report.step == ChildStep::kEgressSockets && report.err == 0) {
    more.insert(more.begin(), fd);
    size_t next = 0;
    for (int i = 0; i < kEgressSlotCount; ++i) {
      if ((report.detail & (1 << i)) && next < more.size()) {
        process.egress.*kEgressSlots[i] = UniqueFd(more[next++]);
      }
    }
    for (; next < more.size(); ++next) close(more[next]);
    process.listener_pending = true;
    return process;
  }
  for (int extra : more) close(extra);
  if (TakeReport(process, report, fd, spec, failure)) return process;
  waitpid(pid, nullptr, 0);
  return Error{report.err, "sandbox set-up failed at '" + failure->Describe() + "'"};
}

bool AwaitListener(SandboxProcess& process, const SandboxSpec& spec, StartFailure* failure) {
  process.listener_pending = false;
  ChildReport report{};
  int fd = -1;
  if (!AwaitReadable(process.sync.get(), spec.stop_fd)) {
    *failure = {};
    failure->stopped = true;
    return false;
  }
  if (!ReceiveReport(process.sync.get(), &report, &fd)) {
    *failure = {ChildStep::kListener, EPIPE, ""};
    return false;
  }
  return TakeReport(process, report, fd, spec, failure);
}

bool ReadStartReport(SandboxProcess& process, const SandboxSpec& spec, StartFailure* failure) {
  ChildReport report{};
  int fd = -1;
  *failure = {};
  if (!ReceiveReport(process.sync.get(), &report, &fd)) return false;
  if (fd >= 0) close(fd);  // no listener comes now: a report that carries one is a failure
  return TakeReport(process, report, -1, spec, failure);
}

bool ReadExitReport(SandboxProcess& process) {
  ChildReport report{};
  int fd = -1;
  if (!ReceiveReport(process.sync.get(), &report, &fd)) return false;
  if (fd >= 0) close(fd);
  if (report.step != ChildStep::kExited) return true;
  process.reported_exit = report.detail & 0xff;
  return false;
}

InitRemains TakeInitRemains(SandboxProcess& process) {
  return InitRemains{.pidfd = std::move(process.pidfd),
                     .cgroup = std::move(process.cgroup),
                     .mount_ns = std::move(process.mount_ns)};
}

HeldMountNamespace HeldMountNamespace::Of(pid_t pid) {
  HeldMountNamespace held;
  if (ClosesInBackground()) {
    const std::string ns = "/proc/" + std::to_string(pid) + "/ns/mnt";
    held.ns_ = UniqueFd(open(ns.c_str(), O_RDONLY | O_CLOEXEC));
  }
  return held;
}

HeldMountNamespace& HeldMountNamespace::operator=(HeldMountNamespace&& other) noexcept {
  if (this != &other) {
    Release();
    ns_ = std::move(other.ns_);
  }
  return *this;
}

void HeldMountNamespace::Release() { CloseInBackground(std::span<UniqueFd>(&ns_, 1)); }

void InitRemains::AwaitExit() {
  if (pidfd) {
    syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    siginfo_t info{};
    while (waitid(static_cast<idtype_t>(P_PIDFD), pidfd.get(), &info, WEXITED) != 0 &&
           errno == EINTR) {
    }
    pidfd.Reset();
  }
  cgroup.Remove();
  mount_ns.Release();
}

}  // namespace gander::sandbox
