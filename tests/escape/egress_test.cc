// The egress broker end to end: servers on 127.0.0.2 and ::1 ("remote" hosts on this machine),
// curl inside the sandbox, byte counts in the audit log compared with what the server saw.
// Runs as the current user (the escape suite covers uid 65534 for the denials).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using json = nlohmann::json;

// A tiny HTTP/1.1 server: answers every request on a connection (keep-alive) with `body_size`
// bytes; counts the bytes it received and sent, per connection.
class Server {
 public:
  Server(const char* ip, bool v6, size_t body_size) : body_size_(body_size) {
    fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_storage ss{};
    socklen_t len;
    if (v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      inet_pton(AF_INET6, ip, &a->sin6_addr);
      len = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      inet_pton(AF_INET, ip, &a->sin_addr);
      len = sizeof(*a);
    }
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) == 0 && listen(fd_, 64) == 0;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                     : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
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
          sent_ += Send(c, head.data(), head.size());
          std::string body(std::min<size_t>(body_size_, 1 << 20), 'x');
          for (size_t left = body_size_; left > 0;) {
            size_t n2 = std::min(left, body.size());
            sent_ += Send(c, body.data(), n2);
            left -= n2;
          }
        }
      }
      close(c);
    }
  }
  static uint64_t Send(int c, const char* p, size_t n) {
    uint64_t total = 0;
    while (total < n) {
      ssize_t w = send(c, p + total, n - total, MSG_NOSIGNAL);
      if (w <= 0) break;
      total += static_cast<uint64_t>(w);
    }
    return total;
  }
  int fd_ = -1;
  int port_ = 0;
  bool ok_ = false;
  size_t body_size_;
  std::atomic<uint64_t> received_{0}, sent_{0};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

struct GanderRun {
  int status = -1;
  std::string out;
  std::vector<json> network;  // the audit log's network events
};

std::string TempDir() {
  char dir[] = "/tmp/gander-egress-test-XXXXXX";
  return mkdtemp(dir) ? dir : "";
}

GanderRun Gander(const std::string& policy, const std::vector<std::string>& command) {
  std::string dir = TempDir();
  std::ofstream(dir + "/p.yaml") << policy;
  // --collector off: the audit log is read right after, and no collector may outlive the test.
  std::string cmd = std::string(GANDER_BIN) + " run --collector off --policy " + dir +
                    "/p.yaml --workspace " + dir + " --audit-log " + dir + "/audit.jsonl --";
  for (const auto& a : command) cmd += " '" + a + "'";
  cmd += " 2>&1";
  GanderRun run;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) run.out.append(buf, n);
    int st = pclose(f);
    run.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::ifstream log(dir + "/audit.jsonl");
  std::string line;
  while (std::getline(log, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j["kind"] == "network") run.network.push_back(j["network"]);
  }
  if (std::system(("rm -rf " + dir).c_str()) != 0) run.out += "(cleanup failed)";
  return run;
}

std::string Policy(const std::string& allow) {
  return "version: 1\nextends: default\nnetwork:\n  allow:\n" + allow;
}

bool HaveCurl() { return access("/usr/bin/curl", X_OK) == 0; }

class EgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveCurl()) GTEST_SKIP() << "curl is not installed";
  }
};

