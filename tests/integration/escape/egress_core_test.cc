// The egress broker's connect semantics end to end, with egress_client (non-blocking connects
// by the dozen, results read from SO_ERROR as event loops do) inside a real sandbox and
// "remote" servers on 127.0.0.2: parallel connections, a refusal and a time-out reported
// asynchronously, the policy's errno for refused destinations.
#include <netdb.h>
#include <sys/syscall.h>

#include <cstring>
#include <filesystem>
#include <tuple>

#include "egress_fixture.h"

namespace {

using namespace gander::egress_suite;

// A TCP socket on 127.0.0.2, any port: listening with `backlog`, or only bound (backlog < 0).
int Socket127002(int backlog, int* port) { return Listen("127.0.0.2", false, 0, port, backlog); }

// Echoes every byte back, a thread per connection; counts connections.
class EchoServer {
 public:
  EchoServer() {
    fd_ = Socket127002(128, &port_);
    if (fd_ >= 0) thread_ = std::thread([this] { Serve(); });
  }
  ~EchoServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) thread_.join();
    for (auto& t : workers_) t.join();
  }
  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  void Serve() {
    while (true) {
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      ++connections_;
      workers_.emplace_back([c] {
        char buf[4096];
        ssize_t n;
        while ((n = recv(c, buf, sizeof(buf), 0)) > 0) {
          if (send(c, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
        }
        close(c);
      });
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::thread thread_;
  std::vector<std::thread> workers_;
};

GanderOptions WithFlags(std::vector<std::string> flags) {
  GanderOptions opts;
  opts.flags = std::move(flags);
  return opts;
}

std::string Allow(int port) {
  return "version: 1\nextends: default\nnetwork:\n  allow:\n    - {host: 127.0.0.2, ports: [" +
         std::to_string(port) + "]}\n";
}

std::vector<std::string> Client(int port, int count, int syncnt = 0) {
  std::vector<std::string> argv{EGRESS_CLIENT_BIN, "127.0.0.2", std::to_string(port),
                                std::to_string(count)};
  if (syncnt > 0) argv.push_back(std::to_string(syncnt));
  return argv;
}

TEST(EgressCore, ManyParallelNonBlockingConnects) {
  EchoServer server;
  ASSERT_GT(server.port(), 0);
  GanderRun run = Gander(Allow(server.port()), Client(server.port(), 64));
  ASSERT_EQ(run.status, 0) << run.out;
  // (How many were still pending right after the connects depends on how fast the server
  // answered: not checked here.)
  EXPECT_EQ(run.out.rfind("connect=EINPROGRESS:64 result=OK:64 echoed=64 ", 0), 0u) << run.out;
  EXPECT_EQ(server.connections(), 64);
  ASSERT_EQ(run.network.size(), 64u);
  for (const json& n : run.network) {
    EXPECT_EQ(n["result"], "allowed");
    EXPECT_EQ(n["bytes_out"], 5);
    EXPECT_EQ(n["bytes_in"], 5);
  }
}

TEST(EgressCore, NonBlockingRefusalReadFromSoError) {
  int port = 0;
  int reserved = Socket127002(-1, &port);  // bound, never listening: connects are refused
  ASSERT_GE(reserved, 0);
  GanderRun run = Gander(Allow(port), Client(port, 8));
  close(reserved);
  ASSERT_EQ(run.status, 0) << run.out;
  // Never a connected socket, never another error.
  EXPECT_EQ(run.out.rfind("connect=EINPROGRESS:8 result=ECONNREFUSED:8 echoed=0 ", 0), 0u)
      << run.out;
  ASSERT_EQ(run.network.size(), 8u);
  for (const json& n : run.network) EXPECT_EQ(n["errno"], ECONNREFUSED);
}

TEST(EgressCore, NonBlockingTimeoutReadFromSoError) {
  // A destination that never answers: a listener whose accept queue is full drops every SYN.
  int port = 0;
  int full = Socket127002(1, &port);
  ASSERT_GE(full, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
  a.sin_port = htons(static_cast<uint16_t>(port));
  std::vector<int> fillers;
  for (int i = 0; i < 2; ++i) {
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(c, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    fillers.push_back(c);
  }
  // TCP_SYNCNT 1: the client's connects give up after about 3 s, the broker's with them.
  GanderRun run = Gander(Allow(port), Client(port, 4, 1));
  for (int c : fillers) close(c);
  close(full);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "connect=EINPROGRESS:4 result=ETIMEDOUT:4 echoed=0 pending_after_connect=4\n");
  ASSERT_EQ(run.network.size(), 4u);
  for (const json& n : run.network) EXPECT_EQ(n["errno"], ETIMEDOUT);
}

TEST(EgressCore, PolicyNamesTheErrnoOfRefusals) {
  // 192.0.2.1 (TEST-NET-1): not on the list, so refused before anything leaves.
  GanderRun run = Gander(
      "version: 1\nextends: default\nnetwork:\n  deny_errno: EACCES\n  allow:\n"
      "    - {host: 127.0.0.2, ports: [443]}\n",
      {EGRESS_CLIENT_BIN, "192.0.2.1", "443", "2"});
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "connect=EACCES:2 result=EACCES:2 echoed=0 pending_after_connect=0\n");
  ASSERT_EQ(run.network.size(), 2u);
  for (const json& n : run.network) {
    EXPECT_EQ(n["result"], "denied");
    EXPECT_EQ(n["errno"], EACCES);
    EXPECT_EQ(n["ip"], "192.0.2.1");
  }
}

TEST(EgressCore, BadDenyErrnoStopsBeforeAnythingStarts) {
  GanderRun run = Gander("version: 1\nnetwork:\n  deny_errno: EWHAT\n", {"/bin/true"});
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("p.yaml:3:15: network.deny_errno: expected one of: ECONNREFUSED"),
            std::string::npos)
      << run.out;
}

TEST(EgressCore, MonitorModeLogsWouldDenyAndLetsItThrough) {
  EchoServer server;
  ASSERT_GT(server.port(), 0);
  std::string port = std::to_string(server.port());
  // The trial policy allows the host, then denies it (deny wins): under --mode monitor the
  // trial's denies are logged, not enforced.
  GanderRun run = Gander(
      "version: 1\nextends: default\nnetwork:\n  allow:\n    - {host: 127.0.0.2, "
      "ports: [" +
          port + "]}\n  deny:\n    - {host: 127.0.0.2, ports: [" + port + "]}\n",
      Client(server.port(), 1), WithFlags({"--mode", "monitor"}));
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("connect=EINPROGRESS:1 result=OK:1 echoed=1"), std::string::npos)
      << run.out;
  ASSERT_EQ(run.network.size(), 1u) << run.out;
  EXPECT_EQ(run.network[0]["result"], "would_deny");
  EXPECT_EQ(run.network[0]["bytes_out"], 5);
  // Enforced, the same policy refuses it.
  GanderRun enforced = Gander(
      "version: 1\nextends: default\nnetwork:\n  allow:\n    - {host: "
      "127.0.0.2, ports: [" +
          port + "]}\n  deny:\n    - {host: 127.0.0.2, ports: [" + port + "]}\n",
      Client(server.port(), 1));
  EXPECT_NE(enforced.out.find("result=ECONNREFUSED:1"), std::string::npos) << enforced.out;
}

// A refusing destination: every non-blocking connect ends in ECONNREFUSED, read from SO_ERROR
// or from a second connect, while the client's thread polls the socket from the moment
// connect() returned (the refusal is delivered as the packet a refusing destination sends,
// never through an intermediate state); every blocking connect too. IPv4 and IPv6, as the
// current user and (as root) as uid 65534. Not timed.
class EgressRefused : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    auto [as_nobody, v6] = GetParam();
    if (as_nobody && geteuid() != 0) GTEST_SKIP() << "the uid 65534 run needs root";
    if (as_nobody && std::system("/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups -- "
                                 "/usr/bin/unshare --user /bin/true >/dev/null 2>&1") != 0) {
      return SkipOrFail("uid 65534 cannot create a user namespace here");
    }
    ws_ = TempDir();
    ASSERT_FALSE(ws_.empty());
    client_ = ws_ + "/egress_client";
    std::filesystem::copy_file(EGRESS_CLIENT_BIN, client_);
    options_.workspace = ws_;
    if (as_nobody) RunAsNobody(options_);
  }
  void TearDown() override {
    if (!ws_.empty()) std::filesystem::remove_all(ws_);
  }
  std::string ws_, client_;
  GanderOptions options_;
};

