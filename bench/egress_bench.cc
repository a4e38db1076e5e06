// egress_bench: the two halves of bench/egress.sh, plain C++ and libc (it measures gander
// from the outside, as an extension would see it).
//
//   egress_bench serve IP
//       an HTTP/1.0 server on IP (any free port, printed on stdout): `GET /N` answers N bytes
//       of body and closes the connection; one thread per connection.
//   egress_bench latency IP PORT ROUNDS
//       ROUNDS x (connect, `GET /100`, read the response to EOF, close), one at a time; prints
//       "latency rounds=R p50_us=.. p90_us=.. p99_us=.. mean_us=.."
//   egress_bench throughput IP PORT BYTES
//       one `GET /BYTES`, read to EOF; prints "throughput bytes=B seconds=S gb_per_s=G"
//       (from connect to EOF).
// Usage errors exit 2; a failed connection or a short response exits 1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool Address(const char* ip, int port, sockaddr_in* a) {
  *a = {};
  a->sin_family = AF_INET;
  a->sin_port = htons(static_cast<uint16_t>(port));
  return inet_pton(AF_INET, ip, &a->sin_addr) == 1;
}

bool SendAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void Answer(int fd) {
  std::string request;
  char buf[4096];
  while (request.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      close(fd);
      return;
    }
    request.append(buf, static_cast<size_t>(n));
  }
  unsigned long long size = 0;
  if (request.rfind("GET /", 0) == 0) size = std::strtoull(request.c_str() + 5, nullptr, 10);
  std::string head = "HTTP/1.0 200 OK\r\nContent-Length: " + std::to_string(size) +
                     "\r\nContent-Type: application/octet-stream\r\n\r\n";
  static const std::string chunk(1 << 20, 'x');
  bool ok = SendAll(fd, head.data(), head.size());
  for (unsigned long long left = size; ok && left > 0;) {
    size_t n = static_cast<size_t>(std::min<unsigned long long>(left, chunk.size()));
    ok = SendAll(fd, chunk.data(), n);
    left -= n;
  }
  shutdown(fd, SHUT_WR);
  while (recv(fd, buf, sizeof(buf), 0) > 0) {
  }
  close(fd);
}

int Serve(const char* ip) {
  sockaddr_in a;
  if (!Address(ip, 0, &a)) return 2;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 512) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("egress_bench: listen");
    return 1;
  }
  std::printf("%d\n", ntohs(a.sin_port));
  std::fflush(stdout);
  while (true) {
    int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    std::thread(Answer, c).detach();
  }
}

// One connect + GET /size + read to EOF; the bytes read, or -1. `connected`: when connect
// returned.
long long Get(const sockaddr_in& a, unsigned long long size, std::vector<char>& buf,
              double* connected = nullptr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rc = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a));
  if (connected) *connected = Now();
  if (rc != 0) {
    std::perror("egress_bench: connect");
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string request = "GET /" + std::to_string(size) + " HTTP/1.0\r\nHost: bench\r\n\r\n";
  long long total = SendAll(fd, request.data(), request.size()) ? 0 : -1;
  ssize_t n;
  while (total >= 0 && (n = recv(fd, buf.data(), buf.size(), 0)) > 0) total += n;
  close(fd);
  return total;
}

int Latency(const char* ip, int port, int rounds) {
  sockaddr_in a;
  if (!Address(ip, port, &a) || rounds <= 0) return 2;
  std::vector<char> buf(65536);
  std::vector<double> us, connect_us;
  for (int i = 0; i < rounds; ++i) {
    double t0 = Now(), connected = 0;
    long long got = Get(a, 100, buf, &connected);
    double t1 = Now();
    if (got <= 100) return 1;
    us.push_back((t1 - t0) * 1e6);
    connect_us.push_back((connected - t0) * 1e6);
  }
  double mean = 0;
  for (double v : us) mean += v / static_cast<double>(us.size());
  std::sort(us.begin(), us.end());
  std::sort(connect_us.begin(), connect_us.end());
  auto at = [](const std::vector<double>& v, double q) {
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
  };
  std::printf(
      "latency rounds=%d p50_us=%.1f p90_us=%.1f p99_us=%.1f mean_us=%.1f connect_p50_us=%.1f "
      "connect_p90_us=%.1f\n",
      rounds, at(us, 0.5), at(us, 0.9), at(us, 0.99), mean, at(connect_us, 0.5),
      at(connect_us, 0.9));
  return 0;
}

int Throughput(const char* ip, int port, unsigned long long bytes) {
  sockaddr_in a;
  if (!Address(ip, port, &a) || bytes == 0) return 2;
  std::vector<char> buf(1 << 20);
  double t0 = Now();
  long long got = Get(a, bytes, buf);
  double t1 = Now();
  if (got < static_cast<long long>(bytes)) return 1;
  std::printf("throughput bytes=%lld seconds=%.3f gb_per_s=%.3f\n", got, t1 - t0,
              static_cast<double>(got) / (t1 - t0) / 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "serve" && argc == 3) return Serve(argv[2]);
  if (mode == "latency" && argc == 5)
    return Latency(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (mode == "throughput" && argc == 5) {
    return Throughput(argv[2], std::atoi(argv[3]), std::strtoull(argv[4], nullptr, 10));
  }
  std::fprintf(stderr,
               "usage: egress_bench serve IP | latency IP PORT ROUNDS | throughput IP PORT "
               "BYTES\n");
  return 2;
}
