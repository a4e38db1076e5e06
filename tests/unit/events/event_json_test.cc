// The audit log line format: JSON escaping (quotes, control characters, invalid UTF-8), the
// reversible byte escaping, timestamps, and one line per event kind, checked with a real JSON
// parser (nlohmann-json, test-only).
#include "events/event_json.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gander::events {
namespace {

using namespace std::string_literals;
using nlohmann::json;

std::string JsonString(std::string_view bytes) {
  std::string out;
  AppendJsonString(out, bytes);
  return out;
}

// What a JSON reader gets back for `bytes`, after undoing the byte escaping.
std::optional<std::string> RoundTrip(std::string_view bytes) {
  json parsed = json::parse(JsonString(bytes));
  return UnescapeBytes(parsed.get<std::string>());
}

TEST(JsonText, ParsesBackToTheSameTextAndReplacesInvalidBytes) {
  for (std::string text : {"plain"s, R"(say "hi" \ C:\x)"s, "a\nb\x01\x7f"s, "nul\0here"s,
                           "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d"s}) {
    std::string out;
    AppendJsonText(out, text);
    EXPECT_EQ(json::parse(out).get<std::string>(), text) << out;
  }
  // nlohmann (the state file's reader) refuses invalid UTF-8: such a byte becomes U+FFFD.
  std::string out;
  AppendJsonText(out, "a\xff\xc3(b");
  EXPECT_EQ(out, R"("a\ufffd\ufffd(b")");
  EXPECT_EQ(json::parse(out).get<std::string>(), "a\xef\xbf\xbd\xef\xbf\xbd(b");
}

TEST(JsonString, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("plain"), R"("plain")");
  EXPECT_EQ(JsonString(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(JsonString("a\nb\tc\rd\be\ff"), R"("a\nb\tc\rd\be\ff")");
  EXPECT_EQ(JsonString("\x01\x1f\x7f"), R"("\u0001\u001f\u007f")");
  EXPECT_EQ(JsonString("nul\0here"s), R"("nul\u0000here")");
  // A real backslash is doubled by the byte escaping, then JSON-encoded.
  EXPECT_EQ(JsonString(R"(C:\x)"), R"("C:\\\\x")");
}

TEST(JsonString, KeepsValidUtf8) {
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(JsonString("\xe2\x82\xac \xf0\x9f\x98\x80"), "\"\xe2\x82\xac \xf0\x9f\x98\x80\"");
}

TEST(JsonString, EscapesInvalidUtf8Bytes) {
  EXPECT_EQ(JsonString("a\xff"
                       "b"),
            R"("a\\xffb")");
  EXPECT_EQ(JsonString("\xc0\x80"), R"("\\xc0\\x80")") << "overlong NUL";
  EXPECT_EQ(JsonString("\xed\xa0\x80"), R"("\\xed\\xa0\\x80")") << "surrogate";
  EXPECT_EQ(JsonString("\xe2\x82"), R"("\\xe2\\x82")") << "truncated sequence";
  EXPECT_EQ(JsonString("\xf4\x90\x80\x80"), R"("\\xf4\\x90\\x80\\x80")") << "above U+10FFFF";
  EXPECT_EQ(JsonString("\x80"), R"("\\x80")") << "lone continuation byte";
}

TEST(JsonString, OutputIsValidJsonAndReversibleForEveryByte) {
  for (int b = 0; b < 256; ++b) {
    std::string bytes = "x" + std::string(1, static_cast<char>(b)) + "y";
    EXPECT_EQ(RoundTrip(bytes), bytes) << "byte " << b;
  }
  // Text that looks like an escape survives too: that is why backslashes are doubled.
  for (std::string bytes : {R"(\x41)"s, R"(\\)"s, "\\\xff"s, "/tmp/\xff\\xff"s}) {
    EXPECT_EQ(RoundTrip(bytes), bytes);
  }
}

TEST(EscapeBytes, IsUtf8AndInvertible) {
  EXPECT_EQ(EscapeBytes("/tmp/\xff"), R"(/tmp/\xff)");
  EXPECT_EQ(EscapeBytes(R"(a\b)"), R"(a\\b)");
  EXPECT_EQ(UnescapeBytes(R"(/tmp/\xff)"), "/tmp/\xff");
  EXPECT_EQ(UnescapeBytes(R"(/tmp/\xFF)"), "/tmp/\xff");
  EXPECT_FALSE(UnescapeBytes(R"(lone \ here)"));
  EXPECT_FALSE(UnescapeBytes(R"(\xzz)"));
  EXPECT_FALSE(UnescapeBytes(R"(\x4)"));
  EXPECT_FALSE(UnescapeBytes("end\\"));
}

TEST(FormatRfc3339Micros, UtcWithMicroseconds) {
  EXPECT_EQ(FormatRfc3339Micros(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(FormatRfc3339Micros(1'700'000'000'123'456'789), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(FormatRfc3339Micros(-1), "1969-12-31T23:59:59.999999Z");
  // The type's ends, where a nanosecond time point would overflow.
  EXPECT_EQ(FormatRfc3339Micros(INT64_MAX), "2262-04-11T23:47:16.854775Z");
  EXPECT_EQ(FormatRfc3339Micros(INT64_MIN), "1677-09-21T00:12:43.145224Z");
}

Event Base() {
  Event e;
  e.time_ns = 1'700'000'000'123'456'789;
  e.extension = "github";
  e.pid = 1234;
  e.sandbox_pid = 7;
  e.executable = "/usr/bin/node";
  return e;
}

json Parse(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "exactly one line";
  return json::parse(line);
}

TEST(ToJsonLine, FileEventGoldenLine) {
  Event e = Base();
  e.tool_call = {ToolCallState::kOne, ToolCall{"read_file", "42"}};
  e.payload = FileEvent{.syscall = "openat",
                        .raw_path = "../.ssh/id_rsa",
                        .path = "/home/u/.ssh/id_rsa",
                        .path_label = "~/.ssh",
                        .path_class = PathClass::kDenied,
                        .access = FileAccess::kRead,
                        .result = Verdict::kAllowed};
  EXPECT_EQ(
      ToJsonLine(e),
      R"({"v":1,"time":"2023-11-14T22:13:20.123456Z","kind":"file","extension":"github",)"
      R"("pid":1234,"sandbox_pid":7,"exe":"/usr/bin/node",)"
      R"("tool_call":{"state":"one","tool":"read_file","request_id":"42"},)"
      R"("file":{"syscall":"openat","raw_path":"../.ssh/id_rsa","raw_path_truncated":false,)"
      R"("path":"/home/u/.ssh/id_rsa","path_label":"~/.ssh","class":"denied","access":"read","result":"allowed",)"
      R"("errno":0,"errno_name":null}})"
      "\n");
}

TEST(ToJsonLine, UnknownValuesAreNull) {
  Event e;
  e.payload = FileEvent{.syscall = "openat",
                        .raw_path = std::string(2000, 'a'),
                        .path = std::nullopt,
                        .path_class = PathClass::kUnknown,
                        .access = FileAccess::kRead,
                        .result = Verdict::kDenied,
                        .error = ENAMETOOLONG};
  json j = Parse(ToJsonLine(e));
  EXPECT_TRUE(j["pid"].is_null());
  EXPECT_TRUE(j["sandbox_pid"].is_null());
  EXPECT_TRUE(j["exe"].is_null());
  EXPECT_EQ(j["tool_call"]["state"], "startup");
  EXPECT_TRUE(j["tool_call"]["tool"].is_null());
  EXPECT_TRUE(j["tool_call"]["request_id"].is_null());
  EXPECT_TRUE(j["file"]["path"].is_null());
  EXPECT_EQ(j["file"]["class"], "unknown");
  EXPECT_EQ(j["file"]["raw_path"].get<std::string>().size(), kMaxRawPathBytes);
  EXPECT_EQ(j["file"]["raw_path_truncated"], true);
  EXPECT_EQ(j["file"]["errno"], ENAMETOOLONG);
  EXPECT_EQ(j["file"]["errno_name"], "ENAMETOOLONG");
}

TEST(ToJsonLine, NonUtf8PathSurvivesTheRoundTrip) {
  Event e = Base();
  std::string raw = "/tmp/\xff\xfe\"quoted\"\n\\x41";
  e.payload = FileEvent{.syscall = "unlinkat",
                        .raw_path = raw,
                        .path = raw,
                        .path_class = PathClass::kPrivate,
                        .access = FileAccess::kDelete};
  json j = Parse(ToJsonLine(e));
  EXPECT_EQ(UnescapeBytes(j["file"]["raw_path"].get<std::string>()), raw);
  EXPECT_EQ(UnescapeBytes(j["file"]["path"].get<std::string>()), raw);
  EXPECT_EQ(j["file"]["access"], "delete");
}

TEST(ToJsonLine, SyscallEvent) {
  Event e = Base();
  e.tool_call.state = ToolCallState::kConcurrent;
  e.payload =
      SyscallEvent{.name = "ptrace", .nr = 101, .error = EPERM, .action = SyscallAction::kDenied};
  json j = Parse(ToJsonLine(e));
  EXPECT_EQ(j["kind"], "syscall");
  EXPECT_EQ(j["tool_call"]["state"], "concurrent");
  EXPECT_EQ(j["syscall"], (json{{"name", "ptrace"},
                                {"nr", 101},
                                {"action", "denied"},
                                {"count", 1},
                                {"errno", EPERM},
                                {"errno_name", "EPERM"}}));
  e.payload = SyscallEvent{.name = "", .nr = 999, .action = SyscallAction::kCounted, .count = 5};
  j = Parse(ToJsonLine(e));
  EXPECT_TRUE(j["syscall"]["name"].is_null());
  EXPECT_EQ(j["syscall"]["count"], 5);
}

TEST(ToJsonLine, ProcessEventsBoundArgv) {
  Event e = Base();
  ProcessEvent exec{.action = ProcessAction::kExec, .path = "/usr/bin/git"};
  for (size_t i = 0; i < kMaxArgvEntries + 5; ++i) exec.argv.push_back("arg" + std::to_string(i));
  exec.argv[1] = std::string(kMaxArgBytes + 10, 'x');
  e.payload = exec;
  json j = Parse(ToJsonLine(e));
  EXPECT_EQ(j["kind"], "process");
  EXPECT_EQ(j["process"]["action"], "exec");
  EXPECT_EQ(j["process"]["path"], "/usr/bin/git");
  EXPECT_EQ(j["process"]["argv"].size(), kMaxArgvEntries);
  EXPECT_EQ(j["process"]["argv"][1].get<std::string>().size(), kMaxArgBytes);
  EXPECT_EQ(j["process"]["argv_truncated"], true);
  EXPECT_TRUE(j["process"]["exit_code"].is_null());

  e.payload = ProcessEvent{.action = ProcessAction::kExit, .exit_code = 3};
  j = Parse(ToJsonLine(e));
  EXPECT_EQ(j["process"]["action"], "exit");
  EXPECT_EQ(j["process"]["exit_code"], 3);
  EXPECT_TRUE(j["process"]["signal"].is_null());
  EXPECT_EQ(j["process"]["argv"], json::array());
  EXPECT_EQ(j["process"]["argv_truncated"], false);
}

TEST(ToJsonLine, NetworkEvent) {
  Event e = Base();
  e.payload = NetworkEvent{.host = "example.com",
                           .ip = "93.184.216.34",
                           .port = 443,
                           .transport = "tcp",
                           .result = Verdict::kWouldDeny};
  json j = Parse(ToJsonLine(e));
  EXPECT_EQ(j["network"], (json{{"host", "example.com"},
                                {"ip", "93.184.216.34"},
                                {"port", 443},
                                {"transport", "tcp"},
                                {"result", "would_deny"},
                                {"errno", 0},
                                {"errno_name", nullptr},
                                {"syscall", nullptr},
                                {"rule", nullptr},
                                {"bytes_out", 0},
                                {"bytes_in", 0},
                                {"duration_us", 0}}));
  e.payload = NetworkEvent{.host = "api.test",
                           .ip = "127.0.0.2",
                           .port = 8443,
                           .transport = "tcp",
                           .result = Verdict::kAllowed,
                           .error = 0,
                           .syscall = "connect",
                           .rule = "api.test",
                           .bytes_out = 517,
                           .bytes_in = 104857600,
                           .duration_ns = 12345678};
  j = Parse(ToJsonLine(e));
  EXPECT_EQ(j["network"]["bytes_in"], 104857600);
  EXPECT_EQ(j["network"]["bytes_out"], 517);
  EXPECT_EQ(j["network"]["duration_us"], 12345);
  EXPECT_EQ(j["network"]["rule"], "api.test");
  EXPECT_EQ(j["network"]["syscall"], "connect");
  // A relayed UDP flow: datagram counts, drops and why it ended.
  e.payload = NetworkEvent{.ip = "10.0.0.5",
                           .port = 53,
                           .transport = "udp",
                           .datagrams_out = 3,
                           .datagrams_in = 2,
                           .datagrams_dropped = 1,
                           .end = "idle"};
  j = Parse(ToJsonLine(e));
  EXPECT_EQ(j["network"]["datagrams_out"], 3);
  EXPECT_EQ(j["network"]["datagrams_in"], 2);
  EXPECT_EQ(j["network"]["datagrams_dropped"], 1);
  EXPECT_EQ(j["network"]["end"], "idle");
}

TEST(ToJsonLine, LifecycleEvent) {
  Event e = Base();
  e.payload = LifecycleEvent{LifecyclePhase::kEventsDropped, "17"};
  json j = Parse(ToJsonLine(e));
  EXPECT_EQ(j["kind"], "lifecycle");
  EXPECT_EQ(j["lifecycle"],
            (json{{"what", "events_dropped"}, {"detail", "17"}, {"info", nullptr}}));
}

TEST(ToJsonLine, StartEventCarriesTheRunInfo) {
  Event e = Base();
  e.payload = LifecycleEvent{
      LifecyclePhase::kStart, "/usr/bin/node (...)",
      RunInfo{"native",
              "full",
              "monitor",
              "watched",
              "ab12",
              "a.yaml",
              "/home/u/p",
              {"/usr/bin/node", "/opt/x/node_modules"},
              {{"TOKEN", "env", "env", ""}, {"DB", "command", "file", "/run/secrets/DB"}}}};
  json j = Parse(ToJsonLine(e));
  EXPECT_EQ(
      j["lifecycle"]["info"],
      (json{
          {"backend", "native"},
          {"isolation", "full"},
          {"mode", "monitor"},
          {"syscall_accounting", "watched"},
          {"policy_sha256", "ab12"},
          {"policy", "a.yaml"},
          {"workspace", "/home/u/p"},
          {"command_grants", {"/usr/bin/node", "/opt/x/node_modules"}},
          {"secrets",
           {{{"name", "TOKEN"}, {"from", "env"}, {"as", "env"}, {"file", nullptr}},
            {{"name", "DB"}, {"from", "command"}, {"as", "file"}, {"file", "/run/secrets/DB"}}}}}));
}

TEST(ToJsonLine, EveryKindHasTheCommonFieldsInOrder) {
  using Payload = decltype(Event::payload);
  for (const Payload& payload :
       {Payload{FileEvent{}}, Payload{NetworkEvent{}}, Payload{SyscallEvent{}},
        Payload{ProcessEvent{}}, Payload{LifecycleEvent{}}}) {
    Event e = Base();
    e.payload = payload;
    std::string line = ToJsonLine(e);
    std::string kind(ToString(e.kind()));
    EXPECT_EQ(line.rfind(R"({"v":1,"time":)", 0), 0u) << line;
    json j = Parse(line);
    std::vector<std::string> keys;
    for (const auto& [key, value] : j.items()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    std::vector<std::string> expected = {"exe",  "extension", "kind", "pid", "sandbox_pid",
                                         "time", "tool_call", "v",    kind};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(keys, expected);
    EXPECT_EQ(j["kind"], kind);
  }
}

}  // namespace
}  // namespace gander::events