TEST_F(EgressTest, AllowedHostIsBrokeredWithExactByteCounts) {
  Server server("127.0.0.2", false, 1000);
  ASSERT_TRUE(server.ok());
  std::string port = std::to_string(server.port());
  GanderRun run = Gander(Policy("    - {host: 127.0.0.2, ports: [" + port + "]}\n"),
                         {"/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                          "http://127.0.0.2:" + port + "/a"});
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "200");
  ASSERT_EQ(run.network.size(), 1u) << run.out;
  const json& n = run.network[0];
  EXPECT_EQ(n["result"], "allowed");
  EXPECT_EQ(n["ip"], "127.0.0.2");
  EXPECT_EQ(n["port"], server.port());
  EXPECT_EQ(n["rule"], "127.0.0.2");
  EXPECT_EQ(n["errno"], 0);
  EXPECT_EQ(n["bytes_out"].get<uint64_t>(), server.received());
  EXPECT_EQ(n["bytes_in"].get<uint64_t>(), server.sent());
}

TEST_F(EgressTest, KeepAliveAndHundredMegabytes) {
  Server server("127.0.0.2", false, 100 << 20);
  ASSERT_TRUE(server.ok());
  std::string port = std::to_string(server.port());
  std::string url = "http://127.0.0.2:" + port;
  // Two requests on one connection (curl reuses it), 200 MiB in total.
  GanderRun run = Gander(Policy("    - {host: 127.0.0.2, ports: [" + port + "]}\n"),
                         {"/usr/bin/curl", "-sS", "-o", "/dev/null", "-o", "/dev/null", "-w",
                          "%{num_connects} ", url + "/1", url + "/2"});
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(server.connections(), 1);
  ASSERT_EQ(run.network.size(), 1u) << run.out;
  EXPECT_EQ(run.network[0]["bytes_in"].get<uint64_t>(), server.sent());
  EXPECT_GT(server.sent(), 2ull * (100 << 20));
  EXPECT_EQ(run.network[0]["bytes_out"].get<uint64_t>(), server.received());
}

TEST_F(EgressTest, Ipv6) {
  Server server("::1", true, 4096);
  if (!server.ok()) GTEST_SKIP() << "no ::1 on this host";
  std::string port = std::to_string(server.port());
  GanderRun run = Gander(Policy("    - {host: \"::1\", ports: [" + port + "]}\n"),
                         {"/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                          "http://[::1]:" + port + "/"});
  ASSERT_EQ(run.status, 0) << run.out;
  ASSERT_EQ(run.network.size(), 1u);
  EXPECT_EQ(run.network[0]["ip"], "::1");
  EXPECT_EQ(run.network[0]["bytes_in"].get<uint64_t>(), server.sent());
}

TEST_F(EgressTest, UnlistedHostLoopbackAndOtherPortsFail) {
  Server server("127.0.0.2", false, 10);
  ASSERT_TRUE(server.ok());
  std::string port = std::to_string(server.port());
  // Allowed: another port only. 127.0.0.2 unnamed is the sandbox's own loopback.
  GanderRun run =
      Gander(Policy("    - {host: 127.0.0.2, ports: [1]}\n"),
             {"/usr/bin/curl", "-sS", "--max-time", "5", "http://127.0.0.2:" + port + "/"});
  EXPECT_EQ(run.status, 7) << run.out;  // couldn't connect
  EXPECT_EQ(server.connections(), 0);
}

TEST_F(EgressTest, RefusedDestinationIsReportedByConnect) {
  // Allowed, but nothing listens: curl sees ECONNREFUSED as it would without gander.
  GanderRun run = Gander(Policy("    - {host: 127.0.0.2, ports: [9]}\n"),
                         {"/usr/bin/curl", "-sS", "--max-time", "5", "http://127.0.0.2:9/"});
  EXPECT_EQ(run.status, 7) << run.out;
  ASSERT_EQ(run.network.size(), 1u) << run.out;
  EXPECT_EQ(run.network[0]["errno_name"], "ECONNREFUSED");
}

TEST_F(EgressTest, DeniedRemoteTcpAndUdpAreEvents) {
  GanderRun run = Gander(Policy("    - {host: 127.0.0.2, ports: [443]}\n"),
                         {"/usr/bin/curl", "-sS", "--max-time", "5", "http://192.0.2.1:80/"});
  EXPECT_EQ(run.status, 7) << run.out;
  ASSERT_EQ(run.network.size(), 1u) << run.out;
  EXPECT_EQ(run.network[0]["result"], "denied");
  EXPECT_EQ(run.network[0]["errno_name"], "ECONNREFUSED");
  EXPECT_EQ(run.network[0]["ip"], "192.0.2.1");
}

TEST_F(EgressTest, StubRefusesNamesOutsideTheAllowlist) {
  GanderRun run = Gander(Policy("    - {host: api.example.com, ports: [443]}\n"),
                         {"/usr/bin/curl", "-sS", "--max-time", "5", "http://c2.evil.invalid/"});
  EXPECT_EQ(run.status, 6) << run.out;  // couldn't resolve host
  bool refused = false;
  for (const json& n : run.network) {
    if (n["transport"] == "dns" && n["host"] == "c2.evil.invalid") {
      refused = n["result"] == "denied";
    }
  }
  EXPECT_TRUE(refused) << run.out;
}

}  // namespace
