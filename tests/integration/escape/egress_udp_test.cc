// UDP allow rules (`protocol: udp`) end to end: egress_udp_client inside a real sandbox talks to
// UDP echo servers on this machine's other addresses (127.0.0.2, ::1, and its non-loopback
// IPv4/IPv6 addresses when it has them, which the relay adds to the sandbox's loopback), as
// the current user and, as root, as uid 65534. Checked: the echo arrives from the address sent
// to, connected and unconnected; the event's datagram and byte counts equal what the server
// saw; an unlisted port or host is refused at once with an event; `protocol: udp` does not
// allow TCP and a TCP rule does not allow UDP; a bad `protocol:` is an error, exit 2. Flows:
// one idle for GANDER_UDP_IDLE_MS ends with its event while the extension runs; over
// GANDER_UDP_MAX_FLOWS the least recently used are evicted, each with its event; --mode
// monitor logs would_deny with counts (as TCP); the echo works under --backend gvisor.
#include <ifaddrs.h>
#include <net/if.h>

#include <filesystem>

#include "egress_fixture.h"

namespace gander::egress_suite {
namespace {

namespace fs = std::filesystem;

// A UDP socket on `ip`, any port, that echoes every datagram and counts what it saw.
class UdpEcho {
 public:
  explicit UdpEcho(const std::string& ip) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, ip.c_str(), &in->sin_addr) == 1) {
      in->sin_family = AF_INET;
      len = sizeof(*in);
    } else if (inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr) == 1) {
      in6->sin6_family = AF_INET6;
      len = sizeof(*in6);
    }
    fd_ = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0 || len == 0 || bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) return;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    port_ = ntohs(ss.ss_family == AF_INET ? in->sin_port : in6->sin6_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~UdpEcho() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return port_ > 0; }
  int port() const { return port_; }
  uint64_t datagrams() const { return datagrams_; }
  uint64_t bytes() const { return bytes_; }  // received, and echoed

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) != 1) continue;
      char buf[65536];
      sockaddr_storage from{};
      socklen_t from_len = sizeof(from);
      ssize_t n = recvfrom(fd_, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) continue;
      ++datagrams_;
      bytes_ += static_cast<uint64_t>(n);
      sendto(fd_, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), from_len);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> datagrams_{0}, bytes_{0};
  std::thread thread_;
};

// This machine's first non-loopback, non-link-local address of `family`, or "".
std::string HostAddressOf(int family) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != family || (i->ifa_flags & IFF_LOOPBACK) ||
        !(i->ifa_flags & IFF_UP)) {
      continue;
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text,
                sizeof(text));
    } else {
      const in6_addr& a = reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(&a)) continue;
      inet_ntop(AF_INET6, &a, text, sizeof(text));
    }
    found = text;
  }
  freeifaddrs(list);
  return found;
}

