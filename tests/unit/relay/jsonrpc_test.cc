// The JSON-RPC reader: both MCP eras, batches, cancellations, ids, _meta, broken input.
#include "relay/jsonrpc.h"

#include <gtest/gtest.h>

#include <string>

namespace gander::relay {
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

TEST(JsonRpc, HostileLinesAreNotJson) {
  using namespace std::string_literals;
  // A NUL byte ends nothing: the whole line is read, and it is not JSON.
  EXPECT_FALSE(Parse("{}\0garbage"s).json);
  EXPECT_FALSE(Parse("{\"id\":1,\"method\":\"a\0b\"}"s).json);
  // Invalid UTF-8 inside a string.
  EXPECT_FALSE(Parse("{\"method\":\"\xff\xfe\"}").json);
  // Deep nesting is refused without exhausting the stack; ordinary depth is fine.
  EXPECT_FALSE(Parse(std::string(200000, '[')).json);
  EXPECT_FALSE(Parse(std::string(2000, '[') + std::string(2000, ']')).json);
  EXPECT_TRUE(Parse(std::string(500, '[') + std::string(500, ']')).json);
  // Numbers are kept as written; one out of a double's range is not JSON (nor to serde_json).
  EXPECT_EQ(Parse(R"({"id":1e2,"method":"m"})").messages[0].id, (RpcId{false, "1e2"}));
  EXPECT_EQ(Parse(R"({"id":-0,"method":"m"})").messages[0].id, (RpcId{false, "-0"}));
  EXPECT_FALSE(Parse(R"({"id":1e999,"method":"m"})").json);
  // Mistyped fields are left unset.
  ParsedLine e = Parse(R"({"id":1,"error":{"code":1.5}})");
  EXPECT_EQ(e.messages[0].kind, RpcKind::kError);
  EXPECT_EQ(e.messages[0].error_code, 0);
  ParsedLine m = Parse(R"({"id":1,"method":7,"params":{"name":{"a":1},"_meta":[1]}})");
  EXPECT_EQ(m.messages[0].kind, RpcKind::kInvalid);
  EXPECT_TRUE(m.messages[0].tool.empty());
  // Whitespace around the value is JSON's; anything else after it is not.
  EXPECT_TRUE(Parse(" \t{\"id\":1,\"result\":{}} \r\n").json);
  EXPECT_FALSE(Parse("{} {}").json);
}

TEST(JsonRpc, DuplicateKeysTakeTheLastValue) {
  ParsedLine p =
      Parse(R"({"id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}})");
  EXPECT_EQ(p.messages[0].tool, "b");
}

TEST(JsonRpc, ReusedParserForgetsThePreviousLine) {
  JsonRpcParser parser(1 << 20);
  ParsedLine a = parser.Parse(R"({"id":1,"method":"tools/call","params":{"name":"a"}})", false);
  ParsedLine broken = parser.Parse(R"({"id":2,"method":"tools/call","params":{"name":"b")", false);
  ParsedLine c = parser.Parse(R"({"id":3,"result":{}})", false);
  EXPECT_EQ(a.messages[0].tool, "a");
  EXPECT_FALSE(broken.json);
  EXPECT_TRUE(broken.messages.empty());
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_EQ(c.messages[0].kind, RpcKind::kResult);
  EXPECT_TRUE(c.messages[0].tool.empty());
}

TEST(JsonRpc, AHugeBatchIsReadUpToItsBound) {
  std::string line = "[";
  for (int i = 0; i < 200000; ++i) line += i % 2 ? "0," : "{},";
  line += "0]";
  JsonRpcParser parser(64u << 20);
  ParsedLine p = parser.Parse(line, false);
  EXPECT_TRUE(p.json);
  EXPECT_TRUE(p.batch);
  EXPECT_EQ(p.messages.size(), ParsedLine::kMaxMessages);
  EXPECT_EQ(p.unread, 200001 - ParsedLine::kMaxMessages);
  // Still validated to its end.
  line.back() = ',';
  EXPECT_FALSE(parser.Parse(line, false).json);
}

}  // namespace
}  // namespace gander::relay
