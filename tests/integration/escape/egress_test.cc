// The egress broker end to end: servers on 127.0.0.2 and ::1 ("remote" hosts on this machine),
// curl inside the sandbox, byte counts in the audit log compared with what the server saw.
// Runs as the current user (the escape suite covers uid 65534 for the denials).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "egress_fixture.h"

namespace {

using namespace gander::egress_suite;

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
