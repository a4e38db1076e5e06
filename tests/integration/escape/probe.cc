// gander_probe: one escape attempt per subcommand, for the escape suite.
//
// Exit status: 0 = the attempt SUCCEEDED (an escape, when run inside a sandbox), 1 = it failed,
// 2 = usage error. Every attempt prints one line per try to stderr ("probe: <what>: ok" or
// "probe: <what>: <errno text>"); nothing is ever written to stdout, so a test can also check
// that gander itself keeps stdout clean. No dependencies beyond libc; raw syscalls where glibc
// has no wrapper, so the probe does not depend on the headers' vintage.
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace gander::probe {
namespace {

// --- files -------------------------------------------------------------------------------

int DoRead(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (!Check(Fmt("open %s for reading", path).c_str(), fd)) return kFailed;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (!Check(Fmt("read %s", path).c_str(), n)) return kFailed;
  fprintf(stderr, "probe: read %zd bytes from %s\n", n, path);
  return kSucceeded;
}

int DoList(const char* path) {
  DIR* dir = opendir(path);
  if (!Check(Fmt("opendir %s", path).c_str(), dir ? 0 : -1)) return kFailed;
  int entries = 0;
  while (readdir(dir) != nullptr) ++entries;
  closedir(dir);
  fprintf(stderr, "probe: %s has %d entries\n", path, entries);
  return kSucceeded;
}

int DoWrite(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (!Check(Fmt("open %s for writing", path).c_str(), fd)) return kFailed;
  static const char kLine[] = "written by gander_probe\n";
  ssize_t n = write(fd, kLine, sizeof kLine - 1);
  int close_rc = close(fd);
  if (!Check(Fmt("write %s", path).c_str(), n)) return kFailed;
  return Result(Check(Fmt("close %s", path).c_str(), close_rc));
}

int DoExec(char** argv) {
  pid_t pid = fork();
  if (pid < 0) return Result(Check("fork", -1));
  if (pid == 0) {
    execv(argv[0], argv);
    fprintf(stderr, "probe: execv %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  fprintf(stderr, "probe: exec %s: %s (wait status 0x%x)\n", argv[0], ok ? "ok" : "failed", status);
  return Result(ok);
}

// Reports every open fd above 2: inherited descriptors are a way out of any mount view. Probes
// with fcntl rather than listing /proc/self/fd, which a sandbox may hide.
int DoFds() {
  bool found = false;
  for (int fd = 3; fd < 65536; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) continue;
    char target[512] = {};
    ssize_t n = readlink(Fmt("/proc/self/fd/%d", fd).c_str(), target, sizeof target - 1);
    if (n < 0) snprintf(target, sizeof target, "? (readlink: %s)", strerror(errno));
    fprintf(stderr, "probe: inherited fd %d -> %s\n", fd, target);
    found = true;
  }
  if (!found) fprintf(stderr, "probe: no fd above 2 is open\n");
  return Result(found);
}

// --- environment -------------------------------------------------------------------------

// Is NAME in our environment, or NAME= / VALUE in any /proc/PID/environ we can read?
int DoEnv(const char* name, const char* value) {
  bool found = false;
  if (const char* v = getenv(name)) {
    fprintf(stderr, "probe: %s is in our environment (%zu chars)\n", name, strlen(v));
    found = true;
  } else {
    fprintf(stderr, "probe: %s is not in our environment\n", name);
  }
  std::string prefix = std::string(name) + "=";
  DIR* proc = opendir("/proc");
  if (!proc) {
    Check("opendir /proc", -1);
    return Result(found);
  }
  int readable = 0;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = open(Fmt("/proc/%s/environ", e->d_name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::string env;
    char buf[8192];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) env.append(buf, static_cast<size_t>(n));
    close(fd);
    ++readable;
    for (size_t pos = 0; pos < env.size();) {
      size_t end = env.find('\0', pos);
      if (end == std::string::npos) end = env.size();
      std::string entry = env.substr(pos, end - pos);
      bool name_hit = entry.compare(0, prefix.size(), prefix) == 0;
      bool value_hit = value && *value && entry.find(value) != std::string::npos;
      if (name_hit || value_hit) {
        fprintf(stderr, "probe: found %s in /proc/%s/environ\n", name_hit ? name : "the value",
                e->d_name);
        found = true;
      }
      pos = end + 1;
    }
  }
  closedir(proc);
  fprintf(stderr, "probe: scanned %d readable /proc/*/environ\n", readable);
  return Result(found);
}

// --- processes ---------------------------------------------------------------------------

int DoKill(const char* pid, const char* sig) {
  int signo = sig ? atoi(sig) : 0;
  return Result(Check(Fmt("kill(%s, %d)", pid, signo).c_str(), kill(atoi(pid), signo)));
}

int DoUserns() {
  bool any = false;
  any |= InChild("unshare(CLONE_NEWUSER)",
                 [] { return Check("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER)); });
  {
    long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) _exit(0);
    int status = 0;
    if (pid > 0) waitpid(static_cast<pid_t>(pid), &status, 0);
    any |= Check("clone(CLONE_NEWUSER)", pid);
  }
  {
    CloneArgs args{};
    args.flags = CLONE_NEWUSER;
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) _exit(0);
    int status = 0;
    if (pid > 0) waitpid(static_cast<pid_t>(pid), &status, 0);
    any |= Check("clone3(CLONE_NEWUSER)", pid);
  }
  return Result(any);
}

// Joins the namespaces named by the given /proc/PID/ns/* paths, in order.
int DoSetns(int argc, char** argv) {
  bool all = argc > 0;
  for (int i = 0; i < argc; ++i) {
    int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
    if (!Check(Fmt("open %s", argv[i]).c_str(), fd)) return kFailed;
    all &= Check(Fmt("setns %s", argv[i]).c_str(), setns(fd, 0));
    close(fd);
    if (!all) break;
  }
  return Result(all);
}

int DoPtrace() {
  bool any = false;
  pid_t parent = getppid();
  // PTRACE_SEIZE does not stop the parent; the tracer's exit detaches it again.
  any |= InChild("ptrace(PTRACE_SEIZE, parent)", [parent] {
    return Check(Fmt("ptrace(PTRACE_SEIZE, %d) (our parent)", parent).c_str(),
                 ptrace(PTRACE_SEIZE, parent, nullptr, nullptr));
  });
  pid_t self = getpid();
  any |= InChild("ptrace(PTRACE_ATTACH, probe)", [self] {
    bool ok = Check(Fmt("ptrace(PTRACE_ATTACH, %d) (the probe, from its child)", self).c_str(),
                    ptrace(PTRACE_ATTACH, self, nullptr, nullptr));
    if (ok) {
      int status;
      waitpid(self, &status, __WALL);
      ptrace(PTRACE_DETACH, self, nullptr, nullptr);
    }
    return ok;
  });
  any |= InChild("ptrace(PTRACE_TRACEME)", [] {
    return Check("ptrace(PTRACE_TRACEME)", ptrace(PTRACE_TRACEME, 0, nullptr, nullptr));
  });
  return Result(any);
}

int DoProcessVm() {
  static volatile char secret[16] = "child-secret";
  pid_t pid = fork();
  if (pid < 0) return Result(Check("fork", -1));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;) pause();
  }
  char buf[16] = {};
  iovec local{buf, sizeof buf};
  iovec remote{const_cast<char*>(secret), sizeof secret};
  ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  bool ok = Check(Fmt("process_vm_readv(%d)", pid).c_str(), n);
  ssize_t w = process_vm_writev(pid, &local, 1, &remote, 1, 0);
  ok |= Check(Fmt("process_vm_writev(%d)", pid).c_str(), w);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return Result(ok);
}

// Tries to keep N children alive at once; succeeds when all N exist.
int DoForkbomb(const char* count) {
  long want = atol(count);
  std::vector<pid_t> kids;
  kids.reserve(static_cast<size_t>(want));
  int err = 0;
  while (static_cast<long>(kids.size()) < want) {
    pid_t pid = fork();
    if (pid < 0) {
      err = errno;
      break;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (;;) pause();
    }
    kids.push_back(pid);
  }
  long reached = static_cast<long>(kids.size());
  for (pid_t pid : kids) kill(pid, SIGKILL);
  for (pid_t pid : kids) waitpid(pid, nullptr, 0);
  if (reached < want) {
    fprintf(stderr, "probe: forkbomb stopped at %ld of %ld children: %s\n", reached, want,
            strerror(err));
    return kFailed;
  }
  fprintf(stderr, "probe: forkbomb reached %ld children\n", reached);
  return kSucceeded;
}

// --- helpers for the audit-log tests ------------------------------------------------------

// stat(2) without opening: what `monitor.files: all` adds to the audit log.
int DoStat(const char* path) {
  struct stat st {};
  return Result(Check(Fmt("stat %s", path).c_str(), stat(path, &st)));
}

// Opens DIR, then REL relative to it (openat with a real dirfd, not AT_FDCWD).
int DoOpenat(const char* dir, const char* rel) {
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (!Check(Fmt("open %s", dir).c_str(), dirfd)) return kFailed;
  int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
  bool ok = Check(Fmt("openat(%s, %s)", dir, rel).c_str(), fd);
  if (ok) close(fd);
  close(dirfd);
  return Result(ok);
}

// Reads FILE through a magic link of our own: "/proc/self/cwd/REL" style paths built at run
// time, for the forms that need our pid or an fd number.
//   ownpid-root FILE     /proc/<getpid()>/root/FILE
//   fd-dotdot DIR REL    /proc/self/fd/<fd of DIR>/REL
int DoMagic(const char* form, const char* a, const char* b) {
  std::string path;
  int dirfd = -1;
  if (strcmp(form, "ownpid-root") == 0) {
    path = Fmt("/proc/%d/root%s", getpid(), a);
  } else if (strcmp(form, "fd-dotdot") == 0 && b) {
    dirfd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!Check(Fmt("open %s", a).c_str(), dirfd)) return kFailed;
    path = Fmt("/proc/self/fd/%d/%s", dirfd, b);
  } else {
    return kUsage;
  }
  fprintf(stderr, "probe: magic path %s\n", path.c_str());
  int rc = DoRead(path.c_str());
  if (dirfd >= 0) close(dirfd);
  return rc;
}

// Opens FILE from a second thread: the audit log must still name the process.
int DoThreadRead(const char* path) {
  int rc = kFailed;
  std::thread t([&] { rc = DoRead(path); });
  t.join();
  return rc;
}

// Makes one refused syscall and one refused open, says so, then waits (for SIGTERM/SIGKILL):
// the audit log must show both while the extension still runs.
int DoDenyAndWait(const char* path) {
  Check("keyctl(KEYCTL_GET_KEYRING_ID, user keyring)",
        syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  Check(Fmt("open %s for reading", path).c_str(), fd);
  if (fd >= 0) close(fd);
  fprintf(stderr, "probe: waiting\n");
  for (;;) pause();
}

// The path-swap race: one thread keeps rewriting a path buffer in place, alternating between
// A and B, while this thread open()s the buffer again and again (the classic attack on a
// supervisor that reads a path and then lets the kernel read it again). Runs at least
// MIN_OPENS opens, and on until both an open of A's content and a failed or foreign open
// have been seen, but never past MAX_MS. Every successful open is read and compared with A's
// content (read once at the start): different bytes came from another file, the escape.
// Exit 0 = some open returned another file's bytes; 1 = none did.
int DoRace(const char* a, const char* b, const char* min_opens_arg, const char* max_ms_arg) {
  const long min_opens = atol(min_opens_arg);
  const long max_ms = atol(max_ms_arg);
  std::string a_content;
  {
    int fd = open(a, O_RDONLY | O_CLOEXEC);
    if (!Check(Fmt("open %s (A, the harmless file)", a).c_str(), fd)) return kUsage;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) a_content.append(buf, static_cast<size_t>(n));
    close(fd);
  }
  const size_t a_len = strlen(a), b_len = strlen(b);
  if (a_len >= 1024 || b_len >= 1024) return kUsage;
  static char path[1024];
  memcpy(path, a, a_len + 1);
  std::atomic<bool> stop{false};
  std::atomic<long> swaps{0};
  std::thread swapper([&] {
    // Byte-wise relaxed stores: the buffer is changed in place, as a racing attacker would;
    // the opener may see A, B or a mix (a torn path), which is fine.
    bool to_b = true;
    while (!stop.load(std::memory_order_relaxed)) {
      const char* src = to_b ? b : a;
      size_t len = to_b ? b_len : a_len;
      for (size_t i = 0; i <= len; ++i) __atomic_store_n(&path[i], src[i], __ATOMIC_RELAXED);
      to_b = !to_b;
      swaps.fetch_add(1, std::memory_order_relaxed);
    }
  });
  long opens = 0, got_a = 0, got_other = 0, failed = 0;
  int first_errno = 0;
  std::string leaked;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (opens >= min_opens && got_a > 0 && (failed > 0 || got_other > 0)) break;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ++opens;
    if (fd < 0) {
      if (!first_errno) first_errno = errno;
      ++failed;
      continue;
    }
    std::string content;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) content.append(buf, static_cast<size_t>(n));
    close(fd);
    if (content == a_content) {
      ++got_a;
    } else {
      ++got_other;
      if (leaked.empty()) leaked = content.substr(0, 40);
    }
  }
  stop = true;
  swapper.join();
  fprintf(stderr,
          "probe: race: %ld opens, %ld swaps: %ld read A, %ld read another file, %ld failed "
          "(first errno %d: %s)\n",
          opens, swaps.load(), got_a, got_other, failed, first_errno,
          first_errno ? strerror(first_errno) : "none");
  if (got_other > 0) {
    fprintf(stderr, "probe: race: ESCAPED: read %zu+ bytes of another file, starting \"%s\"\n",
            leaked.size(), leaked.c_str());
  }
  return Result(got_other > 0);
}

