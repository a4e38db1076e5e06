// The sandbox init. Order matters and each step says why it sits where it does. Nothing here
// allocates or logs: the parent prepared every string; a failure is one {step, errno} message
// on the sync socket and exit 125.
#include "sandbox/child_setup.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "common/fd_passing.h"
#include "sandbox/fd_table.h"
#include "sandbox/init/init_loop.h"

namespace gander::sandbox {
namespace {

constexpr const char* kStaging = "/tmp";      // any directory: hidden once the base is pivoted
constexpr const char* kNewRoot = "/newroot";  // every target's prefix (PrepareChildPlan)
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom"};

void Send(int fd, ChildStep step, int err, int detail) {
  unsigned char wire[kChildReportBytes];
  EncodeChildReport({step, err, detail}, wire);
  (void)!send(fd, wire, sizeof(wire), MSG_NOSIGNAL);
}

[[noreturn]] void Fail(int fd, ChildStep step, int err, int detail = -1) {
  Send(fd, step, err, detail);
  _exit(125);
}

// mkdir -p for the parents of `path` (and `path` itself when `include_last`). The deepest
// directory is tried first: most targets' parents exist already (made for an earlier mount),
// and one mkdir then does what a walk from / did with a failing mkdir per component.
int MakeDirs(const char* path, bool include_last) {
  char buf[PATH_MAX];
  size_t len = strlen(path);
  if (len >= sizeof(buf)) return ENAMETOOLONG;
  memcpy(buf, path, len + 1);
  size_t deepest = len;
  if (!include_last) {
    while (deepest > 0 && buf[deepest] != '/') --deepest;
  }
  if (deepest > 0) {
    buf[deepest] = '\0';
    if (strcmp(buf, kNewRoot) == 0) return 0;  // made by BuildRoot: no mkdir to learn that
    if (mkdir(buf, 0755) == 0 || errno == EEXIST) return 0;
    if (errno != ENOENT) return errno;
    buf[deepest] = path[deepest];
  } else if (!include_last) {
    return 0;  // the parent is /
  }
  for (size_t i = 1; i <= len; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    if (buf[i] == '\0' && !include_last) break;
    char saved = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return errno;
    buf[i] = saved;
  }
  return 0;
}

// An empty file to mount a file on, in one syscall (no fd to close). Whatever is already at
// `target` is left as it is: mknod never follows a symlink there, and reports EEXIST before
// EROFS for a file inside a read-only bind.
int MakeFileMountPoint(const char* target) {
  return mknod(target, S_IFREG | 0644, 0) == 0 || errno == EEXIST ? 0 : errno;
}

// A mount point for `target`: a directory, or an empty file when the source is a file.
int MakeMountPoint(const char* target, bool directory) {
  if (int err = MakeDirs(target, directory)) return err;
  return directory ? 0 : MakeFileMountPoint(target);
}

// Sets mount attributes with mount_setattr (Linux 5.12+); with `recursive` on every mount
// below too. Only ever adds restrictions, so it also works on mounts locked by the user ns.
int SetMountAttr(const char* path, uint64_t attr_set, bool recursive) {
  struct mount_attr attr {};
  attr.attr_set = attr_set;
  unsigned flags = recursive ? AT_RECURSIVE : 0;
  if (syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &attr, sizeof(attr)) != 0) return errno;
  return 0;
}

int Mount(const char* source, const char* target, const char* type, unsigned long flags,
          const char* data) {
  return mount(source, target, type, flags, data) == 0 ? 0 : errno;
}

int MountDev(const PreparedMount& m) {
  if (int err = MakeDirs(m.target, true)) return err;
  if (int err = Mount("tmpfs", m.target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755")) return err;
  char source[64];
  char target[PATH_MAX];
  for (const char* dev : kDevices) {
    snprintf(source, sizeof(source), "/oldroot/dev/%s", dev);
    snprintf(target, sizeof(target), "%s/%s", m.target, dev);
    if (int err = MakeFileMountPoint(target)) return err;  // in the tmpfs just mounted
    if (int err = Mount(source, target, nullptr, MS_BIND, nullptr)) return err;
  }
  const char* links[][2] = {{"/proc/self/fd", "fd"},
                            {"/proc/self/fd/0", "stdin"},
                            {"/proc/self/fd/1", "stdout"},
                            {"/proc/self/fd/2", "stderr"}};
  for (const auto& link : links) {
    snprintf(target, sizeof(target), "%s/%s", m.target, link[1]);
    if (symlink(link[0], target) != 0) return errno;
  }
  snprintf(target, sizeof(target), "%s/shm", m.target);
  if (mkdir(target, 01777) != 0) return errno;
  if (int err = Mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777"))
    return err;
  return SetMountAttr(m.target, MOUNT_ATTR_RDONLY, false);
}

int DoMount(const PreparedMount& m) {
  const char* target = m.target;
  switch (m.kind) {
    case MountOp::Kind::kBind: {
      struct stat st;
      if (stat(m.source, &st) != 0) return m.optional && errno == ENOENT ? 0 : errno;
      if (int err = MakeMountPoint(target, S_ISDIR(st.st_mode))) return err;
      if (int err = Mount(m.source, target, nullptr, MS_BIND | MS_REC, nullptr)) return err;
      uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
      if (!m.writable) attrs |= MOUNT_ATTR_RDONLY;
      if (!m.executable) attrs |= MOUNT_ATTR_NOEXEC;
      return SetMountAttr(target, attrs, true);
    }
    case MountOp::Kind::kTmpfs:
      if (int err = MakeDirs(target, true)) return err;
      return Mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, m.options);
    case MountOp::Kind::kMaskDir:
      return Mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "mode=000,size=4k");
    case MountOp::Kind::kMaskFile:
      if (int err = Mount("/oldroot/dev/null", target, nullptr, MS_BIND, nullptr)) return err;
      return SetMountAttr(
          target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
          false);
    case MountOp::Kind::kSymlink:
      if (int err = MakeDirs(target, false)) return err;
      return symlink(m.source, target) == 0 || errno == EEXIST ? 0 : errno;
    case MountOp::Kind::kProc:
      if (int err = MakeDirs(target, true)) return err;
      return Mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    case MountOp::Kind::kDev:
      return MountDev(m);
    case MountOp::Kind::kCgroup:
      // Best effort: a kernel or host that refuses the mount leaves the limits unreadable (the
      // runtime's reads are denied and reported), never the sandbox unstarted.
      if (MakeDirs(target, true) == 0) {
        (void)Mount(m.source, target, m.source, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    *m.options ? m.options : nullptr);
      }
      return 0;
  }
  return EINVAL;
}

// Caps the number of pids in the new pid namespace (per-namespace pid_max, Linux 6.14+).
// Unlike RLIMIT_NPROC it also binds when the caller is root. Best effort: older kernels
// refuse, and RLIMIT_NPROC remains.
void SetPidMax(uint64_t pid_max) {
  if (pid_max == 0) return;
  int fd = open("/newroot/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[32];
  int len = snprintf(buf, sizeof(buf), "%llu", static_cast<unsigned long long>(pid_max));
  (void)!write(fd, buf, static_cast<size_t>(len));
  close(fd);
}

// vm.memfd_noexec=2 in the new pid namespace (Linux 6.3+): every memfd made inside is sealed
// non-executable (MFD_EXEC is refused), so memfd_create + execveat(AT_EMPTY_PATH) cannot run
// a binary no grant names. The parent asked for it only where the kernel has the sysctl, so a
// failure here is a failure of the start (the filter has no memfd rule then).
int SetMemfdNoexec() {
  int fd = open("/newroot/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = write(fd, "2", 1) == 1 ? 0 : errno;
  close(fd);
  return err;
}

// The sandbox's /proc is its pid namespace's, but /proc/sys, /proc/sysrq-trigger, /proc/irq and
// /proc/bus act on the host kernel: as root with namespaces (uid 0 inside is host uid 0) they
// would be writable wherever Landlock is missing. Bound read-only over themselves, as bwrap and
// runc do, after gander's own sysctl writes (pid_max, memfd_noexec). A path the kernel lacks
// is skipped.
int MakeProcSysReadOnly() {
  for (const char* path : {"/newroot/proc/sys", "/newroot/proc/sysrq-trigger", "/newroot/proc/irq",
                           "/newroot/proc/bus"}) {
    if (access(path, F_OK) != 0) continue;
    if (int err = Mount(path, path, nullptr, MS_BIND | MS_REC, nullptr)) return err;
    if (int err = SetMountAttr(
            path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
            true)) {
      return err;
    }
  }
  return 0;
}

// The sockets the supervisor serves inside the sandbox's network namespace, made here because
// only a process inside it can: the egress relay, park and refuse sockets (127.0.0.1 and ::1,
// any port; network::OpenEgressSockets) and the DNS stub (127.0.0.1:53, which needs the
// namespace's CAP_NET_BIND_SERVICE: before the capabilities are dropped). Sent to the parent
// in one report; the init keeps none of them. detail: a bit per socket in the order of
// EgressSlots (sandbox.h); fds in that order.
void SendEgressSockets(int sync) {
  network::EgressSockets sockets;
  if (int err = network::OpenEgressSockets(sockets); err != 0) {
    Fail(sync, ChildStep::kEgressSockets, err);
  }
  OpenDnsStub(sockets);
  int fds[kEgressSlotCount];
  int count = 0;
  int mask = 0;
  for (int i = 0; i < kEgressSlotCount; ++i) {
    const UniqueFd& fd = sockets.*kEgressSlots[i];
    if (!fd) continue;
    fds[count++] = fd.get();
    mask |= 1 << i;
  }
  unsigned char wire[kChildReportBytes];
  EncodeChildReport({ChildStep::kEgressSockets, 0, mask}, wire);
  if (int err = SendFds(sync, wire, sizeof(wire), fds, count)) {
    Fail(sync, ChildStep::kEgressSockets, err);
  }
}

// Empties every capability set, and locks securebits so that uid 0 (gander run by root) gets
// no capabilities back at execve.
int DropCapabilities() {
  bool have_setpcap = prctl(PR_CAPBSET_READ, CAP_SETPCAP) == 1 && geteuid() == 0;
  if (have_setpcap) {
    // Capabilities are numbered densely: the first EINVAL is past the kernel's last one.
    for (int cap = 0; cap <= 63; ++cap) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
      if (errno == EINVAL) break;
      return errno;
    }
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) !=
        0) {
      return errno;
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return errno;
  struct __user_cap_header_struct header {
    _LINUX_CAPABILITY_VERSION_3, 0
  };
  struct __user_cap_data_struct data[2]{};
  if (syscall(SYS_capset, &header, data) != 0) return errno;
  return 0;
}

// Builds the new root: a staging tmpfs holding newroot/ and oldroot/, pivot into it so the
// host root stays reachable at /oldroot while binds are made, then pivot into newroot and
// drop the host root entirely.
void BuildRoot(const ChildPlan& plan) {
  const int sync = kChildSyncFd;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    Fail(sync, ChildStep::kMountPrivate, errno);
  if (mount("tmpfs", kStaging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    Fail(sync, ChildStep::kMountBase, errno);
  if (chdir(kStaging) != 0 || mkdir("newroot", 0755) != 0 || mkdir("oldroot", 0755) != 0 ||
      mount("tmpfs", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    Fail(sync, ChildStep::kMountBase, errno);
  if (syscall(SYS_pivot_root, ".", "oldroot") != 0 || chdir("/") != 0)
    Fail(sync, ChildStep::kPivotBase, errno);

  for (size_t i = 0; i < plan.mounts.size(); ++i) {
    if (int err = DoMount(plan.mounts[i])) Fail(sync, ChildStep::kMount, err, static_cast<int>(i));
  }
  SetPidMax(plan.spec->pid_max);
  if (plan.spec->memfd_noexec) {
    if (int err = SetMemfdNoexec()) Fail(sync, ChildStep::kMemfdNoexec, err);
  }
  if (int err = MakeProcSysReadOnly()) Fail(sync, ChildStep::kProcReadOnly, err);

  // pivot_root(".", ".") stacks the staging root on top of newroot; detaching it leaves
  // newroot as the only root (see pivot_root(2)). The detach takes the whole staging tree
  // with it, the host root under /oldroot included: one lazy unmount, not one for the host
  // root and another for the staging root, as each waits for an expedited RCU grace period
  // (namespace_unlock) on the init's path: ~50 us on an idle host, up to ms under load.
  if (chdir("/newroot") != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
      umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
    Fail(sync, ChildStep::kPivotRoot, errno);
  if (int err = SetMountAttr("/", MOUNT_ATTR_RDONLY, false))
    Fail(sync, ChildStep::kRootReadOnly, err);
}

// Sends the seccomp listener to the parent over the sync socket (SCM_RIGHTS), with the
// extension's pid (as the init sees it): known to the supervisor before any notification of
// the extension, so that the extension's own exit is told apart even when it comes before the
// init's start report (`self`: taken before the filter, under which even getpid may wait for
// the supervisor, which has no listener yet). No ack is awaited: both fds are close-on-exec,
// and a notification raised by the execve that follows simply waits until the supervisor
// polls the listener.
int SendListener(int sync, int listener, pid_t self) {
  unsigned char wire[kChildReportBytes];
  EncodeChildReport({ChildStep::kListener, 0, static_cast<int>(self)}, wire);
  return SendFd(sync, wire, sizeof(wire), listener);
}

// The extension's seccomp program: the spec's, or the one the parent compiled after the clone
// (SandboxSpec::compile_seccomp), sent as one message on the sync socket after "g". Anything
// but whole instructions that fit is a failure: the extension never runs without its filter.
int SeccompProgramOf(const ChildPlan& plan, int sync, sock_fprog* program) {
  const SandboxSpec& spec = *plan.spec;
  if (!plan.seccomp_room) {
    program->len = static_cast<unsigned short>(spec.seccomp.instructions.size());
    program->filter = const_cast<sock_filter*>(spec.seccomp.instructions.data());
    return 0;
  }
  const size_t room = BPF_MAXINSNS * sizeof(sock_filter);
  ssize_t n = recv(sync, plan.seccomp_room, room, MSG_TRUNC);
  if (n < 0) return errno;
  if (n == 0 || static_cast<size_t>(n) > room || n % sizeof(sock_filter) != 0) return EPROTO;
  program->len = static_cast<unsigned short>(static_cast<size_t>(n) / sizeof(sock_filter));
  program->filter = plan.seccomp_room;
  return 0;
}

// Landlock and seccomp, the extension's last steps before execve: applied in the extension
// process rather than the init so that the init keeps /proc for cleanup, and so that seccomp
// comes last (bubblewrap's order). With notification the listener goes to the parent.
int RestrictSelf(const SandboxSpec& spec, const sock_fprog& program, int sync, ChildStep* step) {
  const pid_t self = getpid();
  *step = ChildStep::kNoNewPrivs;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (spec.landlock.abi > 0) {
    *step = ChildStep::kLandlock;
    const char* failed = nullptr;
    if (int err = landlock::ChildApply(spec.landlock, &failed)) return err;
  }
  if (program.len > 0) {
    *step = ChildStep::kSeccomp;
    sock_fprog prog = program;
    unsigned flags = spec.seccomp.notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
    long listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (listener < 0) return errno;
    if (spec.seccomp.notify) {
      *step = ChildStep::kListener;
      if (int err = SendListener(sync, static_cast<int>(listener), self)) return err;
    }
  }
  return 0;
}

[[noreturn]] void ExecExtension(const ChildPlan& plan, const sock_fprog& program, int error_fd,
                                const sigset_t& mask) {
  const int sync = kChildSyncFd;
  const SandboxSpec& spec = *plan.spec;
  if (!spec.use_namespaces) setpgid(0, 0);  // its own group: the init signals the group
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
  PresizeFdTable();  // while single-threaded: no RCU waits when its threads open many files

  ChildStep step = ChildStep::kExec;
  int err = RestrictSelf(spec, program, sync, &step);
  if (err == 0) {
    execve(spec.exec_path.c_str(), plan.argv.data(), plan.envp.data());
    err = errno;
    step = ChildStep::kExec;
  }
  unsigned char wire[kChildReportBytes];
  EncodeChildReport({step, err, 0}, wire);
  (void)!write(error_fd, wire, sizeof(wire));
  _exit(127);
}

void Noop(int) {}

// What the init gets when gander dies. With a pid namespace that is SIGKILL: the namespace
// takes every process with it. Without one the init must first kill the tree itself, so it
// gets a signal it can act on.
const int kParentDeathSignal = SIGRTMIN + 1;

// The init's life after the extension started (init::RunInit): in gander-init when the parent
// made its image (execveat of the memfd at kChildInitImageFd), so that the init stops being a
// copy of gander; in this image otherwise, or when the kernel refuses the execve.
static_assert(init::kExitReportStep == static_cast<int>(ChildStep::kExited));
static_assert(kChildSyncFd >= 0 && kChildSyncFd <= 9);  // one digit in gander-init's argv

[[noreturn]] void RunInit(const ChildPlan& plan, pid_t extension) {
  const SandboxSpec& spec = *plan.spec;
  init::InitArgs args;
  args.extension = extension;
  args.namespaces = spec.use_namespaces;
  args.death_signal = kParentDeathSignal;
  args.cgroup_procs = plan.cgroup_procs;
  args.report_fd = kChildSyncFd;
  if (plan.init_image >= 0) {
    char pid[16];
    char sig[16];
    snprintf(pid, sizeof(pid), "%d", static_cast<int>(extension));
    snprintf(sig, sizeof(sig), "%d", kParentDeathSignal);
    char name[] = "gander-init";
    char ns[] = {spec.use_namespaces ? '1' : '0', '\0'};
    char none[] = "-";
    char report[] = {static_cast<char>('0' + kChildSyncFd), '\0'};
    char dashes[] = "--";
    // After "--", the extension's command (as many words as fit), for ps: what the init is for.
    char* argv[64] = {
        name,   pid,   ns, sig, plan.cgroup_procs ? const_cast<char*>(plan.cgroup_procs) : none,
        report, dashes};
    size_t argc = 7;
    for (size_t i = 0; plan.argv[i] && argc + 1 < std::size(argv); ++i) argv[argc++] = plan.argv[i];
    argv[argc] = nullptr;
    char* envp[] = {nullptr};
    fcntl(kChildSyncFd, F_SETFD, 0);  // for gander-init's exit report; the extension ran long ago
    syscall(SYS_execveat, kChildInitImageFd, "", argv, envp, AT_EMPTY_PATH);
    fcntl(kChildSyncFd, F_SETFD, FD_CLOEXEC);
  }
  init::RunInit(args);
}

}  // namespace

void ChildMain(const ChildPlan& plan) {
  const SandboxSpec& spec = *plan.spec;

  // Signals first: the init only takes them through sigwaitinfo. A handler is installed
  // because a pid namespace's init drops signals from outside that have none.
  // The extension gets none blocked, whatever gander blocks: a restart behind the relay starts
  // a sandbox from inside the supervisor loop, which blocks SIGTERM, SIGINT and SIGHUP for its
  // signalfd.
  sigset_t all, original;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  sigemptyset(&original);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD}) {
    signal(sig, Noop);
  }
  // Die with gander even if it is SIGKILLed; checked against the handshake below.
  prctl(PR_SET_PDEATHSIG, spec.use_namespaces ? SIGKILL : kParentDeathSignal, 0, 0, 0);

  // The extension's stdio become the init's 0/1/2 and the sync socket fd 3; every other
  // inherited fd (gander's own ends of the relay pipes among them) is closed so that EOF
  // reaches the extension. The relay pipes and the socket were made after 0-2, so each
  // source is >= 3 and no dup2 overwrites a source still needed.
  // The socket stays close-on-exec: the extension must never be able to write reports.
  if (dup2(spec.stdin_fd, 0) < 0 || dup2(spec.stdout_fd, 1) < 0 || dup2(spec.stderr_fd, 2) < 0 ||
      (plan.sync_fd == kChildSyncFd ? fcntl(kChildSyncFd, F_SETFD, FD_CLOEXEC)
                                    : dup3(plan.sync_fd, kChildSyncFd, O_CLOEXEC)) < 0) {
    Fail(plan.sync_fd, ChildStep::kWaitParent, errno);
  }
  // gander-init's image (>= 10, so none of the dup2s above clobbered it), close-on-exec.
  int first_closed = kChildSyncFd + 1;
  if (plan.init_image >= 0) {
    if (dup3(plan.init_image, kChildInitImageFd, O_CLOEXEC) < 0)
      Fail(kChildSyncFd, ChildStep::kWaitParent, errno);
    first_closed = kChildInitImageFd + 1;
  }
  syscall(SYS_close_range, first_closed, ~0U, 0);
  const int sync = kChildSyncFd;

  // Wait until the parent wrote our uid/gid maps: before that we have no identity in the
  // new user namespace and mounts would fail. EOF means the parent died.
  char go = 0;
  if (read(sync, &go, 1) != 1) _exit(125);
  // gander keeps its end open for the whole run: a hang-up now means it died before
  // PDEATHSIG was armed (its "g" was already buffered), and no signal will ever come.
  struct pollfd peer {
    sync, POLLRDHUP, 0
  };
  if (poll(&peer, 1, 0) > 0 && (peer.revents & (POLLHUP | POLLRDHUP))) _exit(125);

  // A new session: no controlling terminal, so no TIOCSTI into the user's shell.
  if (setsid() < 0) Fail(sync, ChildStep::kSetsid, errno);
  // The parent has moved us into the run's cgroup: the namespace is rooted there.
  if (plan.unshare_cgroup && unshare(CLONE_NEWCGROUP) != 0) {
    Fail(sync, ChildStep::kCgroupNamespace, errno);
  }

  if (spec.use_namespaces) {
    BuildRoot(plan);
    if (sethostname(spec.hostname.data(), spec.hostname.size()) != 0)
      Fail(sync, ChildStep::kHostname, errno);
    if (int err = BringUpLoopback()) Fail(sync, ChildStep::kLoopback, err);
    if (spec.egress) SendEgressSockets(sync);
  } else {
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  }
  if (chdir(spec.cwd.c_str()) != 0) Fail(sync, ChildStep::kChdir, errno);

  for (size_t i = 0; i < spec.rlimits.size(); ++i) {
    struct rlimit limit {
      spec.rlimits[i].second, spec.rlimits[i].second
    };
    if (setrlimit(spec.rlimits[i].first, &limit) != 0)
      Fail(sync, ChildStep::kRlimit, errno, static_cast<int>(i));
  }
  // Capabilities last among the privileged steps: mounts, hostname and lo needed them.
  if (int err = DropCapabilities()) Fail(sync, ChildStep::kCapabilities, err);

  sock_fprog program{};
  if (int err = SeccompProgramOf(plan, sync, &program)) Fail(sync, ChildStep::kSeccomp, err);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) Fail(sync, ChildStep::kFork, errno);
  // vfork: the extension shares the init's memory until its execve, so no page tables are
  // copied; the init is suspended meanwhile, which it can afford (it has nothing else to do).
  // The child only makes syscalls and writes its own stack frames before execve or _exit.
  pid_t extension = vfork();
  if (extension < 0) Fail(sync, ChildStep::kFork, errno);
  if (extension == 0) {
    close(error_pipe[0]);  // the sync socket stays: the seccomp listener travels over it
    ExecExtension(plan, program, error_pipe[1], original);
  }
  close(error_pipe[1]);
  // The init keeps none of the extension's stdio: its output ends (EOF to gander) with the
  // extension's tree, not with the init's exit (the exit report comes first).
  close(0);
  close(1);
  close(2);
  unsigned char wire[kChildReportBytes];
  ssize_t n = read(error_pipe[0], wire, sizeof(wire));
  close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(wire))) {  // EOF at the execve is the success
    auto report = DecodeChildReport(wire, sizeof(wire));
    waitpid(extension, nullptr, 0);
    Fail(sync, report ? report->step : ChildStep::kExec, report ? report->err : EIO);
  }
  Send(sync, ChildStep::kStarted, 0, extension);  // `sync` stays for the exit report
  // The init is a copy of gander (Goose's environment, the secrets' values): once the uid map
  // is written and the extension has exec'd, nothing needs its /proc files, so no other
  // process of the user may read its memory or make it dump core.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  RunInit(plan, extension);
}

}  // namespace gander::sandbox