TEST_P(EgressRefused, EveryConnectIsRefusedExactly) {
  bool v6 = std::get<1>(GetParam());
  const char* host = v6 ? "::1" : "127.0.0.2";
  int port = 0;
  int reserved = Listen(host, v6, 0, &port, -1);  // bound, never listening: connects are refused
  ASSERT_GE(reserved, 0);
  std::string quoted = v6 ? "\"::1\"" : host;
  GanderRun run =
      Gander(Policy("    - {host: " + quoted + ", ports: [" + std::to_string(port) + "]}\n"),
             {client_, "--failing", host, std::to_string(port), "300"}, options_);
  close(reserved);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out,
            "nonblocking=connect:EINPROGRESS:300,retry:ECONNREFUSED:150,so_error:ECONNREFUSED:150 "
            "blocking=ECONNREFUSED:300\n");
  // One event per connection gander made: the retries were answered by the kernel.
  EXPECT_EQ(run.network.size(), 600u);
  for (const json& n : run.network) EXPECT_EQ(n["errno"], ECONNREFUSED) << n;
}

INSTANTIATE_TEST_SUITE_P(Users, EgressRefused,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "uid65534"
                                                                      : "current_user") +
                                  (std::get<1>(info.param) ? "_ipv6" : "_ipv4");
                         });

