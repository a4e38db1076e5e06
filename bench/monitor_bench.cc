// monitor_bench: micro-benchmarks for gander's monitor (issue 3, "Benchmarks"), run bare and
// under `gander run` by bench/monitor.sh, which writes bench/results/monitor.md.
//
//   monitor_bench openat  [--file PATH] [--may-fail] [--iters N] [--warmup N] [--cpu C] [--label L]
//       Per-call latency of openat(AT_FDCWD, PATH, O_RDONLY|O_CLOEXEC), a watched syscall under
//       `--files opens`. Only the openat is timed; the close(2) that follows is not.
//       --may-fail: PATH need not exist (a probe outside the sandbox's view, which gander logs).
//       Reports mean, min, p50, p90, p99 of the individual calls.
//   monitor_bench getppid [--batch B] [--batches K] [--cpu C] [--label L]
//       Cost of an allowed, argument-free syscall: the mean of B calls per batch, then the
//       median (and min) over K batches. Per-call timing would drown ~50 ns in timer noise.
//   monitor_bench ioctl   [--batch B] [--batches K] [--cpu C] [--label L]
//       Same for ioctl(pipe, FIONREAD): allowed, but gander's filter has argument rules for
//       ioctl (TIOCSTI/TIOCLINUX), so the kernel cannot cache the verdict and runs the BPF.
//   monitor_bench spin    --iters N [--label L] [--append FILE]
//       A compute-bound loop (no syscalls); prints its own wall and CPU time (and appends that
//       line to FILE: hyperfine discards the programs' output).
//   monitor_bench floor   [--sync 0|1] [--work none|gander|LIST] [--poll 0|1] [--poll-fds N]
//                         [--target-cpu C] [--super-cpu C] [openat options]
//       The kernel's floor for one USER_NOTIF round trip: forks a child that installs a
//       one-rule filter (openat -> USER_NOTIF, everything else ALLOW) and runs the openat
//       loop above, while the parent is a minimal supervisor that answers CONTINUE.
//       --sync 1 sets SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6+) as gander does;
//       --poll 1 waits in poll(2) before each RECV, as gander's supervisor loop does;
//       --work gander adds the syscalls gander makes per notification (process_vm_readv of the
//       path, readlink /proc/PID/root and /proc/PID/root/PATH, NOTIF_ID_VALID) to isolate
//       their cost; LIST is a comma-separated subset of status,vmread,readlink,inview,idvalid
//       to cost them one by one (status: read /proc/PID/status, which gander now does only
//       for /proc/<pid>/... paths).
//       --poll-fds N polls N descriptors (the listener plus N-1 idle pipes) as gander's loop
//       polls its stdio pipes, pidfd and signalfd alongside the listener (7 or 8 entries).
//   monitor_bench floor-exec [--watch none|opens|all] [floor options] -- CMD [ARGS...]
//       The same minimal supervisor around a real program: CMD runs under a filter that
//       notifies the syscalls gander watches at that `--files` level (nothing else: no
//       namespaces, no Landlock, no denials), each answered CONTINUE. What notification alone
//       costs a real program, for comparison with gander.
//   monitor_bench hold CMD [ARGS...]
//       Runs CMD with its stdin on a pipe that stays open (and empty) until CMD exits. gander
//       treats EOF on its stdin as "the client went away" and stops the extension 1 s later
//       (monitor/supervisor.h, term_after_eof_ms), and hyperfine gives commands /dev/null.
//
// Every mode prints one line "RESULT key=value ..." on stdout (times in ns) for the script.
// A benchmark, not a test: it never judges the numbers.
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/fd_passing.h"
#include "common/seccomp_compat.h"
#include "common/split.h"

namespace {

struct Options {
  std::string mode;
  std::string file = "/etc/hostname";
  std::string label;
  std::string append;
  bool may_fail = false;
  long iters = 100000;
  long warmup = 2000;
  long batch = 1000;
  long batches = 2000;
  int cpu = -1;
  // floor
  int sync = 1;
  int poll = 1;
  int poll_fds = 1;
  std::string watch = "opens";
  std::string work = "none";
  int target_cpu = -1;
  int super_cpu = -1;
};

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "monitor_bench: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: monitor_bench openat|getppid|ioctl|spin|floor [options] | floor-exec "
               "[options] -- CMD... | hold CMD...\n"
               "  (see the comment at the top of bench/monitor_bench.cc)\n");
  std::exit(64);
}

inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no syscall, so no filter
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void Pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) Die("sched_setaffinity");
}

int CurrentCpu() { return sched_getcpu(); }

