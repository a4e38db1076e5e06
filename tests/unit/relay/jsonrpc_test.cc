// The JSON-RPC reader: both MCP eras, batches, cancellations, ids, _meta, broken input.
#include "relay/jsonrpc.h"

#include <gtest/gtest.h>

#include <string>

namespace gander::monitor {
namespace {

ParsedLine Parse(std::string_view line) {
  JsonRpcParser parser(1 << 20);
  return parser.Parse(line, /*padded=*/false);
}

TEST(JsonRpc, ToolsCallWithGooseMeta) {
  ParsedLine p = Parse(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file",)"
      R"("arguments":{"path":"/x","deep":{"a":[1,2,{"b":"c"}]}},)"
      R"("_meta":{"agent-session-id":"s-1","agent-working-dir":"/home/u/p","progressToken":3}}})");
  ASSERT_TRUE(p.json);
  EXPECT_FALSE(p.batch);
  ASSERT_EQ(p.messages.size(), 1u);
  const RpcMessage& m = p.messages[0];
  EXPECT_EQ(m.kind, RpcKind::kRequest);
  EXPECT_EQ(m.id, (RpcId{false, "7"}));
  EXPECT_EQ(m.method, "tools/call");
  EXPECT_EQ(m.tool, "read_file");
  EXPECT_EQ(m.session_id, "s-1");
  EXPECT_EQ(m.working_dir, "/home/u/p");
  EXPECT_FALSE(m.stateless_version);
}

TEST(JsonRpc, FieldOrderDoesNotMatter) {
  ParsedLine p = Parse(
      R"({"params":{"arguments":{},"name":"echo"},"method":"tools/call","id":"a\"b","jsonrpc":"2.0"})");
  ASSERT_EQ(p.messages.size(), 1u);
  EXPECT_EQ(p.messages[0].kind, RpcKind::kRequest);
  EXPECT_EQ(p.messages[0].id, (RpcId{true, "a\"b"}));
  EXPECT_EQ(p.messages[0].id->ToJson(), R"("a\"b")");
  EXPECT_EQ(p.messages[0].tool, "echo");
}

TEST(JsonRpc, StatelessEraMeta) {
  ParsedLine p =
      Parse(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{)"
            R"("io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
            R"("io.modelcontextprotocol/clientCapabilities":{}}}})");
  ASSERT_EQ(p.messages.size(), 1u);
  EXPECT_EQ(p.messages[0].stateless_version, "2026-07-28");
  ParsedLine r = Parse(
      R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}})");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].kind, RpcKind::kResult);
  EXPECT_EQ(r.messages[0].result_type, "input_required");
}

TEST(JsonRpc, ResultsErrorsNotifications) {
  ParsedLine ok = Parse(
      R"({"result":{"content":[{"type":"text","text":"x"}],"isError":true},"jsonrpc":"2.0","id":3})");
  ASSERT_EQ(ok.messages.size(), 1u);
  EXPECT_EQ(ok.messages[0].kind, RpcKind::kResult);
  EXPECT_TRUE(ok.messages[0].result_is_error);
  ParsedLine err = Parse(R"({"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}})");
  EXPECT_EQ(err.messages[0].kind, RpcKind::kError);
  EXPECT_EQ(err.messages[0].error_code, -32601);
  ParsedLine null_id =
      Parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}})");
  EXPECT_EQ(null_id.messages[0].kind, RpcKind::kError);
  EXPECT_FALSE(null_id.messages[0].id);
  ParsedLine cancel = Parse(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r9","reason":"user"}})");
  EXPECT_EQ(cancel.messages[0].kind, RpcKind::kNotification);
  EXPECT_EQ(cancel.messages[0].cancelled_id, (RpcId{true, "r9"}));
  ParsedLine sampling = Parse(
      R"({"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[]}})");
  EXPECT_EQ(sampling.messages[0].kind, RpcKind::kRequest);
  EXPECT_EQ(sampling.messages[0].id, (RpcId{false, "0"}));
}

TEST(JsonRpc, Batches) {
  ParsedLine p = Parse(R"([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},)"
                       R"( {"jsonrpc":"2.0","method":"notifications/progress","params":{}},)"
                       R"( {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}])");
  ASSERT_TRUE(p.json);
  EXPECT_TRUE(p.batch);
  ASSERT_EQ(p.messages.size(), 3u);
  EXPECT_EQ(p.messages[0].tool, "a");
  EXPECT_EQ(p.messages[1].kind, RpcKind::kNotification);
  EXPECT_EQ(p.messages[2].tool, "b");
  ParsedLine odd = Parse(R"([1, {"jsonrpc":"2.0","id":1,"result":{}}])");
  ASSERT_TRUE(odd.json);
  ASSERT_EQ(odd.messages.size(), 2u);
  EXPECT_EQ(odd.messages[0].kind, RpcKind::kInvalid);
  EXPECT_EQ(odd.messages[1].kind, RpcKind::kResult);
}

TEST(JsonRpc, NotJson) {
  for (std::string_view line : {"hello", "{\"a\":", "{\"id\":1}}", "[1,2", "{\"id\":1} x", "tru",
                                "\"unterminated", "Debugger listening on ws://"}) {
    EXPECT_FALSE(Parse(line).json) << line;
  }
  for (std::string_view line : {"42", "\"s\"", "null", "true", "{}", "[]"}) {
    ParsedLine p = Parse(line);
    EXPECT_TRUE(p.json) << line;
  }
  EXPECT_EQ(Parse("{}").messages[0].kind, RpcKind::kInvalid);
}

TEST(JsonRpc, BadIdsAreNotRequests) {
  ParsedLine p =
      Parse(R"({"jsonrpc":"2.0","id":{"x":1},"method":"tools/call","params":{"name":"t"}})");
  ASSERT_TRUE(p.json);
  EXPECT_EQ(p.messages[0].kind, RpcKind::kInvalid);
}

TEST(JsonRpc, LinesOverTheLimitAreNotParsed) {
  JsonRpcParser parser(16);
  EXPECT_FALSE(parser.Parse(R"({"jsonrpc":"2.0","id":1,"result":{}})", false).json);
}

}  // namespace
}  // namespace gander::monitor
