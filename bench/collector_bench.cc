// collector_bench: what one `gander-collect` process costs (numbers in
// bench/results/collector.md):
//   1. ingest: records per CPU-second of the collector process (its utime+stime from /proc),
//      fed pre-encoded records over its socket by this driver, with and without audit logs;
//   2. scrape: /metrics latency with 50 extensions' series;
//   3. its RSS afterwards;
//   4. the exit acknowledgement a launcher waits for (sync -> ack), with a fresh state and
//      with the 50 extensions' state of 2: the collector persists before it acknowledges.
// Usage: collector_bench PATH/TO/gander-collect [EVENTS]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/exec_strings.h"
#include "exporters/collector_token.h"
#include "exporters/collector_wire.h"

namespace {

using namespace gander;
namespace wire = gander::exporters::wire;
using Clock = std::chrono::steady_clock;

int Connect(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof(a.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

std::string HttpGet(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return "";
  std::string req = "GET /metrics HTTP/1.0\r\n\r\n", out;
  (void)!write(fd, req.data(), req.size());
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) out.append(buf, n);
  close(fd);
  return out;
}

events::Event MakeEvent(const std::string& ext, int i) {
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = ext;
  e.pid = 4242;
  e.sandbox_pid = 3;
  e.executable = "/usr/bin/node";
  if (i % 4 == 0) {
    std::string path = "/home/u/.cache/dir" + std::to_string(i % 16) + "/file" + std::to_string(i);
    e.payload = events::FileEvent{.syscall = "openat",
                                  .raw_path = path,
                                  .path = path,
                                  .path_class = events::PathClass::kOutside,
                                  .access = events::FileAccess::kRead};
  } else {
    static const char* kNames[] = {"read", "write", "openat",    "close",
                                   "mmap", "futex", "epoll_wait"};
    e.payload = events::SyscallEvent{
        .name = kNames[i % 7], .nr = i % 7, .action = events::SyscallAction::kCounted, .count = 1};
  }
  return e;
}

std::string g_token;  // the running collector's (Start reads it): it refuses a hello without

wire::Hello MakeHello(const std::string& ext) {
  wire::Hello h;
  h.token = g_token;
  h.launcher = "bench-" + ext;
  h.extension = ext;
  h.running = true;
  h.info.run.isolation = "full";
  h.info.run.policy_sha256 = "00";
  h.info.run.syscall_accounting = "watched";
  h.info.destinations = {"api.example.com", "uploads.example.com"};
  h.info.secrets = {"TOKEN"};
  h.home = "/home/u";
  h.audit_log_local = true;  // the bench measures metrics, not the audit log
  return h;
}

// Sends `lines` after `hello` on one connection and waits for the ack of `last_seq`.
void Stream(const std::string& socket, const std::string& hello, const std::string& lines,
            uint64_t last_seq) {
  int fd = Connect(socket);
  std::string all = hello + lines;
  std::thread reader([&] {
    std::string in;
    char buf[4096];
    std::string want = "{\"t\":\"ack\",\"seq\":" + std::to_string(last_seq) + "}";
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) {
      in.append(buf, n);
      if (in.find(want) != std::string::npos) break;
      if (in.size() > 8192) in.erase(0, in.size() - 200);
    }
  });
  for (size_t done = 0; done < all.size();) {
    ssize_t n = write(fd, all.data() + done, all.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  reader.join();
  std::string bye = wire::EncodeBye(last_seq);
  (void)!write(fd, bye.data(), bye.size());
  close(fd);
}

// One short launcher, as a `gander run -- /bin/true` is: hello, 10 records, then sync and
// the wait for its ack. Returns that wait in ms.
double ExitAckMs(const std::string& socket, const std::string& ext, int n) {
  int fd = Connect(socket);
  wire::Hello hello = MakeHello(ext);
  hello.launcher = "ack-" + std::to_string(n);
  std::string lines = wire::EncodeHello(hello);
  for (int i = 1; i <= 10; ++i) lines += wire::EncodeRecord(i, MakeEvent(ext, i));
  (void)!write(fd, lines.data(), lines.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the run itself
  std::string sync = wire::EncodeSync(10), in;
  auto t = Clock::now();
  (void)!write(fd, sync.data(), sync.size());
  char buf[4096];
  for (ssize_t r; (r = read(fd, buf, sizeof(buf))) > 0;) {
    in.append(buf, r);
    if (in.find("{\"t\":\"ack\",\"seq\":10}") != std::string::npos) break;
  }
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  std::string bye = wire::EncodeBye(10);
  (void)!write(fd, bye.data(), bye.size());
  close(fd);
  return ms;
}

// Median exit acknowledgement of 40 launchers, 150 ms apart (the collector idle between runs).
double MedianExitAckMs(const std::string& socket, const std::string& ext) {
  std::vector<double> ms;
  for (int i = 0; i < 40; ++i) {
    ms.push_back(ExitAckMs(socket, ext, i));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Daemon {
  pid_t pid = -1;
  std::string socket;
};

Daemon Start(const std::string& binary, const std::string& dir, int port, bool audit) {
  Daemon d{-1, dir + "/c.sock"};
  std::vector<std::string> args = {binary,
                                   "--socket",
                                   d.socket,
                                   "--state",
                                   dir + "/state.json",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--log-level",
                                   "warn"};
  if (!audit) args.push_back("--no-audit-log");
  const gander::ExecStrings argv(std::move(args));
  d.pid = fork();
  if (d.pid == 0) {
    setenv("XDG_STATE_HOME", dir.c_str(), 1);
    execv(argv.front(), argv.get());
    _exit(127);
  }
  for (int i = 0; i < 500; ++i) {
    int fd = Connect(d.socket);
    if (fd >= 0) {
      close(fd);
      auto token = exporters::ReadCollectorToken(dir + "/gander/collector.token");
      g_token = token ? *token : "";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return d;
}

void Stop(Daemon& d) {
  kill(d.pid, SIGTERM);
  waitpid(d.pid, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s GANDER_COLLECT [EVENTS]\n", argv[0]);
    return 2;
  }
  std::string binary = argv[1];
  int events = argc > 2 ? std::stoi(argv[2]) : 1000000;
  std::string dir =
      std::filesystem::temp_directory_path() / ("gander-bench-" + std::to_string(getpid()));
  const int port = 19000 + getpid() % 1000;

  // Records are encoded once, before the clock starts: the driver should cost little.
  std::string lines;
  for (int i = 1; i <= events; ++i) lines += wire::EncodeRecord(i, MakeEvent("bench", i));
  printf("records: %d, %.0f bytes each on average\n", events,
         static_cast<double>(lines.size()) / events);

  for (bool audit : {false, true}) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Daemon d = Start(binary, dir, port, audit);
    double cpu0 = CpuSeconds(d.pid);
    auto t0 = Clock::now();
    Stream(d.socket, wire::EncodeHello(MakeHello("bench")), lines, events);
    double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    double cpu = CpuSeconds(d.pid) - cpu0;
    printf(
        "ingest, audit log %-3s: %.0f records/s per collector CPU-second (cpu %.2f s), "
        "%.0f records/s wall (%.2f s)\n",
        audit ? "on" : "off", events / cpu, cpu, events / wall, wall);
    Stop(d);
  }

  // 50 extensions, each with its implied series plus 7 syscalls and 16 paths.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Daemon d = Start(binary, dir, port, false);
  double fresh_ack = MedianExitAckMs(d.socket, "ext0");
  for (int x = 0; x < 50; ++x) {
    std::string ext = "ext" + std::to_string(x), ls;
    for (int i = 1; i <= 400; ++i) ls += wire::EncodeRecord(i, MakeEvent(ext, i));
    Stream(d.socket, wire::EncodeHello(MakeHello(ext)), ls, 400);
  }
  std::string body = HttpGet(port);
  long series =
      std::count(body.begin(), body.end(), '\n') - 2 * 20;  // roughly: minus HELP and TYPE lines
  std::vector<double> ms;
  for (int i = 0; i < 50; ++i) {
    auto t = Clock::now();
    HttpGet(port);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  std::sort(ms.begin(), ms.end());
  printf(
      "scrape, 50 extensions (~%ld series, %zu bytes): median %.2f ms, p90 %.2f ms, max %.2f ms\n",
      series, body.size(), ms[ms.size() / 2], ms[ms.size() * 9 / 10], ms.back());
  printf("collector RSS after: %ld KiB\n", RssKiB(d.pid));
  double full_ack = MedianExitAckMs(d.socket, "ext0");
  printf(
      "exit ack (sync -> ack), median of 40: fresh state %.3f ms, 50 extensions' state "
      "(%ju bytes) %.3f ms\n",
      fresh_ack, static_cast<uintmax_t>(std::filesystem::file_size(dir + "/state.json")), full_ack);
  Stop(d);
  std::filesystem::remove_all(dir);
  return 0;
}