// --- helpers for the lifecycle tests --------------------------------------------------------

// Ignores SIGTERM and waits forever; the marker only makes the process findable in /proc.
int DoIgnoreTerm() {
  signal(SIGTERM, SIG_IGN);
  fprintf(stderr, "probe: ignoring SIGTERM\n");
  for (;;) pause();
}

int DoCrash() {
  fprintf(stderr, "probe: writing through a null pointer\n");
  volatile int* volatile p = nullptr;
  *p = 1;
  return kFailed;
}

int Usage() {
  fprintf(stderr,
          "usage: gander_probe ATTEMPT [ARGS]\n"
          "  read FILE | list DIR | write FILE | exec PATH [ARGS] | fds\n"
          "  env NAME [VALUE]\n"
          "  tcp IP PORT | udp IP PORT | unix PATH | abstract NAME | packet | vsock-high-bits\n"
          "  unix-high-bits PATH | mptcp-high-bits | family-race IP PORT TRIES | memfd-exec\n"
          "  listen-autobind | bind-any\n"
          "  kill PID [SIG] | userns | setns NSFILE... | ptrace | process_vm | forkbomb N\n"
          "  mount DIR | umount DIR | chroot DIR | bpf | io_uring | keyctl | perf\n"
          "  open_by_handle FILE | tiocsti | x32 | int80\n"
          "  ignore-term [MARKER] | crash\n"
          "  stat FILE | openat DIR REL | magic ownpid-root FILE | magic fd-dotdot DIR REL\n"
          "  thread-read FILE | deny-and-wait FILE | race A B MIN_OPENS MAX_MS\n"
          "exit status: 0 the attempt succeeded, 1 it failed, 2 usage\n");
  return kUsage;
}

}  // namespace
}  // namespace gander::probe

