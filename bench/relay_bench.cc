// The stdio relay's cost, side by side with a direct pipe, in one run:
//   latency:    a ~300-byte tools/call line to `cat` and back, one at a time (round trip),
//               direct vs through gander's Supervise loop (both directions relayed, parsed by
//               the RpcMonitor); added latency per message = (relay - direct) / 2.
//   throughput: a child writes large JSON-RPC result lines (1 MiB and 16 MiB) to its stdout;
//               the client reads them directly vs through the relay (parsed, line-framed).
//   relay_bench [--rounds N] [--gib G]      (prints a Markdown table)
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/exec_strings.h"
#include "monitor/supervisor.h"
#include "relay/rpc_monitor.h"

namespace {

using Clock = std::chrono::steady_clock;
using gander::monitor::SupervisorOptions;
using gander::relay::RpcMonitor;
bool g_parse = true;  // --no-parse: frame only (no RpcMonitor), to see what parsing costs

struct Child {
  pid_t pid = -1;
  int in = -1, out = -1, pidfd = -1;
};

Child Start(const std::vector<std::string>& argv) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) abort();
  const gander::ExecStrings args(argv);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    execv(args.front(), args.get());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  return {pid, in[1], out[0], static_cast<int>(syscall(SYS_pidfd_open, pid, 0))};
}

bool ReadLine(int fd, std::string& buf, std::string& line) {
  for (;;) {
    size_t nl = buf.find('\n');
    if (nl != std::string::npos) {
      line.assign(buf, 0, nl + 1);
      buf.erase(0, nl + 1);
      return true;
    }
    char tmp[65536];
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n <= 0) return false;
    buf.append(tmp, n);
  }
}

// The client side: `write_fd` towards the extension, `read_fd` from it.
std::vector<double> PingPong(int write_fd, int read_fd, int rounds) {
  std::string msg =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/home/user/project/src/main.cc","head":40},"_meta":{"agent-session-id":"20250601_1","agent-working-dir":"/home/user/project","progressToken":1}}})";
  msg.resize(300, ' ');
  msg += '\n';
  std::vector<double> us;
  std::string buf, line;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = Clock::now();
    if (write(write_fd, msg.data(), msg.size()) != static_cast<ssize_t>(msg.size())) abort();
    if (!ReadLine(read_fd, buf, line)) abort();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us;
}

double Pct(const std::vector<double>& v, double p) {
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

// Reads everything from `fd`; returns bytes and seconds from the first byte to EOF.
std::pair<uint64_t, double> Drain(int fd) {
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  Clock::time_point first{};
  for (;;) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    if (total == 0) first = Clock::now();
    total += n;
  }
  return {total, std::chrono::duration<double>(Clock::now() - first).count()};
}

// Runs Supervise with `child` behind it; `client` runs in a thread with the client's ends.
template <typename F>
void Relay(Child child, F client) {
  int up[2], down[2];
  if (pipe2(up, O_CLOEXEC) || pipe2(down, O_CLOEXEC)) abort();
  fcntl(child.in, F_SETFL, O_NONBLOCK);
  fcntl(child.out, F_SETFL, O_NONBLOCK);
  RpcMonitor rpc("bench", nullptr, 64u << 20);
  SupervisorOptions o;
  o.client_in = up[0];
  o.client_out = down[1];
  o.child_in = child.in;
  o.child_out = child.out;
  o.pidfd = child.pidfd;
  if (g_parse) {
    o.client_observer = &rpc.client_side();
    o.server_observer = &rpc.server_side();
  }
  std::thread t([&] {
    client(up[1], down[0]);
    close(up[1]);
  });
  gander::monitor::Supervise(o);
  t.join();
  waitpid(child.pid, nullptr, 0);
  for (int fd : {up[0], down[0], down[1], child.out, child.pidfd}) close(fd);
}

void Generate(size_t line_bytes, uint64_t total) {
  std::string head = R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":")";
  std::string tail = "\"}]}}\n";
  std::string line = head + std::string(line_bytes - head.size() - tail.size(), 'x') + tail;
  for (uint64_t sent = 0; sent < total; sent += line.size()) {
    for (size_t off = 0; off < line.size();) {
      ssize_t n = write(1, line.data() + off, line.size() - off);
      if (n <= 0) _exit(1);
      off += n;
    }
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20000;
  double gib = 2;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--no-parse")) g_parse = false;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--generate"))
      Generate(std::stoull(argv[i + 1]), std::stoull(argv[i + 2]));
    if (!strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--gib")) gib = std::atof(argv[i + 1]);
  }
  std::string self = "/proc/self/exe";
  char exe[4096];
  ssize_t n = readlink(self.c_str(), exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = 0;

  printf("relay %s\n\n",
         g_parse ? "with the JSON-RPC reader (as gander runs it)" : "framing only (--no-parse)");
  printf("| measurement | direct pipe | through the relay | added |\n|---|---:|---:|---:|\n");
  for (int rep = 0; rep < 2; ++rep) {
    Child c = Start({"/bin/cat"});
    std::vector<double> direct = PingPong(c.in, c.out, rounds);
    close(c.in);
    waitpid(c.pid, nullptr, 0);
    close(c.out);
    close(c.pidfd);
    std::vector<double> relayed;
    Relay(Start({"/bin/cat"}), [&](int w, int r) { relayed = PingPong(w, r, rounds); });
    printf(
        "| round trip, 300-byte message, median (run %d) | %.1f us | %.1f us | %.1f us per message "
        "(one way) |\n",
        rep + 1, Pct(direct, 0.5), Pct(relayed, 0.5), (Pct(relayed, 0.5) - Pct(direct, 0.5)) / 2);
    printf("| round trip, p99 (run %d) | %.1f us | %.1f us | %.1f us |\n", rep + 1,
           Pct(direct, 0.99), Pct(relayed, 0.99), (Pct(relayed, 0.99) - Pct(direct, 0.99)) / 2);
  }
  uint64_t total = static_cast<uint64_t>(gib * (1u << 30));
  for (size_t size : {size_t{1} << 20, size_t{16} << 20}) {
    std::vector<std::string> gen = {exe, "--generate", std::to_string(size), std::to_string(total)};
    Child d = Start(gen);
    close(d.in);
    auto [dbytes, dsec] = Drain(d.out);
    waitpid(d.pid, nullptr, 0);
    close(d.out);
    close(d.pidfd);
    std::pair<uint64_t, double> r;
    Relay(Start(gen), [&](int, int rd) { r = Drain(rd); });
    printf("| throughput, %zu MiB lines, %.1f GiB | %.2f GB/s | %.2f GB/s | %.0f %% of direct |\n",
           size >> 20, gib, dbytes / dsec / 1e9, r.first / r.second / 1e9,
           100.0 * (r.first / r.second) / (dbytes / dsec));
    if (r.first != dbytes)
      printf("| (bytes differ: direct %lu, relay %lu) | | | |\n", dbytes, r.first);
  }
  return 0;
}