// Unreachable destinations: gander runs in a network namespace whose default route leads to a
// router namespace that answers ICMP host unreachable (an `unreachable` route) or net
// unreachable (no route at all); every connect, non-blocking or blocking, reads exactly that
// errno. Few connects: the router rate-limits its ICMP errors (a lost one is answered at the
// SYN's retransmission).
class EgressUnreachable : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the router namespaces need root";
    if (std::system("command -v ip >/dev/null") != 0) return SkipOrFail("no `ip` command");
    std::string id = std::to_string(getpid());
    a_ = "gh5r-a-" + id;
    r_ = "gh5r-r-" + id;
    std::string setup =
        "set -e; ip netns add " + a_ + "; ip netns add " + r_ + "; ip link add gh5ra" + id +
        " netns " + a_ + " type veth peer name gh5rr" + id + " netns " + r_ + "; ip -n " + a_ +
        " link set lo up; ip -n " + r_ + " link set lo up; ip -n " + a_ +
        " addr add 10.203.0.1/24 dev gh5ra" + id + "; ip -n " + a_ + " link set gh5ra" + id +
        " up; ip -n " + r_ + " addr add 10.203.0.2/24 dev gh5rr" + id + "; ip -n " + r_ +
        " link set gh5rr" + id + " up; ip -n " + a_ + " route add default via 10.203.0.2; " +
        "ip netns exec " + r_ +
        " sysctl -qw net.ipv4.ip_forward=1 net.ipv4.icmp_ratelimit=0; ip -n " + r_ +
        " route add unreachable 10.204.0.0/24; ip -n " + a_ + " addr add fd00:203::1/64 dev gh5ra" +
        id + " nodad; ip -n " + r_ + " addr add fd00:203::2/64 dev gh5rr" + id + " nodad; ip -n " +
        a_ + " -6 route add default via fd00:203::2; ip netns exec " + r_ +
        " sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv6.icmp.ratelimit=0; ip -n " + r_ +
        " -6 route add prohibit fd00:206::/64";
    ready_ = std::system(("(" + setup + ") >/dev/null 2>&1").c_str()) == 0;
    if (!ready_) return SkipOrFail("cannot make the router namespaces (ip netns, veth)");
    ws_ = TempDir();
    ASSERT_FALSE(ws_.empty());
    client_ = ws_ + "/egress_client";
    std::filesystem::copy_file(EGRESS_CLIENT_BIN, client_);
    options_.workspace = ws_;
    options_.wrapper = {"/usr/sbin/ip", "netns", "exec", a_};
    if (GetParam()) RunAsNobody(options_);
  }
  void TearDown() override {
    if (!a_.empty()) {
      std::string down = "ip netns del " + a_ + "; ip netns del " + r_;
      EXPECT_EQ(std::system(("(" + down + ") >/dev/null 2>&1").c_str()), 0);
    }
    if (!ws_.empty()) std::filesystem::remove_all(ws_);
  }
  void Expect(const char* host, const char* error, int errno_value) {
    std::string quoted = std::string(host).find(':') != std::string::npos
                             ? "\"" + std::string(host) + "\""
                             : std::string(host);
    GanderRun run = Gander(Policy("    - {host: " + quoted + ", ports: [80]}\n"),
                           {client_, "--failing", host, "80", "4"}, options_);
    ASSERT_EQ(run.status, 0) << run.out;
    std::string e = error;
    EXPECT_EQ(run.out, "nonblocking=connect:EINPROGRESS:4,retry:" + e + ":2,so_error:" + e +
                           ":2 blocking=" + e + ":4\n");
    EXPECT_EQ(run.network.size(), 8u);
    for (const json& n : run.network) EXPECT_EQ(n["errno"], errno_value) << n;
  }
  std::string a_, r_, ws_, client_;
  bool ready_ = false;
  GanderOptions options_;
};

