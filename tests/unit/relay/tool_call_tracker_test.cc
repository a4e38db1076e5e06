// The tool-call tracker: slots (startup, one, concurrent, idle), outcomes, cancellations,
// batches, server->client requests, both eras, attribution counts.
#include "relay/tool_call_tracker.h"

#include <gtest/gtest.h>

namespace gander::relay {
namespace {

class Tracker : public ::testing::Test {
 protected:
  void Client(std::string_view line, int64_t t = 0) {
    ParsedLine p = parser_.Parse(line, false);
    ASSERT_TRUE(p.json) << line;
    for (const auto& m : p.messages) tracker_.OnClientMessage(m, t);
  }
  void Server(std::string_view line, int64_t t = 0) {
    ParsedLine p = parser_.Parse(line, false);
    ASSERT_TRUE(p.json) << line;
    for (const auto& m : p.messages) tracker_.OnServerMessage(m, t);
  }
  static std::string Call(int id, std::string_view tool) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
           R"(,"method":"tools/call","params":{"name":")" + std::string(tool) +
           R"(","arguments":{}}})";
  }
  static std::string Result(int id, bool is_error = false) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
           R"(,"result":{"content":[],"isError":)" + (is_error ? "true" : "false") + "}}";
  }
  JsonRpcParser parser_{1 << 20};
  ToolCallTracker tracker_;
};

TEST_F(Tracker, StartupOneConcurrentIdle) {
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kStartup);
  Client(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
  Server(R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}})");
  Client(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kStartup)
      << "tools/list is not a tool call";
  EXPECT_EQ(tracker_.era(), McpEra::kHandshake);
  Client(Call(2, "read_file"), 1'000'000);
  events::ToolCallSlot one = tracker_.Slot();
  ASSERT_EQ(one.state, events::ToolCallState::kOne);
  EXPECT_EQ(one.call->tool, "read_file");
  EXPECT_EQ(one.call->request_id, "2");
  Client(Call(3, "write_file"), 2'000'000);
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kConcurrent);
  EXPECT_FALSE(tracker_.Slot().call);
  Server(Result(2), 5'000'000);
  ASSERT_EQ(tracker_.Slot().state, events::ToolCallState::kOne);
  EXPECT_EQ(tracker_.Slot().call->tool, "write_file") << "the other one is still in flight";
  Server(Result(3, true), 9'000'000);
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kIdle);

  auto done = tracker_.TakeCompleted();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].call.tool, "read_file");
  EXPECT_EQ(done[0].outcome, ToolCallOutcome::kOk);
  EXPECT_EQ(done[0].duration_ns, 4'000'000);
  EXPECT_EQ(done[1].outcome, ToolCallOutcome::kToolError);
  EXPECT_EQ(tracker_.tool_stats().at("write_file").errors, 1u);
  EXPECT_EQ(tracker_.tool_stats().at("read_file").calls, 1u);
  EXPECT_TRUE(tracker_.TakeCompleted().empty());
}

TEST_F(Tracker, RpcErrorCancellationAndStringIds) {
  Client(R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}})");
  Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bad"}})");
  Server(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}})");
  ASSERT_EQ(tracker_.Slot().state, events::ToolCallState::kOne);
  EXPECT_EQ(tracker_.Slot().call->request_id, "a");
  Client(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}})");
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kIdle);
  // A late answer to the cancelled call changes nothing.
  Server(R"({"jsonrpc":"2.0","id":"a","result":{}})");
  auto done = tracker_.TakeCompleted();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].outcome, ToolCallOutcome::kRpcError);
  EXPECT_EQ(done[0].error_code, -32602);
  EXPECT_EQ(done[1].outcome, ToolCallOutcome::kCancelled);
  EXPECT_EQ(tracker_.unmatched_responses(), 1u);
}

TEST_F(Tracker, NumberAndStringIdsDiffer) {
  Client(R"({"jsonrpc":"2.0","id":"5","method":"tools/call","params":{"name":"s"}})");
  Server(R"({"jsonrpc":"2.0","id":5,"result":{}})");
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kOne) << "5 does not answer \"5\"";
}

