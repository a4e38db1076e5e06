// RpcMonitor (relay/rpc_monitor.h): what a restart behind the relay tells the client and
// replays to the fresh extension, after the handshake and during it.
#include "relay/rpc_monitor.h"

#include <gtest/gtest.h>

#include <string>

namespace gander::monitor {
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

}  // namespace
}  // namespace gander::monitor