TEST_P(EgressUnreachable, HostUnreachable) { Expect("10.204.0.5", "EHOSTUNREACH", EHOSTUNREACH); }

TEST_P(EgressUnreachable, NetUnreachable) { Expect("10.205.0.5", "ENETUNREACH", ENETUNREACH); }

// ICMPv6: no route at the router (ENETUNREACH), a `prohibit` route (administratively
// prohibited: EACCES).
TEST_P(EgressUnreachable, NoRouteIpv6) { Expect("fd00:205::5", "ENETUNREACH", ENETUNREACH); }

TEST_P(EgressUnreachable, ProhibitedIpv6) { Expect("fd00:206::5", "EACCES", EACCES); }

INSTANTIATE_TEST_SUITE_P(Users, EgressUnreachable, ::testing::Bool(), [](const auto& info) {
  return std::string(info.param ? "uid65534" : "current_user");
});

TEST(EgressCore, BrokerWithoutNamespaces) {
  if (!LandlockNetwork()) return SkipOrFail("Landlock ABI 4 (TCP rules) is not available");
  EchoServer server;
  ASSERT_GT(server.port(), 0);
  GanderRun run =
      Gander(Allow(server.port()), Client(server.port(), 16), WithFlags({"--no-namespaces"}));
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("connect=EINPROGRESS:16 result=OK:16 echoed=16"), std::string::npos)
      << run.out;
  EXPECT_EQ(server.connections(), 16);
  ASSERT_EQ(run.network.size(), 16u) << run.out;
  for (const json& n : run.network) {
    EXPECT_EQ(n["result"], "allowed");
    EXPECT_EQ(n["bytes_in"], 5);
  }
  // Not on the list: refused, nothing reaches the server.
  EchoServer other;
  GanderRun denied =
      Gander(Allow(server.port()), Client(other.port(), 1), WithFlags({"--no-namespaces"}));
  EXPECT_NE(denied.out.find("connect=ECONNREFUSED:1"), std::string::npos) << denied.out;
  EXPECT_EQ(other.connections(), 0);
}

TEST(EgressCore, DnsOverTcpServedByTheStub) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* result = nullptr;
  if (getaddrinfo(host, nullptr, &hints, &result) != 0) {
    return SkipOrFail(std::string("the host's name '") + host + "' does not resolve here");
  }
  char ip[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(result->ai_addr)->sin_addr, ip, sizeof(ip));
  freeaddrinfo(result);
  std::string policy =
      "version: 1\nextends: default\nnetwork:\n  allow:\n    - {host: " + std::string(host) +
      ", ports: [443]}\n";
  GanderRun run = Gander(policy, {EGRESS_CLIENT_BIN, "--dns-tcp", host});
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out.substr(0, run.out.find(' ')), "rcode=0") << run.out;
  EXPECT_NE(run.out.find(std::string("first=") + ip), std::string::npos) << run.out;
  GanderRun refused = Gander(policy, {EGRESS_CLIENT_BIN, "--dns-tcp", "c2.evil.invalid"});
  EXPECT_EQ(refused.out, "rcode=5 answers=0 first=-\n");
  ASSERT_EQ(refused.network.size(), 1u) << refused.out;
  EXPECT_EQ(refused.network[0]["transport"], "dns");
  EXPECT_EQ(refused.network[0]["result"], "denied");
  EXPECT_EQ(refused.network[0]["host"], "c2.evil.invalid");
}

}  // namespace
