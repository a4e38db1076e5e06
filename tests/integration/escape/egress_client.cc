// A TCP client for the egress broker's tests, run inside the sandbox: opens COUNT non-blocking
// connections to HOST:PORT at once (as event loops do), waits for each with poll(), reads the
// result from SO_ERROR, and on each connected one sends a line and reads it echoed back.
//
//   egress_client HOST PORT COUNT [SYNCNT]
//   egress_client --dns-tcp NAME     (an A query to 127.0.0.1:53 over TCP)
//   egress_client --failing HOST PORT COUNT
//     (a destination that fails: COUNT non-blocking connects one after the other, each polled
//     by this thread as soon as connect() returned, its result read from SO_ERROR for even
//     ones and from a second connect() for odd ones; then COUNT blocking connects)
//
// Prints one line: `connect=<what connect() returned> result=<SO_ERROR or OK> echoed=N`, with
// each distinct value and its count, e.g. `connect=EINPROGRESS:64 result=OK:64 echoed=64`.
// `pending_after_connect=N` counts the sockets poll() did not report ready right after every
// connect() had returned. With --dns-tcp: `rcode=N answers=N first=A.B.C.D`. With --failing:
// `nonblocking=connect:EINPROGRESS:N,so_error:E:N,retry:E:N blocking=E:N`. Exit 0.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

std::string Name(int err) {
  switch (err) {
    case 0:
      return "OK";
    case EINPROGRESS:
      return "EINPROGRESS";
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case ECONNRESET:
      return "ECONNRESET";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENETUNREACH:
      return "ENETUNREACH";
    case EHOSTUNREACH:
      return "EHOSTUNREACH";
    case ECONNABORTED:
      return "ECONNABORTED";
    case EALREADY:
      return "EALREADY";
    default:
      return "errno" + std::to_string(err);
  }
}

std::string Summary(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [name, n] : counts)
    out += (out.empty() ? "" : ",") + name + ":" + std::to_string(n);
  return out.empty() ? "-" : out;
}

// One A query for `name` over TCP to the sandbox's resolver (RFC 1035 4.2.2 framing).
int DnsOverTcp(const std::string& name) {
  std::string q("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    q += static_cast<char>(dot - start);
    q += name.substr(start, dot - start);
    start = dot + 1;
  }
  q += std::string("\x00\x00\x01\x00\x01", 5);
  std::string framed =
      std::string(1, static_cast<char>(q.size() >> 8)) + static_cast<char>(q.size() & 0xff) + q;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(53);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    std::printf("connect=%s\n", Name(errno).c_str());
    return 0;
  }
  if (send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(framed.size())) {
    return 1;
  }
  std::string reply;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
    reply.append(buf, static_cast<size_t>(n));
    size_t want = reply.size() < 2 ? SIZE_MAX
                                   : 2 + (static_cast<size_t>(static_cast<uint8_t>(reply[0])) << 8 |
                                          static_cast<uint8_t>(reply[1]));
    if (reply.size() >= want) {
      break;
    }
  }
  close(fd);
  if (reply.size() < 14) {
    std::printf("short reply (%zu bytes)\n", reply.size());
    return 0;
  }
  const auto* m = reinterpret_cast<const uint8_t*>(reply.data() + 2);
  size_t size = reply.size() - 2;
  int rcode = m[3] & 0xf;
  int answers = m[6] << 8 | m[7];
  std::string first = "-";
  // The answers follow the question (12 + name + 4); each: pointer(2) type(2) class(2) ttl(4)
  // rdlength(2) rdata.
  size_t pos = 12 + q.size() - 12;
  if (answers > 0 && pos + 16 <= size) {
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, m + pos + 12, ip, sizeof(ip));
    first = ip;
  }
  std::printf("rcode=%d answers=%d first=%s\n", rcode, answers, first.c_str());
  return 0;
}