int main(int argc, char** argv) {
  using namespace gander::probe;
  if (argc < 2) return Usage();
  std::string cmd = argv[1];
  int nargs = argc - 2;
  char** args = argv + 2;
  auto need = [nargs](int n) { return nargs >= n; };

  if (cmd == "read" && need(1)) return DoRead(args[0]);
  if (cmd == "list" && need(1)) return DoList(args[0]);
  if (cmd == "write" && need(1)) return DoWrite(args[0]);
  if (cmd == "exec" && need(1)) return DoExec(args);
  if (cmd == "fds") return DoFds();
  if (cmd == "env" && need(1)) return DoEnv(args[0], nargs > 1 ? args[1] : nullptr);
  if (cmd == "tcp" && need(2)) return DoTcp(args[0], args[1]);
  if (cmd == "udp" && need(2)) return DoUdp(args[0], args[1]);
  if (cmd == "unix" && need(1)) return DoUnix(args[0]);
  if (cmd == "packet") return DoPacket();
  if (cmd == "vsock-high-bits") return DoVsockHighBits();
  if (cmd == "unix-high-bits" && need(1)) return DoUnixHighBits(args[0]);
  if (cmd == "mptcp-high-bits") return DoMptcpHighBits();
  if (cmd == "family-race" && need(3)) return DoFamilyRace(args[0], args[1], args[2]);
  if (cmd == "memfd-exec") return DoMemfdExec();
  if (cmd == "exit0") return kSucceeded;
  if (cmd == "listen-autobind") return DoListenAutobind();
  if (cmd == "bind-any") return DoBindAny();
  if (cmd == "netlink") return DoNetlink();
  if (cmd == "dns-exfil") return DoDnsExfil(nargs > 0 ? args[0] : nullptr);
  if (cmd == "abstract" && need(1)) return DoAbstract(args[0]);
  if (cmd == "kill" && need(1)) return DoKill(args[0], nargs > 1 ? args[1] : nullptr);
  if (cmd == "userns") return DoUserns();
  if (cmd == "setns" && need(1)) return DoSetns(nargs, args);
  if (cmd == "ptrace") return DoPtrace();
  if (cmd == "process_vm") return DoProcessVm();
  if (cmd == "forkbomb" && need(1)) return DoForkbomb(args[0]);
  if (cmd == "mount" && need(1)) return DoMount(args[0]);
  if (cmd == "umount" && need(1)) return DoUmount(args[0]);
  if (cmd == "chroot" && need(1)) return DoChroot(args[0]);
  if (cmd == "bpf") return DoBpf();
  if (cmd == "io_uring") return DoIoUring();
  if (cmd == "keyctl") return DoKeyctl();
  if (cmd == "perf") return DoPerf();
  if (cmd == "open_by_handle" && need(1)) return DoOpenByHandle(args[0]);
  if (cmd == "tiocsti") return DoTiocsti();
  if (cmd == "x32") return DoX32();
  if (cmd == "int80") return DoInt80();
  if (cmd == "ignore-term") return DoIgnoreTerm();
  if (cmd == "crash") return DoCrash();
  if (cmd == "stat" && need(1)) return DoStat(args[0]);
  if (cmd == "openat" && need(2)) return DoOpenat(args[0], args[1]);
  if (cmd == "magic" && need(2)) return DoMagic(args[0], args[1], nargs > 2 ? args[2] : nullptr);
  if (cmd == "thread-read" && need(1)) return DoThreadRead(args[0]);
  if (cmd == "deny-and-wait" && need(1)) return DoDenyAndWait(args[0]);
  if (cmd == "race" && need(4)) return DoRace(args[0], args[1], args[2], args[3]);
  return Usage();
}