TEST_F(Tracker, Batches) {
  Client("[" + Call(1, "a") + "," + Call(2, "b") + "]");
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kConcurrent);
  EXPECT_EQ(tracker_.tool_calls_in_flight(), 2u);
  Server("[" + Result(2) + "," + Result(1) + "]");
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kIdle);
  EXPECT_EQ(tracker_.TakeCompleted().size(), 2u);
}

TEST_F(Tracker, ServerToClientRequests) {
  Client(Call(1, "sampleLLM"));
  Server(R"({"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}})");
  Server(R"({"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}})");
  Server(R"({"jsonrpc":"2.0","id":2,"method":"roots/list"})");
  EXPECT_EQ(tracker_.server_requests_in_flight(), 3u);
  EXPECT_EQ(
      tracker_.ServerRequestMethods(),
      (std::vector<std::string>{"elicitation/create", "roots/list", "sampling/createMessage"}));
  // The server's id 1 is not the client's id 1: the tool call stays in flight.
  Client(R"({"jsonrpc":"2.0","id":1,"result":{"action":"accept"}})");
  Client(R"({"jsonrpc":"2.0","id":0,"result":{"content":{}}})");
  Server(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}})");
  EXPECT_EQ(tracker_.server_requests_in_flight(), 0u);
  ASSERT_EQ(tracker_.Slot().state, events::ToolCallState::kOne);
  EXPECT_EQ(tracker_.Slot().call->tool, "sampleLLM");
  Server(Result(1));
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kIdle);
}

TEST_F(Tracker, StatelessEraAndMetaKept) {
  Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{)"
         R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","agent-session-id":"S",)"
         R"("agent-working-dir":"/w"}}})");
  EXPECT_EQ(tracker_.era(), McpEra::kStateless);
  EXPECT_EQ(tracker_.session_id(), "S");
  EXPECT_EQ(tracker_.working_dir(), "/w");
  Server(R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}})");
  auto done = tracker_.TakeCompleted();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].outcome, ToolCallOutcome::kInputRequired);
  EXPECT_EQ(done[0].session_id, "S");
  EXPECT_EQ(done[0].working_dir, "/w");
}

TEST_F(Tracker, AttributionCountsAndAbort) {
  Client(Call(1, "t"));
  events::Event file;
  file.payload = events::FileEvent{.result = events::Verdict::kDenied};
  events::Event denied;
  denied.payload = events::SyscallEvent{};
  tracker_.Attribute(file);
  tracker_.Attribute(denied);
  Client(Call(2, "u"));
  tracker_.Attribute(file);  // concurrent: not counted against either
  auto aborted = tracker_.AbortInFlight(10);
  EXPECT_EQ(aborted.size(), 2u);
  auto done = tracker_.TakeCompleted();
  ASSERT_EQ(done.size(), 2u);
  for (const auto& c : done) {
    EXPECT_EQ(c.outcome, ToolCallOutcome::kAborted);
    if (c.call.tool == "t") {
      EXPECT_EQ(c.caused.files, 1u);
      EXPECT_EQ(c.caused.denials, 2u);
    } else {
      EXPECT_EQ(c.caused.files, 0u);
    }
  }
  EXPECT_EQ(tracker_.tool_stats().at("t").caused.files, 1u);
  EXPECT_EQ(tracker_.Slot().state, events::ToolCallState::kIdle);
}

TEST_F(Tracker, BoundedToolNames) {
  for (int i = 0; i < 300; ++i) {
    Client(Call(i, "tool" + std::to_string(i)));
    Server(Result(i));
  }
  EXPECT_LE(tracker_.tool_stats().size(), ToolCallTracker::kMaxTools + 1);
  EXPECT_GT(tracker_.tool_stats().at("other").calls, 0u);
}

}  // namespace
}  // namespace gander::relay