uint64_t Percentile(const std::vector<uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// The median clock_gettime cost, so readers can tell timer overhead from syscall cost.
uint64_t TimerOverhead() {
  std::vector<uint64_t> d(20000);
  for (auto& x : d) {
    uint64_t a = NowNs();
    uint64_t b = NowNs();
    x = b - a;
  }
  std::sort(d.begin(), d.end());
  return Percentile(d, 50);
}

void PrintLatency(const Options& o, const char* mode, std::vector<uint64_t>& d, const char* extra) {
  std::sort(d.begin(), d.end());
  long double sum = 0;
  for (uint64_t x : d) sum += x;
  std::printf("RESULT mode=%s label=%s n=%zu mean=%.0Lf min=%" PRIu64 " p50=%" PRIu64
              " p90=%" PRIu64 " p99=%" PRIu64 " timer=%" PRIu64 " cpu=%d %s\n",
              mode, o.label.empty() ? "-" : o.label.c_str(), d.size(), sum / d.size(), d.front(),
              Percentile(d, 50), Percentile(d, 90), Percentile(d, 99), TimerOverhead(),
              CurrentCpu(), extra);
  std::fflush(stdout);
}

std::vector<uint64_t> OpenatLoop(const Options& o) {
  const char* path = o.file.c_str();
  for (long i = 0; i < o.warmup; ++i) {
    int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && !o.may_fail) Die(path);
    if (fd >= 0) close(fd);
  }
  std::vector<uint64_t> d(static_cast<size_t>(o.iters));
  for (long i = 0; i < o.iters; ++i) {
    uint64_t a = NowNs();
    int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    uint64_t b = NowNs();
    if (fd < 0 && !o.may_fail) Die(path);
    if (fd >= 0) close(fd);
    d[static_cast<size_t>(i)] = b - a;
  }
  return d;
}

template <typename F>
void BatchLoop(const Options& o, const char* mode, F call) {
  for (long i = 0; i < o.batch * 10; ++i) call();
  std::vector<uint64_t> per_call(static_cast<size_t>(o.batches));  // in picoseconds
  for (long b = 0; b < o.batches; ++b) {
    uint64_t a = NowNs();
    for (long i = 0; i < o.batch; ++i) call();
    uint64_t e = NowNs();
    per_call[static_cast<size_t>(b)] = (e - a) * 1000 / static_cast<uint64_t>(o.batch);
  }
  std::sort(per_call.begin(), per_call.end());
  std::printf(
      "RESULT mode=%s label=%s batches=%ld batch=%ld median=%.1f min=%.1f p10=%.1f "
      "p90=%.1f cpu=%d\n",
      mode, o.label.empty() ? "-" : o.label.c_str(), o.batches, o.batch,
      Percentile(per_call, 50) / 1000.0, per_call.front() / 1000.0,
      Percentile(per_call, 10) / 1000.0, Percentile(per_call, 90) / 1000.0, CurrentCpu());
  std::fflush(stdout);
}

