// McpClient against a scripted peer on a pair of pipes: the peer's lines are written before
// the request, so nothing here depends on timing (the timeout case waits on an empty pipe).
#include "vet/mcp_client.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace gander::vet {
namespace {

struct Pipes {
  UniqueFd client_out, server_in;  // client -> server
  UniqueFd server_out, client_in;  // server -> client
  Pipes() {
    int a[2], b[2];
    EXPECT_EQ(pipe2(a, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(b, O_CLOEXEC), 0);
    server_in.Reset(a[0]);
    client_out.Reset(a[1]);
    client_in.Reset(b[0]);
    server_out.Reset(b[1]);
  }
  void Say(const std::string& text) {
    ASSERT_EQ(write(server_out.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  std::string Heard() {
    char buf[4096];
    ssize_t n = read(server_in.get(), buf, sizeof(buf));
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
};

TEST(McpClient, SkipsNoiseAndAnswersTheServersRequests) {
  Pipes p;
  p.Say("not json\n");
  p.Say(R"({"jsonrpc":"2.0","method":"notifications/message","params":{}})"
        "\n");
  p.Say(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})"
        "\n");
  p.Say(R"({"jsonrpc":"2.0","id":"s2","method":"roots/list"})"
        "\n");
  p.Say(R"({"jsonrpc":"2.0","id":99,"result":{"stale":true}})"
        "\n");
  p.Say(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})"
        "\n");
  McpClient client(std::move(p.client_out), std::move(p.client_in));
  auto result = client.Request("tools/list", nlohmann::json::object(), std::chrono::seconds(5));
  ASSERT_TRUE(result) << result.error().Describe();
  EXPECT_EQ((*result)["tools"], nlohmann::json::array());
  EXPECT_EQ(client.not_json_lines(), 1u);
  std::string heard = p.Heard();
  EXPECT_NE(heard.find(R"("method":"tools/list")"), std::string::npos) << heard;
  EXPECT_NE(heard.find(R"({"id":"s1","jsonrpc":"2.0","result":{}})"), std::string::npos) << heard;
  EXPECT_NE(heard.find(R"("id":"s2")"), std::string::npos) << heard;
  EXPECT_NE(heard.find("-32601"), std::string::npos) << heard;
}

TEST(McpClient, ErrorsTimeoutsAndEof) {
  Pipes p;
  p.Say(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params"}})"
        "\n");
  McpClient client(std::move(p.client_out), std::move(p.client_in));
  auto error = client.Request("tools/call", {}, std::chrono::seconds(5));
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("-32602: bad params"), std::string::npos);

  auto timeout = client.Request("tools/call", {}, std::chrono::milliseconds(1));
  ASSERT_FALSE(timeout);
  EXPECT_EQ(timeout.error().code, ETIMEDOUT);
  // The timed-out request is cancelled.
  EXPECT_NE(
      p.Heard().find(
          R"("method":"notifications/cancelled","params":{"reason":"timeout","requestId":2})"),
      std::string::npos);

  p.server_out.Reset();
  auto eof = client.Request("tools/list", {}, std::chrono::seconds(5));
  ASSERT_FALSE(eof);
  EXPECT_EQ(eof.error().code, EPIPE);
}

}  // namespace
}  // namespace gander::vet
