// RpcMonitor (relay/rpc_monitor.h): what a restart behind the relay tells the client and
// replays to the fresh extension, after the handshake and during it.
#include "relay/rpc_monitor.h"

#include <gtest/gtest.h>

#include <string>

namespace gander::relay {
namespace {

constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})";
constexpr const char* kInitialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
constexpr const char* kInitializeAnswer =
    R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}})";
constexpr const char* kCall =
    R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{}}})";

// A line as the relay hands it over: readable for kLinePadding bytes past its end.
LineVerdict Feed(LineObserver& side, const std::string& line) {
  std::string padded = line + std::string(kLinePadding, '\0');
  return side.OnLine(std::string_view(padded.data(), line.size()));
}

TEST(RpcMonitorRestart, AfterTheHandshakeItIsReplayedAndItsAnswerSwallowed) {
  RpcMonitor rpc("t", nullptr, 1 << 20);
  Feed(rpc.client_side(), kInitialize);
  EXPECT_EQ(Feed(rpc.server_side(), kInitializeAnswer), LineVerdict::kForward);
  Feed(rpc.client_side(), kInitialized);
  Feed(rpc.client_side(), kCall);
  std::string errors = rpc.FailInFlight("restarted");
  EXPECT_EQ(errors, R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"restarted"}})"
                    "\n");
  EXPECT_EQ(rpc.HandshakeReplay(), std::string(kInitialize) + "\n" + kInitialized + "\n");
  EXPECT_EQ(Feed(rpc.server_side(), kInitializeAnswer), LineVerdict::kSwallow);
  EXPECT_EQ(rpc.swallowed(), 1u);
}

TEST(RpcMonitorRestart, DuringTheHandshakeTheFreshExtensionAnswersTheInitialize) {
  RpcMonitor rpc("t", nullptr, 1 << 20);
  Feed(rpc.client_side(), kInitialize);  // the old extension never answered it
  EXPECT_EQ(rpc.FailInFlight("restarted"), "") << "the client keeps waiting for its answer";
  EXPECT_EQ(rpc.HandshakeReplay(), std::string(kInitialize) + "\n");
  EXPECT_EQ(Feed(rpc.server_side(), kInitializeAnswer), LineVerdict::kForward);
  EXPECT_EQ(rpc.swallowed(), 0u);
  // A later restart replays it again, and this time the answer is gander's business.
  Feed(rpc.client_side(), kInitialized);
  rpc.FailInFlight("restarted");
  rpc.HandshakeReplay();
  EXPECT_EQ(Feed(rpc.server_side(), kInitializeAnswer), LineVerdict::kSwallow);
}

// A hostile server's lines that Goose's client (rmcp, serde_json) refuses: the client keeps
// waiting for its answer, so gander must keep the call in flight (its events are still the
// call's), and count the line as a protocol anomaly. The bytes are forwarded all the same.
class RpcMonitorRefusedLine : public ::testing::TestWithParam<std::string> {};

TEST_P(RpcMonitorRefusedLine, DoesNotEndTheCallInFlight) {
  RpcMonitor rpc("t", nullptr, 1 << 20);
  Feed(rpc.client_side(), kInitialize);
  Feed(rpc.server_side(), kInitializeAnswer);
  Feed(rpc.client_side(), kInitialized);
  Feed(rpc.client_side(), kCall);
  ASSERT_EQ(rpc.tracker().tool_calls_in_flight(), 1u);
  EXPECT_EQ(Feed(rpc.server_side(), GetParam()), LineVerdict::kForward);
  EXPECT_EQ(rpc.tracker().tool_calls_in_flight(), 1u) << GetParam();
  EXPECT_EQ(rpc.refused_server_lines(), 1u);
  // The answer the client does accept ends it.
  Feed(rpc.server_side(), R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})");
  EXPECT_EQ(rpc.tracker().tool_calls_in_flight(), 0u);
  EXPECT_EQ(rpc.refused_server_lines(), 1u);
}

std::string Nested(int depth) {
  return R"({"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":)" +
         std::string(depth - 2, '[') + std::string(depth - 2, ']') + "}}";
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, RpcMonitorRefusedLine,
    ::testing::Values(
        // no "jsonrpc", or not "2.0"
        std::string(R"({"id":1,"result":{"content":[]}})"),
        std::string(R"({"jsonrpc":"1.0","id":1,"result":{"content":[]}})"),
        std::string(R"({"jsonrpc":2.0,"id":1,"result":{"content":[]}})"),
        std::string(R"({"jsonrpc":"2.0 ","id":1,"error":{"code":-1,"message":"x"}})"),
        std::string(R"({"id":1,"error":{"code":-1,"message":"x"}})"),
        // a batch with one element the client refuses is refused whole
        std::string(R"([{"jsonrpc":"2.0","id":9,"result":{}},{"id":1,"result":{}}])"),
        // nesting past serde_json's limit (128: 127 containers deep is the most it reads)
        Nested(128), Nested(1000),
        // a key the message's type knows, twice
        std::string(R"({"jsonrpc":"2.0","id":1,"result":{"content":[]},"id":2})"),
        std::string(R"({"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}})"),
        std::string(R"({"jsonrpc":"2.0","id":1,"result":{},"result":{}})"),
        std::string(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":{}})"),
        std::string(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"a"}})")));

TEST(RpcMonitorAcceptedLine, WhatTheClientAcceptsEndsTheCall) {
  for (const std::string& answer :
       {Nested(127), std::string(R"({"jsonrpc":"2.0","id":1,"result":{},"x":1,"x":2})"),
        std::string(R"({"result":{"content":[]},"id":1,"jsonrpc":"2.0"})")}) {
    RpcMonitor rpc("t", nullptr, 1 << 20);
    Feed(rpc.client_side(), kCall);
    Feed(rpc.server_side(), answer);
    EXPECT_EQ(rpc.tracker().tool_calls_in_flight(), 0u) << answer;
    EXPECT_EQ(rpc.refused_server_lines(), 0u) << answer;
  }
}

TEST(RpcMonitorRefusedLine, AnInitializeAnswerTheClientRefusesIsNotTheHandshake) {
  RpcMonitor rpc("t", nullptr, 1 << 20);
  Feed(rpc.client_side(), kInitialize);
  Feed(rpc.server_side(), R"({"id":0,"result":{"protocolVersion":"2025-06-18"}})");
  // Still unanswered to the client: a restart lets the fresh extension answer it.
  EXPECT_EQ(rpc.FailInFlight("restarted"), "");
  EXPECT_EQ(rpc.HandshakeReplay(), std::string(kInitialize) + "\n");
  EXPECT_EQ(Feed(rpc.server_side(), kInitializeAnswer), LineVerdict::kForward);
}

}  // namespace
}  // namespace gander::relay