bool RunQuiet(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string Rule(const std::string& host, int port, const std::string& protocol = "udp") {
  std::string quoted = host.find(':') != std::string::npos ? "\"" + host + "\"" : host;
  return "    - {host: " + quoted + ", ports: [" + std::to_string(port) + "]" +
         (protocol.empty() ? "" : ", protocol: " + protocol) + "}\n";
}

// As the current user, and (as root) as uid 65534.
class EgressUdp : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    bool as_nobody = GetParam();
    if (as_nobody && geteuid() != 0) GTEST_SKIP() << "the uid 65534 run needs root";
    if (as_nobody && !RunQuiet("/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups -- "
                               "/usr/bin/unshare --user /bin/true")) {
      GTEST_SKIP() << "uid 65534 cannot create a user namespace here (the relay needs one)";
    }
    ws_ = TempDir();
    ASSERT_FALSE(ws_.empty());
    client_ = ws_ + "/egress_udp_client";
    fs::copy_file(EGRESS_UDP_CLIENT_BIN, client_);
    options_.workspace = ws_;
    if (as_nobody) RunAsNobody(options_);
  }
  void TearDown() override {
    if (!ws_.empty()) fs::remove_all(ws_);
  }
  GanderRun Run(const std::string& allow, const std::vector<std::string>& args) {
    std::vector<std::string> command{client_};
    command.insert(command.end(), args.begin(), args.end());
    return Gander(Policy(allow), command, options_);
  }
  static std::vector<json> Udp(const GanderRun& run) {
    std::vector<json> out;
    for (const json& n : run.network) {
      if (n["transport"] == "udp") out.push_back(n);
    }
    return out;
  }
  // Connected and unconnected, 5 datagrams each, to an echo server on `ip`.
  void EchoThrough(const std::string& ip) {
    UdpEcho echo(ip);
    if (!echo.ok()) GTEST_SKIP() << "cannot bind a UDP socket on " << ip;
    int port = echo.port();
    GanderRun run = Run(Rule(ip, port), {"connect", ip, std::to_string(port), "5"});
    ASSERT_EQ(run.status, 0) << run.out;
    // "datagram-0".."datagram-4": 10 bytes each.
    EXPECT_EQ(run.out, "send=OK:5 recv=5 bytes_out=50 bytes_in=50 from_ok=5\n");
    GanderRun unconnected = Run(Rule(ip, port), {"sendto", ip, std::to_string(port), "5"});
    ASSERT_EQ(unconnected.status, 0) << unconnected.out;
    EXPECT_EQ(unconnected.out, "send=OK:5 recv=5 bytes_out=50 bytes_in=50 from_ok=5\n");
    EXPECT_EQ(echo.datagrams(), 10u);
    EXPECT_EQ(echo.bytes(), 100u);
    for (const GanderRun* r : {&run, &unconnected}) {
      std::vector<json> udp = Udp(*r);
      ASSERT_EQ(udp.size(), 1u) << r->out;
      EXPECT_EQ(udp[0]["result"], "allowed");
      EXPECT_EQ(udp[0]["ip"], ip);
      EXPECT_EQ(udp[0]["port"], port);
      EXPECT_EQ(udp[0]["datagrams_out"], 5);
      EXPECT_EQ(udp[0]["datagrams_in"], 5);
      EXPECT_EQ(udp[0]["bytes_out"], 50);
      EXPECT_EQ(udp[0]["bytes_in"], 50);
    }
  }
  std::string ws_, client_;
  GanderOptions options_;
};

TEST_P(EgressUdp, AllowedEchoOnOtherLoopbackAddress) { EchoThrough("127.0.0.2"); }

TEST_P(EgressUdp, AllowedEchoIpv6Loopback) { EchoThrough("::1"); }