// A dependent chain of integer operations the compiler cannot fold: pure CPU, no syscalls.
uint64_t Spin(long iters) {
  uint64_t x = 88172645463325252ull;
  for (long i = 0; i < iters; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

// ---- floor: a minimal supervisor --------------------------------------------------------

// A filter that answers USER_NOTIF for `watched` and ALLOW for everything else.
int InstallNotifyFilter(const std::vector<int>& watched) {
  std::vector<sock_filter> f = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
  for (int nr : watched) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  }
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Die("PR_SET_NO_NEW_PRIVS");
  int fd = static_cast<int>(
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
  if (fd < 0) Die("seccomp(NEW_LISTENER)");
  return fd;
}

void SendListener(int sock, int fd) {
  char byte = 0;
  errno = gander::SendFd(sock, &byte, 1, fd);
  if (errno != 0) Die("send the listener");
}

int ReceiveListener(int sock) {
  char byte;
  int fd = -1;
  errno = gander::ReceiveFd(sock, &byte, 1, &fd);
  if (errno != 0 || fd < 0) Die("receive the listener");
  return fd;
}

// What gander's SeccompMonitor does per openat besides RECV and SEND (monitor/seccomp_notify.cc,
// monitor/path_resolver.cc): read the path up to the page end, readlink the process's root,
// check that the id is still valid.
// The syscalls gander's supervisor makes per watched openat besides poll, RECV and SEND
// (monitor/seccomp_monitor.cc, monitor/seccomp_notify.cc, monitor/path_resolver.cc at the time
// of writing), so the floor can cost them one by one.
struct Work {
  bool status = false;    // open + read + close /proc/PID/status (ProcfsProcesses::View)
  bool vmread = false;    // process_vm_readv of the path, up to the page end (ReadString)
  bool readlink = false;  // readlink /proc/PID/root (ResolvePath -> ProcfsView::root)
  bool inview = false;    // readlink /proc/PID/root/PATH (ReadLinkInView, workspace paths)
  bool idvalid = false;   // SECCOMP_IOCTL_NOTIF_ID_VALID (HandleOne)
};

Work ParseWork(const std::string& spec) {
  Work w;
  if (spec == "none") return w;
  // What gander does per watched openat of a workspace file at the time of writing (the
  // /proc/TID/status read became lazy in 25c16eb: only /proc/<pid>/... paths pay it now).
  if (spec == "gander") return Work{false, true, true, true, true};
  for (gander::SplitView items(spec, ','); auto piece = items.Next();) {
    std::string_view item = *piece;
    if (item == "status")
      w.status = true;
    else if (item == "vmread")
      w.vmread = true;
    else if (item == "readlink")
      w.readlink = true;
    else if (item == "inview")
      w.inview = true;
    else if (item == "idvalid")
      w.idvalid = true;
    else
      Usage();
  }
  return w;
}

void GanderLikeWork(const Work& w, int listener, const seccomp_notif& req,
                    const std::string& path) {
  static char buf[8192];
  char name[PATH_MAX + 64];
  if (w.status) {
    std::snprintf(name, sizeof(name), "/proc/%u/status", req.pid);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      while (read(fd, buf, sizeof(buf)) > 0) {
      }
      close(fd);
    }
  }
  if (w.vmread) {
    uint64_t address = req.data.args[1];
    size_t want = 4096 - (address % 4096);
    iovec local{buf, want};
    iovec remote{reinterpret_cast<void*>(address), want};
    (void)process_vm_readv(static_cast<pid_t>(req.pid), &local, 1, &remote, 1, 0);
  }
  if (w.readlink) {
    std::snprintf(name, sizeof(name), "/proc/%u/root", req.pid);
    (void)readlink(name, buf, sizeof(buf));
  }
  if (w.inview) {
    std::snprintf(name, sizeof(name), "/proc/%u/root%s", req.pid, path.c_str());
    (void)readlink(name, buf, sizeof(buf));
  }
  if (w.idvalid) {
    uint64_t id = req.id;
    (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id);
  }
}

// Forks; the child installs the filter, hands the listener over and runs `target` (which
// returns the child's exit status); the parent supervises until no task uses the filter.
template <typename Target>
int Supervised(const Options& o, const std::vector<int>& watched, Target target) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) Die("socketpair");
  pid_t child = fork();
  if (child < 0) Die("fork");
  if (child == 0) {
    close(sv[0]);
    Pin(o.target_cpu);
    int listener = InstallNotifyFilter(watched);
    SendListener(sv[1], listener);
    close(listener);
    char go;
    if (read(sv[1], &go, 1) != 1) Die("wait for the supervisor");
    close(sv[1]);
    _exit(target());
  }
  close(sv[1]);
  Pin(o.super_cpu);
  int listener = ReceiveListener(sv[0]);
  if (o.sync &&
      ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0) {
    Die("SECCOMP_IOCTL_NOTIF_SET_FLAGS(SYNC_WAKE_UP)");
  }
  const Work work = ParseWork(o.work);
  std::vector<pollfd> fds{{listener, POLLIN, 0}};
  for (int i = 1; i < o.poll_fds; ++i) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) Die("pipe2");
    fds.push_back({p[0], POLLIN, 0});  // never readable: the write end stays open
  }
  if (write(sv[0], "g", 1) != 1) Die("start the target");
  close(sv[0]);
  for (;;) {
    if (o.poll) {
      if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) Die("poll");
      if (fds[0].revents & POLLHUP) break;  // no task uses the filter any more
    }
    seccomp_notif req;
    std::memset(&req, 0, sizeof(req));
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
      if (errno == EINTR) continue;
      if (errno == ENOENT && !o.poll) {
        pollfd p{listener, POLLIN, 0};
        if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP)) break;
        continue;
      }
      if (errno == ENOENT) continue;
      break;
    }
    GanderLikeWork(work, listener, req, o.file);
    seccomp_notif_resp resp;
    std::memset(&resp, 0, sizeof(resp));
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int Floor(const Options& o) {
  return Supervised(o, {__NR_openat}, [&] {
    std::vector<uint64_t> d = OpenatLoop(o);
    char extra[96];
    std::snprintf(extra, sizeof(extra), "sync=%d poll=%d poll_fds=%d work=%s", o.sync, o.poll,
                  o.poll_fds, o.work.c_str());
    PrintLatency(o, "floor", d, extra);
    return 0;
  });
}

