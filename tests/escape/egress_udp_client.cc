// A UDP client for the egress UDP tests, run inside `gander run`; prints one result line.
//   egress_udp_client connect|sendto HOST PORT COUNT   COUNT datagrams "datagram-<i>", each
//       answered before the next: connected (send/recv) or not (sendto/recvfrom, the reply's
//       source address checked against HOST:PORT). Prints
//       "send=<OK|ERRNO>:<n> recv=<n> bytes_out=<n> bytes_in=<n> from_ok=<n>".
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
  bool connected = mode == "connect";
  int fd = socket(dest.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int send_error = 0, received = 0, from_ok = 0;
  long bytes_out = 0, bytes_in = 0, sent = 0;
  if (connected && connect(fd, reinterpret_cast<sockaddr*>(&dest), len) != 0) send_error = errno;
  for (int i = 0; i < count && send_error == 0; ++i) {
    std::string message = "datagram-" + std::to_string(i);
    ssize_t n = connected ? send(fd, message.data(), message.size(), 0)
                          : sendto(fd, message.data(), message.size(), 0,
                                   reinterpret_cast<sockaddr*>(&dest), len);
    if (n < 0) {
      send_error = errno;
      break;
    }
    ++sent;
    bytes_out += n;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) break;
    char buf[2048];
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    n = recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      send_error = errno;  // an ICMP error on a connected socket
      break;
    }
    ++received;
    bytes_in += n;
    if (from_len == len && std::memcmp(&from, &dest, len) == 0) ++from_ok;
  }
  std::printf("send=%s:%ld recv=%d bytes_out=%ld bytes_in=%ld from_ok=%d\n",
              send_error ? ErrnoName(send_error) : "OK", send_error ? 1 : sent, received, bytes_out,
              bytes_in, from_ok);
  return 0;
}
