// UDP allow rules (`protocol: udp`) end to end: egress_udp_client inside a real sandbox talks to
// UDP echo servers on this machine's other addresses (127.0.0.2, ::1, and its non-loopback
// IPv4/IPv6 addresses when it has them, which the relay adds to the sandbox's loopback), as
// the current user and, as root, as uid 65534. Checked: the echo arrives from the address sent
// to, connected and unconnected; the event's datagram and byte counts equal what the server
// saw; an unlisted port or host is refused at once with an event; `protocol: udp` does not
// allow TCP and a TCP rule does not allow UDP; a bad `protocol:` is an error, exit 2.
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
    if (as_nobody) {
      options_.as_nobody = true;
      options_.gander = ws_ + "/gander";
      fs::copy_file(GANDER_BIN, options_.gander);
      ASSERT_EQ(chown(ws_.c_str(), kNobody, kNobody), 0);
    }
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
