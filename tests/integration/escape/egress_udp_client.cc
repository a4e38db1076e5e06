// A UDP client for the egress UDP tests, run inside `gander run`; prints one result line.
//   egress_udp_client connect|sendto HOST PORT COUNT   COUNT datagrams "datagram-<i>", each
//       answered before the next: connected (send/recv) or not (sendto/recvfrom, the reply's
//       source address checked against HOST:PORT). Prints
//       "send=<OK|ERRNO>:<n> recv=<n> bytes_out=<n> bytes_in=<n> from_ok=<n>".
//   egress_udp_client hold HOST PORT COUNT GOFILE AFTER   as connect, then waits for the file
//       GOFILE to exist and sends AFTER more on the same socket.
//   egress_udp_client sockets HOST PORT COUNT   COUNT sockets, one datagram each (unconnected).
//   egress_udp_client tcp HOST PORT   a blocking TCP connect: "tcp=<OK|ERRNO>".
// A reply that does not come within 10 s ends the run ("recv" counts what came); the tests
// never wait on that for a pass.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* ErrnoName(int e) {
  switch (e) {
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENETUNREACH:
      return "ENETUNREACH";
    case EHOSTUNREACH:
      return "EHOSTUNREACH";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case ECONNRESET:
      return "ECONNRESET";
    case EADDRNOTAVAIL:
      return "EADDRNOTAVAIL";
    default:
      return "other";
  }
}

socklen_t Parse(const char* host, int port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof(*out));
  auto* in = reinterpret_cast<sockaddr_in*>(out);
  if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    return sizeof(sockaddr_in);
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    return sizeof(sockaddr_in6);
  }
  return 0;
}

struct Totals {
  int send_error = 0, received = 0, from_ok = 0;
  long bytes_out = 0, bytes_in = 0, sent = 0;
};

// COUNT datagrams "datagram-<first + i>" on `fd`, each answered before the next.
void Exchange(int fd, const sockaddr_storage& dest, socklen_t len, bool connected, int first,
              int count, Totals& t) {
  for (int i = first; i < first + count && t.send_error == 0; ++i) {
    std::string message = "datagram-" + std::to_string(i);
    ssize_t n = connected ? send(fd, message.data(), message.size(), 0)
                          : sendto(fd, message.data(), message.size(), 0,
                                   reinterpret_cast<const sockaddr*>(&dest), len);
    if (n < 0) {
      t.send_error = errno;
      break;
    }
    ++t.sent;
    t.bytes_out += n;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) break;
    char buf[2048];
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    n = recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      t.send_error = errno;  // an ICMP error on a connected socket
      break;
    }
    ++t.received;
    t.bytes_in += n;
    if (from_len == len && std::memcmp(&from, &dest, len) == 0) ++t.from_ok;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  std::string mode = argv[1];
  sockaddr_storage dest{};
  socklen_t len = Parse(argv[2], std::atoi(argv[3]), &dest);
  if (len == 0) return 2;
  if (mode == "tcp") {
    int fd = socket(dest.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = connect(fd, reinterpret_cast<sockaddr*>(&dest), len);
    std::printf("tcp=%s\n", rc == 0 ? "OK" : ErrnoName(errno));
    return 0;
  }
  if (argc < 5) return 2;
  int count = std::atoi(argv[4]);
  Totals t;
  if (mode == "sockets") {
    // COUNT sockets, one after another, each sending one datagram (each a flow of its own);
    // all stay open until the end.
    std::vector<int> fds;
    for (int i = 0; i < count && t.send_error == 0; ++i) {
      fds.push_back(socket(dest.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
      Exchange(fds.back(), dest, len, false, i, 1, t);
    }
  } else {
    bool connected = mode == "connect" || mode == "hold";
    int fd = socket(dest.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (connected && connect(fd, reinterpret_cast<sockaddr*>(&dest), len) != 0)
      t.send_error = errno;
    Exchange(fd, dest, len, connected, 0, count, t);
    if (mode == "hold" && argc >= 7) {
      // Stay until the file GOFILE exists (at most 120 s), then send AFTER more datagrams.
      for (int i = 0; i < 6000 && access(argv[5], F_OK) != 0; ++i) usleep(20000);
      Exchange(fd, dest, len, connected, count, std::atoi(argv[6]), t);
    }
  }
  std::printf("send=%s:%ld recv=%d bytes_out=%ld bytes_in=%ld from_ok=%d\n",
              t.send_error ? ErrnoName(t.send_error) : "OK", t.send_error ? 1 : t.sent, t.received,
              t.bytes_out, t.bytes_in, t.from_ok);
  return 0;
}
