// Shared by the egress suites (egress_test.cc, egress_confinement_test.cc, egress_core_test.cc):
// "remote" servers on
// other loopback addresses of this machine that count every byte they see, and `gander run`
// with a policy, its audit log's network events read back.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace gander::egress_suite {

using json = nlohmann::json;

// A TCP socket on `ip` (port 0: any free port), listening with `backlog`, or only bound when
// `backlog` < 0 (connects to it are refused). -1 when it failed.
inline int Listen(const char* ip, bool v6, int port, int* bound_port, int backlog = 128) {
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, ip, &a->sin6_addr);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, ip, &a->sin_addr);
    len = sizeof(*a);
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 ||
      (backlog >= 0 && listen(fd, backlog) != 0)) {
    close(fd);
    return -1;
  }
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  *bound_port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                         : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return fd;
}

inline uint64_t SendAll(int c, const char* p, size_t n) {
  uint64_t total = 0;
  while (total < n) {
    ssize_t w = send(c, p + total, n - total, MSG_NOSIGNAL);
    if (w <= 0) break;
    total += static_cast<uint64_t>(w);
  }
  return total;
}

// A tiny HTTP/1.1 server: answers every request on a connection (keep-alive) with `body_size`
// bytes; counts the bytes it received and sent, and the connections it accepted.
class Server {
 public:
  Server(const char* ip, bool v6, size_t body_size, int port = 0) : body_size_(body_size) {
    fd_ = Listen(ip, v6, port, &port_);
    ok_ = fd_ >= 0;
    if (ok_) thread_ = std::thread([this] { Serve(); });
  }
  ~Server() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return ok_; }
  int port() const { return port_; }
  uint64_t received() const { return received_; }
  uint64_t sent() const { return sent_; }
  int connections() const { return connections_; }

 private:
  void Serve() {
    while (true) {
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      ++connections_;
      std::string buf;
      char chunk[65536];
      while (true) {
        ssize_t n = recv(c, chunk, sizeof(chunk), 0);
        if (n <= 0) break;
        received_ += static_cast<uint64_t>(n);
        buf.append(chunk, static_cast<size_t>(n));
        size_t end;
        while ((end = buf.find("\r\n\r\n")) != std::string::npos) {
          buf.erase(0, end + 4);
          std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body_size_) +
                             "\r\nContent-Type: application/octet-stream\r\n\r\n";
          sent_ += SendAll(c, head.data(), head.size());
          std::string body(std::min<size_t>(body_size_, 1 << 20), 'x');
          for (size_t left = body_size_; left > 0;) {
            size_t n2 = std::min(left, body.size());
            sent_ += SendAll(c, body.data(), n2);
            left -= n2;
          }
        }
      }
      close(c);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  bool ok_ = false;
  size_t body_size_;
  std::atomic<uint64_t> received_{0}, sent_{0};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// The front of a server that speaks a protocol of its own (TLS): listens on `ip`, relays each
// connection to 127.0.0.1:`backend_port`, and counts the bytes the client side sent and
// received. WaitIdle() returns once every accepted connection is closed both ways, so the
// counts are final.
class Forwarder {
 public:
  Forwarder(const char* ip, int backend_port) : backend_port_(backend_port) {
    fd_ = Listen(ip, false, 0, &port_);
    if (fd_ >= 0) thread_ = std::thread([this] { Accept(); });
  }
  ~Forwarder() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) thread_.join();
    for (std::thread& t : connections_) t.join();
  }
  bool ok() const { return fd_ >= 0; }
  int port() const { return port_; }
  uint64_t received() const { return received_; }
  uint64_t sent() const { return sent_; }
  int accepted() const { return accepted_; }
  bool WaitIdle(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, timeout, [this] { return open_ == 0; });
  }

 private:
  void Accept() {
    while (true) {
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++open_;
        ++accepted_;
      }
      connections_.emplace_back([this, c] { Relay(c); });
    }
  }
  void Relay(int client) {
    int backend = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(backend_port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(backend, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      bool open[2] = {true, true};  // client -> backend, backend -> client
      while (open[0] || open[1]) {
        pollfd fds[2] = {{open[0] ? client : -1, POLLIN, 0}, {open[1] ? backend : -1, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) break;
        for (int i = 0; i < 2; ++i) {
          if (!open[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          char buf[65536];
          ssize_t n = recv(fds[i].fd, buf, sizeof(buf), 0);
          int to = i == 0 ? backend : client;
          if (n <= 0) {
            shutdown(to, SHUT_WR);
            open[i] = false;
            continue;
          }
          if (i == 0) received_ += static_cast<uint64_t>(n);
          uint64_t w = SendAll(to, buf, static_cast<size_t>(n));
          if (i == 1) sent_ += w;
        }
      }
    }
    close(backend);
    close(client);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--open_ == 0) idle_.notify_all();
  }
  int fd_ = -1;
  int port_ = 0;
  int backend_port_;
  std::atomic<uint64_t> received_{0}, sent_{0};
  std::mutex mutex_;
  std::condition_variable idle_;
  int open_ = 0;
  int accepted_ = 0;
  std::thread thread_;
  std::vector<std::thread> connections_;
};

struct GanderRun {
  int status = -1;
  std::string out;            // stdout and stderr
  std::vector<json> network;  // the audit log's network events
};

struct GanderOptions {
  std::string workspace;                // default: the run's own temporary directory
  std::vector<std::string> wrapper;     // argv before gander's (e.g. a mount namespace)
  bool as_nobody = false;               // as uid 65534 (needs root; the workspace must be theirs)
  std::string gander = GANDER_BIN;      // a copy uid 65534 can run, when the build tree is private
  std::vector<std::string> flags = {};  // more `gander run` flags (e.g. --mode monitor)
  std::string audit_log = {};           // default: in the run's own temporary directory
};

constexpr uid_t kNobody = 65534;

// Makes `options` run gander as uid 65534: a copy of gander in options.workspace (the build
// tree may be private to the user) and the workspace theirs. Needs root.
inline void RunAsNobody(GanderOptions& options) {
  options.as_nobody = true;
  options.gander = options.workspace + "/gander";
  std::filesystem::copy_file(GANDER_BIN, options.gander);
  ASSERT_EQ(chown(options.workspace.c_str(), kNobody, kNobody), 0);
}

inline std::string TempDir() {
  char dir[] = "/tmp/gander-egress-test-XXXXXX";
  return mkdtemp(dir) ? dir : "";
}

inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// gander's own start-up warnings (what this host cannot enforce, a workspace shown read-only)
// are asserted by the limits and home tests; here `out` is the program's output, as the
// egress tests compare it.
inline std::string WithoutStartNotices(const std::string& out) {
  std::string kept;
  size_t at = 0;
  while (at < out.size()) {
    size_t end = out.find('\n', at);
    size_t next = end == std::string::npos ? out.size() : end + 1;
    std::string_view line(out.data() + at, next - at);
    if (!line.starts_with("gander: warning: ")) kept.append(line);
    at = next;
  }
  return kept;
}

// Runs `gander run` with `policy`, its stdout and stderr together in `out`. Its stdin is a pipe
// held open until it exited: at stdin EOF gander would end the extension after 1 s, as it
// does when Goose closes the session.
inline GanderRun Gander(const std::string& policy, const std::vector<std::string>& command,
                        const GanderOptions& opts = {}) {
  std::string dir = TempDir();
  std::ofstream(dir + "/p.yaml") << policy;
  const std::string audit = opts.audit_log.empty() ? dir + "/audit.jsonl" : opts.audit_log;
  // --collector off: the audit log is read right after, and no collector may outlive the test.
  std::vector<std::string> argv = opts.wrapper;
  if (opts.as_nobody) {
    if (chown(dir.c_str(), kNobody, kNobody) != 0) return {};
    argv.insert(argv.end(),
                {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
  }
  for (const std::string& a : {opts.gander, std::string("run"), std::string("--collector"),
                               std::string("off"), std::string("--policy"), dir + "/p.yaml"}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), opts.flags.begin(), opts.flags.end());
  for (const std::string& a :
       {std::string("--workspace"), opts.workspace.empty() ? dir : opts.workspace,
        std::string("--audit-log"), audit, std::string("--")}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), command.begin(), command.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // uid 65534 gets a HOME of its own (gander reads its config dir there).
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (!opts.as_nobody || (!v.starts_with("HOME=") && !v.starts_with("XDG_"))) env.push_back(v);
  }
  // A home of its own, apart from the workspace: a workspace that holds the home is read-only.
  std::string home;
  if (opts.as_nobody) {
    home = TempDir();
    if (home.empty() || chown(home.c_str(), kNobody, kNobody) != 0) return {};
    env.push_back("HOME=" + home);
  }
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  GanderRun run;
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return run;
  if (pipe2(out, O_CLOEXEC) != 0) return run;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0) run.out.append(buf, static_cast<size_t>(n));
  close(out[0]);
  run.out = WithoutStartNotices(run.out);
  int st = 0;
  if (pid > 0 && waitpid(pid, &st, 0) == pid) run.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  close(in[1]);
  std::ifstream log(audit);
  std::string line;
  while (std::getline(log, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j["kind"] == "network") run.network.push_back(j["network"]);
  }
  if (std::system(("rm -rf " + dir + (home.empty() ? "" : " " + home)).c_str()) != 0) {
    run.out += "(cleanup failed)";
  }
  return run;
}

inline std::string Policy(const std::string& allow) {
  return "version: 1\nextends: default\nnetwork:\n  allow:\n" + allow;
}

inline bool HaveCurl() { return access("/usr/bin/curl", X_OK) == 0; }

// Can Landlock handle TCP connect and bind (ABI 4+), as the broker needs without namespaces?
inline bool LandlockNetwork() {
  long abi = syscall(444 /* landlock_create_ruleset */, nullptr, 0, 1 /* VERSION */);
  return abi >= 4;
}

// Under CI=true a missing kernel feature fails the test; elsewhere it skips with the reason.
inline void SkipOrFail(const std::string& why) {
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL() << "CI=true: cannot skip: " << why;
  GTEST_SKIP() << why;
}

}  // namespace gander::egress_suite