TEST_P(EgressUdp, AllowedEchoOnHostAddress) {
  std::string ip = HostAddressOf(AF_INET);
  if (ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  EchoThrough(ip);
}

TEST_P(EgressUdp, AllowedEchoOnHostIpv6Address) {
  std::string ip = HostAddressOf(AF_INET6);
  if (ip.empty()) GTEST_SKIP() << "this machine has no global IPv6 address";
  EchoThrough(ip);
}

TEST_P(EgressUdp, UnlistedPortOrHostRefusedAtOnce) {
  std::string ip = HostAddressOf(AF_INET);
  if (ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  UdpEcho allowed(ip), other(ip);
  ASSERT_TRUE(allowed.ok() && other.ok());
  std::string rule = Rule(ip, allowed.port());
  for (const char* mode : {"connect", "sendto"}) {
    // Another port of the allowed host.
    GanderRun port = Run(rule, {mode, ip, std::to_string(other.port()), "1"});
    ASSERT_EQ(port.status, 0) << port.out;
    EXPECT_EQ(port.out, "send=ECONNREFUSED:1 recv=0 bytes_out=0 bytes_in=0 from_ok=0\n");
    std::vector<json> udp = Udp(port);
    ASSERT_EQ(udp.size(), 1u) << port.out;
    EXPECT_EQ(udp[0]["result"], "denied");
    EXPECT_EQ(udp[0]["port"], other.port());
    EXPECT_EQ(udp[0]["syscall"], mode);
    // A host not on the list (TEST-NET-2), the allowed port.
    GanderRun host = Run(rule, {mode, "198.51.100.7", std::to_string(allowed.port()), "1"});
    EXPECT_EQ(host.out, "send=ECONNREFUSED:1 recv=0 bytes_out=0 bytes_in=0 from_ok=0\n");
    udp = Udp(host);
    ASSERT_EQ(udp.size(), 1u) << host.out;
    EXPECT_EQ(udp[0]["result"], "denied");
    EXPECT_EQ(udp[0]["ip"], "198.51.100.7");
  }
  EXPECT_EQ(other.datagrams(), 0u);
  EXPECT_EQ(allowed.datagrams(), 0u);
}

TEST_P(EgressUdp, ProtocolsDoNotCrossOver) {
  std::string ip = HostAddressOf(AF_INET);
  if (ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  UdpEcho echo(ip);
  int tcp_port = 0;
  int listener = Listen(ip.c_str(), false, echo.port(), &tcp_port);  // the same port, TCP
  ASSERT_TRUE(echo.ok());
  ASSERT_GE(listener, 0);
  std::string port = std::to_string(echo.port());
  // `protocol: udp` does not allow TCP to the same port...
  GanderRun tcp = Run(Rule(ip, echo.port(), "udp"), {"tcp", ip, port});
  EXPECT_EQ(tcp.out, "tcp=ECONNREFUSED\n");
  ASSERT_EQ(tcp.network.size(), 1u) << tcp.out;
  EXPECT_EQ(tcp.network[0]["transport"], "tcp");
  EXPECT_EQ(tcp.network[0]["result"], "denied");
  // ...and a rule without protocol (TCP) or `protocol: tcp` does not allow UDP.
  for (const char* protocol : {"", "tcp"}) {
    GanderRun udp = Run(Rule(ip, echo.port(), protocol), {"sendto", ip, port, "1"});
    EXPECT_EQ(udp.out, "send=ECONNREFUSED:1 recv=0 bytes_out=0 bytes_in=0 from_ok=0\n");
    ASSERT_EQ(Udp(udp).size(), 1u) << udp.out;
    EXPECT_EQ(Udp(udp)[0]["result"], "denied");
  }
  // Both rules: both work.
  GanderRun both =
      Run(Rule(ip, echo.port(), "udp") + Rule(ip, echo.port(), "tcp"), {"tcp", ip, port});
  EXPECT_EQ(both.out, "tcp=OK\n");
  close(listener);
  EXPECT_EQ(echo.datagrams(), 0u);
}

TEST_P(EgressUdp, DenyRuleWithoutProtocolRefusesUdp) {
  std::string ip = HostAddressOf(AF_INET);
  if (ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  UdpEcho echo(ip);
  ASSERT_TRUE(echo.ok());
  std::string port = std::to_string(echo.port());
  GanderRun run = Gander("version: 1\nextends: default\nnetwork:\n  allow:\n" +
                             Rule(ip, echo.port()) + "  deny:\n    - {host: " + ip + "}\n",
                         {client_, "sendto", ip, port, "1"}, options_);
  EXPECT_EQ(run.out, "send=ECONNREFUSED:1 recv=0 bytes_out=0 bytes_in=0 from_ok=0\n");
  std::vector<json> udp = Udp(run);
  ASSERT_EQ(udp.size(), 1u) << run.out;
  EXPECT_EQ(udp[0]["result"], "denied");
  EXPECT_EQ(udp[0]["rule"], ip);
  EXPECT_EQ(echo.datagrams(), 0u);
}

// The network events of the audit log at `path` so far.
std::vector<json> NetworkEventsIn(const std::string& path) {
  std::vector<json> out;
  std::ifstream log(path);
  std::string line;
  while (std::getline(log, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j["kind"] == "network") out.push_back(j["network"]);
  }
  return out;
}

// Sets an environment variable for one test (gander reads it; the tests run one at a time).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// A flow with no datagram for GANDER_UDP_IDLE_MS ends with its event while the extension
// still runs; the next datagram on the same socket starts a new flow.
TEST_P(EgressUdp, IdleFlowEndsWhileRunning) {
  UdpEcho echo("127.0.0.2");
  ASSERT_TRUE(echo.ok());
  ScopedEnv idle("GANDER_UDP_IDLE_MS", "500");
  std::string logs = TempDir();
  ASSERT_FALSE(logs.empty());
  if (options_.as_nobody) {
    ASSERT_EQ(chown(logs.c_str(), kNobody, kNobody), 0);
  }
  options_.audit_log = logs + "/audit.jsonl";
  std::string go = ws_ + "/go";
  GanderRun run;
  std::thread gander([&] {
    run = Run(Rule("127.0.0.2", echo.port()),
              {"hold", "127.0.0.2", std::to_string(echo.port()), "3", go, "2"});
  });
  // The first flow's event, written while the client waits for `go` (a generous wait).
  std::vector<json> before;
  for (int i = 0; i < 1200 && before.empty(); ++i) {
    for (const json& n : NetworkEventsIn(options_.audit_log)) {
      if (n["transport"] == "udp" && n["end"] == "idle") before.push_back(n);
    }
    if (before.empty()) usleep(50000);
  }
  std::ofstream(go) << "go";
  gander.join();
  fs::remove_all(logs);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "send=OK:5 recv=5 bytes_out=50 bytes_in=50 from_ok=5\n");
  ASSERT_FALSE(before.empty()) << "no flow ended while the extension ran";
  EXPECT_EQ(before[0]["result"], "allowed");
  EXPECT_EQ(before[0]["port"], echo.port());
  std::vector<json> udp = Udp(run);
  ASSERT_GE(udp.size(), 2u) << run.out;
  uint64_t out = 0, in = 0, bytes_out = 0, bytes_in = 0;
  for (const json& n : udp) {
    out += n["datagrams_out"].get<uint64_t>();
    in += n["datagrams_in"].get<uint64_t>();
    bytes_out += n["bytes_out"].get<uint64_t>();
    bytes_in += n["bytes_in"].get<uint64_t>();
    EXPECT_EQ(n["datagrams_dropped"], 0);
  }
  EXPECT_EQ(out, 5u);
  EXPECT_EQ(in, 5u);
  EXPECT_EQ(bytes_out, 50u);
  EXPECT_EQ(bytes_in, 50u);
  // The datagrams after `go` are a flow of their own, ended when the extension exited.
  EXPECT_EQ(udp.back()["end"], "exit");
  EXPECT_EQ(udp.back()["datagrams_out"], 2);
  EXPECT_EQ(udp.back()["datagrams_in"], 2);
  EXPECT_EQ(echo.datagrams(), 5u);
}

// More flows than GANDER_UDP_MAX_FLOWS: the least recently used ones end (evicted) to make
// room; every flow still has its event and nothing is dropped.
TEST_P(EgressUdp, FlowsOverTheLimitEvictTheOldest) {
  UdpEcho echo("127.0.0.2");
  ASSERT_TRUE(echo.ok());
  ScopedEnv limit("GANDER_UDP_MAX_FLOWS", "4");
  GanderRun run = Run(Rule("127.0.0.2", echo.port()),
                      {"sockets", "127.0.0.2", std::to_string(echo.port()), "10"});
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "send=OK:10 recv=10 bytes_out=100 bytes_in=100 from_ok=10\n");
  EXPECT_EQ(echo.datagrams(), 10u);
  std::vector<json> udp = Udp(run);
  ASSERT_EQ(udp.size(), 10u) << run.out;
  int evicted = 0, exited = 0;
  for (const json& n : udp) {
    EXPECT_EQ(n["datagrams_out"], 1);
    EXPECT_EQ(n["datagrams_in"], 1);
    EXPECT_EQ(n["datagrams_dropped"], 0);
    evicted += n["end"] == "evicted";
    exited += n["end"] == "exit";
  }
  EXPECT_EQ(evicted, 6);
  EXPECT_EQ(exited, 4);
  // The oldest went first: the first six events are the evictions.
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(udp[i]["end"], "evicted") << i;
}

// --mode monitor, as for TCP: what the trial policy allows and then denies goes through and is
// logged would_deny with its counts; a destination it does not list at all is refused.
TEST_P(EgressUdp, MonitorModeLogsWouldDenyWithCounts) {
  UdpEcho echo("127.0.0.2");
  ASSERT_TRUE(echo.ok());
  std::string port = std::to_string(echo.port());
  options_.flags = {"--mode", "monitor"};
  std::string policy =
      Policy(Rule("127.0.0.2", echo.port())) + "  deny:\n    - {host: 127.0.0.2}\n";
  for (const char* mode : {"connect", "sendto"}) {
    GanderRun run = Gander(policy, {client_, mode, "127.0.0.2", port, "3"}, options_);
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_NE(run.out.find("send=OK:3 recv=3 bytes_out=30 bytes_in=30 from_ok=3\n"),
              std::string::npos)
        << run.out;
    std::vector<json> udp = Udp(run);
    ASSERT_FALSE(udp.empty()) << run.out;
    // sendto: each send is also logged would_deny as it happens; the flow's event has counts.
    const json& flow = udp.back();
    EXPECT_EQ(flow["result"], "would_deny");
    EXPECT_EQ(flow["datagrams_out"], 3);
    EXPECT_EQ(flow["datagrams_in"], 3);
    EXPECT_EQ(flow["bytes_out"], 30);
    EXPECT_EQ(flow["bytes_in"], 30);
    for (const json& n : udp) EXPECT_EQ(n["result"], "would_deny") << n.dump();
  }
  EXPECT_EQ(echo.datagrams(), 6u);
  // A host the trial policy does not list (TEST-NET-2; 127.0.0.2 itself would be the
  // sandbox's own loopback): refused, as a TCP connect to it is.
  GanderRun run = Gander(policy, {client_, "sendto", "198.51.100.7", port, "1"}, options_);
  EXPECT_NE(run.out.find("send=ECONNREFUSED:1 recv=0 bytes_out=0 bytes_in=0 from_ok=0\n"),
            std::string::npos)
      << run.out;
  ASSERT_EQ(Udp(run).size(), 1u) << run.out;
  EXPECT_EQ(Udp(run)[0]["result"], "denied");
  EXPECT_EQ(Udp(run)[0]["ip"], "198.51.100.7");
}

// The gVisor backend: runsc runs in gander's empty network namespace, and its sends reach the
// same broker and relay.
TEST_P(EgressUdp, AllowedEchoUnderGvisor) {
  if (access("/usr/bin/runsc", X_OK) != 0 && std::system("command -v runsc >/dev/null 2>&1") != 0) {
    return SkipOrFail("runsc is not installed (apt-get install runsc)");
  }
  options_.flags = {"--backend", "gvisor"};
  EchoThrough("127.0.0.2");
}

INSTANTIATE_TEST_SUITE_P(User, EgressUdp, ::testing::Bool(), [](const auto& info) {
  return std::string(info.param ? "uid65534" : "current_user");
});

TEST(EgressUdpPolicy, BadProtocolStopsBeforeAnythingStarts) {
  std::string dir = TempDir();
  std::ofstream(dir + "/p.yaml") << "version: 1\nnetwork:\n  allow:\n"
                                    "    - {host: 10.0.0.5, ports: [53], protocol: sctp}\n";
  std::string cmd = std::string(GANDER_BIN) + " run --collector off --policy " + dir +
                    "/p.yaml --workspace " + dir + " -- /bin/true 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int st = pclose(p);
  fs::remove_all(dir);
  EXPECT_EQ(WEXITSTATUS(st), 2) << out;
  EXPECT_NE(out.find("p.yaml:4:47: network.allow[0].protocol: expected one of: tcp, udp, got "
                     "'sctp'"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace gander::egress_suite