// The floor around a real program: gander's `--files opens` set (or `all`: plus the stat
// family) notified and answered CONTINUE by the minimal supervisor.
int FloorExec(const Options& o, char** argv) {
  std::vector<int> watched = {
      __NR_open,     __NR_openat,   __NR_openat2,   __NR_creat,    __NR_execve,    __NR_execveat,
      __NR_truncate, __NR_mkdir,    __NR_mkdirat,   __NR_mknod,    __NR_mknodat,   __NR_rmdir,
      __NR_unlink,   __NR_unlinkat, __NR_rename,    __NR_renameat, __NR_renameat2, __NR_link,
      __NR_linkat,   __NR_symlink,  __NR_symlinkat, __NR_chmod,    __NR_fchmodat,  __NR_chown,
      __NR_lchown,   __NR_fchownat, __NR_utimensat};
  if (o.watch == "none") {
    watched.clear();  // the filter and the process layout without a single notification
  } else if (o.watch == "all") {
    for (int nr : {__NR_stat, __NR_lstat, __NR_newfstatat, __NR_statx, __NR_access, __NR_faccessat,
                   __NR_faccessat2, __NR_readlink, __NR_readlinkat, __NR_statfs}) {
      watched.push_back(nr);
    }
  } else if (o.watch != "opens") {
    Usage();
  }
  return Supervised(o, watched, [&] {
    execvp(argv[0], argv);
    Die(argv[0]);
    return 127;
  });
}

long Number(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);  // accepts 2e9
  if (!end || *end) Usage();
  return static_cast<long>(v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage();
  if (std::string(argv[1]) == "hold") {
    if (argc < 3) Usage();
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) Die("pipe2");
    pid_t child = fork();
    if (child < 0) Die("fork");
    if (child == 0) {
      if (dup2(p[0], 0) != 0) Die("dup2");
      execvp(argv[2], argv + 2);
      Die(argv[2]);
    }
    close(p[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    close(p[1]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  Options o;
  o.mode = argv[1];
  char** command = nullptr;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) Usage();
      return argv[++i];
    };
    if (a == "--file")
      o.file = next();
    else if (a == "--label")
      o.label = next();
    else if (a == "--append")
      o.append = next();
    else if (a == "--may-fail")
      o.may_fail = true;
    else if (a == "--iters")
      o.iters = Number(next());
    else if (a == "--warmup")
      o.warmup = Number(next());
    else if (a == "--batch")
      o.batch = Number(next());
    else if (a == "--batches")
      o.batches = Number(next());
    else if (a == "--cpu")
      o.cpu = static_cast<int>(Number(next()));
    else if (a == "--sync")
      o.sync = static_cast<int>(Number(next()));
    else if (a == "--poll")
      o.poll = static_cast<int>(Number(next()));
    else if (a == "--work")
      o.work = next();
    else if (a == "--poll-fds")
      o.poll_fds = static_cast<int>(Number(next()));
    else if (a == "--watch")
      o.watch = next();
    else if (a == "--") {
      command = argv + i + 1;
      break;
    } else if (a == "--target-cpu")
      o.target_cpu = static_cast<int>(Number(next()));
    else if (a == "--super-cpu")
      o.super_cpu = static_cast<int>(Number(next()));
    else
      Usage();
  }
  if (o.iters <= 0 || o.batch <= 0 || o.batches <= 0 || o.poll_fds < 1) Usage();
  ParseWork(o.work);  // refuse a bad list before forking

  if (o.mode == "floor") return Floor(o);
  if (o.mode == "floor-exec") {
    if (!command || !*command) Usage();
    return FloorExec(o, command);
  }
  Pin(o.cpu);
  if (o.mode == "openat") {
    std::vector<uint64_t> d = OpenatLoop(o);
    PrintLatency(o, "openat", d, "");
  } else if (o.mode == "getppid") {
    BatchLoop(o, "getppid", [] { (void)syscall(SYS_getppid); });
  } else if (o.mode == "ioctl") {
    int p[2];
    if (pipe(p) != 0) Die("pipe");
    BatchLoop(o, "ioctl", [fd = p[0]] {
      int n;
      (void)ioctl(fd, FIONREAD, &n);
    });
  } else if (o.mode == "spin") {
    timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    uint64_t a = NowNs();
    volatile uint64_t sink = Spin(o.iters);
    (void)sink;
    uint64_t wall = NowNs() - a;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    uint64_t cpu = static_cast<uint64_t>(c1.tv_sec - c0.tv_sec) * 1000000000ull +
                   static_cast<uint64_t>(c1.tv_nsec) - static_cast<uint64_t>(c0.tv_nsec);
    char line[192];
    int n =
        std::snprintf(line, sizeof(line),
                      "RESULT mode=spin label=%s iters=%ld wall=%" PRIu64 " cputime=%" PRIu64 "\n",
                      o.label.empty() ? "-" : o.label.c_str(), o.iters, wall, cpu);
    std::fputs(line, stdout);
    if (!o.append.empty()) {
      int fd = open(o.append.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0 || write(fd, line, static_cast<size_t>(n)) != n) Die(o.append.c_str());
      close(fd);
    }
  } else {
    Usage();
  }
  return 0;
}