int Failing(const sockaddr_storage& ss, socklen_t len, int count) {
  std::map<std::string, int> nonblocking, blocking;
  for (int i = 0; i < count; ++i) {
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int reuse = i % 4 < 2;  // SO_REUSEADDR must stay as the program set it
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
    int rc = connect(fd, reinterpret_cast<const sockaddr*>(&ss), len);
    ++nonblocking["connect:" + Name(rc == 0 ? 0 : errno)];
    if (rc == 0 || errno != EINPROGRESS) {
      close(fd);
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, -1);
    if (i % 2 == 0) {
      int err = 0;
      socklen_t elen = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
      ++nonblocking["so_error:" + Name(err)];
    } else {
      rc = connect(fd, reinterpret_cast<const sockaddr*>(&ss), len);
      ++nonblocking["retry:" + Name(rc == 0 ? 0 : errno)];
    }
    int now = -1;
    socklen_t rlen = sizeof(now);
    getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &now, &rlen);
    if (now != reuse) ++nonblocking["so_reuseaddr_changed"];
    close(fd);
  }
  for (int i = 0; i < count; ++i) {
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = connect(fd, reinterpret_cast<const sockaddr*>(&ss), len);
    ++blocking[Name(rc == 0 ? 0 : errno)];
    close(fd);
  }
  std::printf("nonblocking=%s blocking=%s\n", Summary(nonblocking).c_str(),
              Summary(blocking).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--dns-tcp") return DnsOverTcp(argv[2]);
  bool failing = argc == 5 && std::string(argv[1]) == "--failing";
  if (failing) ++argv;
  if (!failing && argc < 4) {
    std::fprintf(stderr, "usage: egress_client HOST PORT COUNT [SYNCNT]\n");
    return 2;
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  if (inet_pton(AF_INET, argv[1], &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr) == 1) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(std::atoi(argv[2])));
    len = sizeof(*in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    family = AF_INET6;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(std::atoi(argv[2])));
    if (inet_pton(AF_INET6, argv[1], &in6->sin6_addr) != 1) return 2;
    len = sizeof(*in6);
  }
  int count = std::atoi(argv[3]);
  if (failing) return Failing(ss, len, count);
  int syncnt = argc > 4 ? std::atoi(argv[4]) : 0;

  std::map<std::string, int> connect_results, results;
  std::vector<pollfd> pending;
  std::vector<int> connected;
  for (int i = 0; i < count; ++i) {
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      ++connect_results["socket:" + Name(errno)];
      continue;
    }
    if (syncnt > 0) setsockopt(fd, IPPROTO_TCP, TCP_SYNCNT, &syncnt, sizeof(syncnt));
    int rc = connect(fd, reinterpret_cast<sockaddr*>(&ss), len);
    int err = rc == 0 ? 0 : errno;
    ++connect_results[Name(err)];
    if (err == 0) {
      ++results["OK"];
      connected.push_back(fd);
    } else if (err == EINPROGRESS) {
      pending.push_back({fd, POLLOUT, 0});
    } else {
      ++results[Name(err)];
      close(fd);
    }
  }
  int pending_after_connect = 0;
  if (!pending.empty()) {
    poll(pending.data(), pending.size(), 0);
    for (const pollfd& p : pending) pending_after_connect += p.revents == 0;
  }
  while (!pending.empty()) {
    if (poll(pending.data(), pending.size(), -1) < 0 && errno != EINTR) return 1;
    std::vector<pollfd> still;
    for (const pollfd& p : pending) {
      if (p.revents == 0) {
        still.push_back({p.fd, POLLOUT, 0});
        continue;
      }
      int err = 0;
      socklen_t elen = sizeof(err);
      getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &elen);
      ++results[Name(err)];
      if (err == 0) {
        connected.push_back(p.fd);
      } else {
        close(p.fd);
      }
    }
    pending.swap(still);
  }
  int echoed = 0;
  for (int fd : connected) {
    const char line[] = "ping\n";
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, -1);
    if (send(fd, line, sizeof(line) - 1, MSG_NOSIGNAL) != sizeof(line) - 1) {
      close(fd);
      continue;
    }
    std::string got;
    while (got.find('\n') == std::string::npos) {
      p = {fd, POLLIN, 0};
      poll(&p, 1, -1);
      char buf[64];
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0 && !(n < 0 && errno == EAGAIN)) break;
      if (n > 0) got.append(buf, static_cast<size_t>(n));
    }
    echoed += got == "ping\n";
    close(fd);
  }
  std::printf("connect=%s result=%s echoed=%d pending_after_connect=%d\n",
              Summary(connect_results).c_str(), Summary(results).c_str(), echoed,
              pending_after_connect);
  return 0;
}
