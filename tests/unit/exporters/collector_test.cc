// The collector's pure parts: label capping, the sequence ledger (dedupe on resend), the state
// file round trip, the wire format both ways and its validation, and the event -> metric
// mapping.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "events/event_json.h"
#include "exporters/collector/collector_state.h"
#include "exporters/collector/event_metrics.h"
#include "exporters/collector/label_bounds.h"
#include "exporters/collector/metric_store.h"
#include "exporters/collector/wire_parse.h"
#include "exporters/collector_wire.h"
#include "tests/unit/expect_table.h"

namespace gander::exporters::collector {
namespace {

using gander::unit::ExpectMaps;

using events::Event;

Event FileEvent(const std::string& path, events::PathClass c,
                events::Verdict v = events::Verdict::kAllowed) {
  Event e;
  e.time_ns = 1748772000123456000;
  e.extension = "github";
  e.pid = 42;
  e.executable = "/usr/bin/node";
  e.payload = events::FileEvent{.syscall = "openat",
                                .raw_path = path,
                                .path = path,
                                .path_class = c,
                                .access = events::FileAccess::kRead,
                                .result = v};
  return e;
}

Event Counted(const std::string& name, uint64_t count) {
  Event e;
  e.time_ns = 1748772000123456000;
  e.extension = "github";
  e.payload = events::SyscallEvent{
      .name = name, .nr = 0, .action = events::SyscallAction::kCounted, .count = count};
  return e;
}

Event Lifecycle(events::LifecyclePhase what, std::string detail) {
  Event e;
  e.time_ns = 1748772000123456000;
  e.extension = "github";
  e.payload = events::LifecycleEvent{what, std::move(detail)};
  return e;
}

wire::Hello MakeHello() {
  wire::Hello h;
  h.launcher = "123-abc";
  h.extension = "github";
  h.info.run.isolation = "full";
  h.info.run.policy_sha256 = "00ff";
  h.info.run.syscall_accounting = "watched";
  h.info.destinations = {"api.github.com"};
  h.info.secrets = {"GITHUB_TOKEN"};
  h.home = "/home/u";
  return h;
}

std::string WithoutNewline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

TEST(LabelBounds, FirstValuesWinTheRestAreOther) {
  LabelBounds bounds({.path = 2});
  EXPECT_TRUE(bounds.Admit("a", BoundedLabel::kPath, "/etc"));
  EXPECT_TRUE(bounds.Admit("a", BoundedLabel::kPath, "~/.ssh"));
  EXPECT_TRUE(bounds.Admit("a", BoundedLabel::kPath, "/etc"));  // already admitted
  EXPECT_FALSE(bounds.Admit("a", BoundedLabel::kPath, "/usr/lib"));
  // Per extension and per label kind.
  EXPECT_TRUE(bounds.Admit("b", BoundedLabel::kPath, "/usr/lib"));
  EXPECT_TRUE(bounds.Admit("a", BoundedLabel::kDestination, "/usr/lib"));

  LabelBounds restored({.path = 2});
  std::string snapshot;
  bounds.AppendSnapshot(snapshot);
  ASSERT_TRUE(restored.Restore(nlohmann::json::parse(snapshot)));
  EXPECT_TRUE(restored.Admit("a", BoundedLabel::kPath, "~/.ssh"));
  EXPECT_FALSE(restored.Admit("a", BoundedLabel::kPath, "/var"));
}

TEST(LauncherLedger, AppliesEachSequenceNumberOnce) {
  LauncherLedger ledger;
  // A launcher with nothing applied may start anywhere (e.g. after a lost state file).
  EXPECT_EQ(ledger.Classify("L", 7), LauncherLedger::Check::kApply);
  ledger.Applied("L", 7);
  EXPECT_EQ(ledger.Classify("L", 8), LauncherLedger::Check::kApply);
  EXPECT_EQ(ledger.Classify("L", 7), LauncherLedger::Check::kDuplicate);
  EXPECT_EQ(ledger.Classify("L", 3), LauncherLedger::Check::kDuplicate);
  EXPECT_EQ(ledger.Classify("L", 10), LauncherLedger::Check::kGap);
  ledger.Touch("L", "github", 100);
  ledger.Touch("old", "github", 1);
  ledger.Prune(200, 150);
  EXPECT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(ledger.LastSeq("L"), 7u);
}

TEST(CollectorState, RoundTripKeepsEverySeriesAndSequence) {
  auto dir = std::filesystem::temp_directory_path() / ("gander-state-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = dir / "state.json";

  MetricStore store;
  LabelBounds bounds({});
  EventMetrics metrics(store, bounds);
  metrics.OnHello(MakeHello());
  metrics.Apply(Counted("read", 5), "/home/u");
  metrics.ToolCall("github", "search", "ok", 0.3);
  metrics.SetRunning("github", 1);
  LauncherLedger ledger;
  ledger.Touch("L", "github", 100);
  ledger.Applied("L", 41);
  ASSERT_TRUE(SaveState(path, 2, store, metrics.bounds(), ledger));
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

  MetricStore store2;
  LabelBounds bounds2({});
  LauncherLedger ledger2;
  auto loaded = LoadState(path, store2, bounds2, ledger2);
  ASSERT_TRUE(loaded) << loaded.error().Describe();
  EXPECT_EQ(*loaded, 2u);
  EXPECT_EQ(store2.Value(Metric::kSyscalls, {"github", "read", "run"}), 5);
  EXPECT_EQ(store2.Value(Metric::kToolCallDuration, {"github", "search", "ok"}), 1);
  EXPECT_EQ(store2.Value(Metric::kExtensionRunning, {"github"}), 0);  // live state: not kept
  EXPECT_EQ(ledger2.LastSeq("L"), 41u);
  auto snapshot = [](const MetricStore& s) {
    std::string text;
    s.AppendSnapshot(text);
    return nlohmann::json::parse(text);
  };
  EXPECT_EQ(snapshot(store)["gander_tool_call_duration_seconds"],
            snapshot(store2)["gander_tool_call_duration_seconds"]);

  // Missing: a fresh start. Damaged: an error.
  MetricStore store3;
  LabelBounds bounds3({});
  LauncherLedger ledger3;
  auto fresh = LoadState(dir / "none.json", store3, bounds3, ledger3);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(*fresh, 0u);
  std::ofstream(path) << "{\"version\":1,\"metrics\":";
  EXPECT_FALSE(LoadState(path, store3, bounds3, ledger3));
  std::filesystem::remove_all(dir);
}

// The state is written as text, not through a JSON library: every value an extension can
// put in a label, quotes, backslashes, control-character keys, non-ASCII, must read back.
TEST(CollectorState, LabelValuesWithJsonSyntaxReadBackTheSame) {
  auto dir = std::filesystem::temp_directory_path() / ("gander-state2-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = dir / "state.json";
  const std::string ext = "ext \"q\" \\",
                    value = SanitizeLabelValue("/a\\b\"c\n\xc3\xa9\xff{}[],:");
  MetricStore store;
  store.Add(Metric::kFileOutsideWorkspace, {ext, value, "other", "read", "allowed", "run"}, 3);
  store.Observe(Metric::kToolCallDuration, {ext, "t", "ok"}, 0.1 + 0.2);
  LabelBounds bounds({});
  ASSERT_TRUE(bounds.Admit(ext, BoundedLabel::kPath, value));
  LauncherLedger ledger;
  ledger.Touch("L", ext, 100);
  ledger.Applied("L", 9);
  ASSERT_TRUE(SaveState(path, 1, store, bounds, ledger));

  MetricStore store2;
  LabelBounds bounds2({.path = 1});
  LauncherLedger ledger2;
  ASSERT_TRUE(LoadState(path, store2, bounds2, ledger2));
  EXPECT_EQ(
      store2.Value(Metric::kFileOutsideWorkspace, {ext, value, "other", "read", "allowed", "run"}),
      3);
  EXPECT_TRUE(bounds2.Admit(ext, BoundedLabel::kPath, value));  // the one admitted value
  EXPECT_FALSE(bounds2.Admit(ext, BoundedLabel::kPath, "/x"));
  EXPECT_EQ(ledger2.entries().at("L").extension, ext);
  std::string a, b;
  store.AppendSnapshot(a);
  store2.AppendSnapshot(b);
  EXPECT_EQ(nlohmann::json::parse(a), nlohmann::json::parse(b));
  // The sum to the last bit, against the value itself, not only the writer against itself.
  auto sum = nlohmann::json::parse(b)["gander_tool_call_duration_seconds"][0]["sum"];
  EXPECT_EQ(sum.get<double>(), 0.1 + 0.2);
  std::filesystem::remove_all(dir);
}

// Saves alternate between two slots, overwritten in place; the reader takes the newest whole
// one. A save torn by a crash (its start rewritten, its end the older text's; or whole but
// followed by the older text's tail) leaves the save before it, which is all that was
// acknowledged.
TEST(CollectorState, ATornSaveLeavesThePreviousOne) {
  auto dir = std::filesystem::temp_directory_path() / ("gander-state3-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir / "state.json";
  MetricStore store;
  LabelBounds bounds({});
  LauncherLedger ledger;
  auto save = [&](uint64_t generation, int64_t starts) {
    store.Set(Metric::kExtensionStarts, {"github"}, starts);
    ledger.Touch("L", "github", 100);
    ledger.Applied("L", static_cast<uint64_t>(starts));
    return SaveState(path, generation, store, bounds, ledger);
  };
  // The generation read, kFailed when none is readable.
  constexpr uint64_t kFailed = 99;
  auto load = [&](int64_t* starts) {
    MetricStore s;
    LabelBounds b({});
    LauncherLedger l;
    auto g = LoadState(path, s, b, l);
    *starts = s.Value(Metric::kExtensionStarts, {"github"});
    return g ? *g : kFailed;
  };
  auto read = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  int64_t starts = 0;
  ASSERT_TRUE(save(1, 1));
  ASSERT_TRUE(save(2, 2));
  EXPECT_EQ(StateSlot(path, 1), path + ".alt");
  EXPECT_EQ(StateSlot(path, 2), path);
  for (const std::string& slot : {path, path + ".alt"}) {
    EXPECT_EQ(std::filesystem::status(slot).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
  ASSERT_EQ(load(&starts), 2u);
  EXPECT_EQ(starts, 2);
  // A longer save overwritten by a shorter one: the file is cut to the new text.
  for (int i = 0; i < 20; ++i) ledger.Touch("X" + std::to_string(i), "github", 100);
  ASSERT_TRUE(save(3, 3));
  for (int i = 0; i < 20; ++i) ledger.Forget("X" + std::to_string(i));
  ASSERT_TRUE(save(5, 5));
  ASSERT_EQ(load(&starts), 5u);
  EXPECT_EQ(starts, 5);
  EXPECT_NE(read(path + ".alt").back(), ' ');
  ASSERT_TRUE(nlohmann::json::accept(read(path + ".alt")));

  // Save 6 torn: its first half over save 4's... text (the slot of even generations).
  ASSERT_TRUE(save(4, 4));
  const std::string older = read(path);
  ASSERT_TRUE(save(6, 6));
  const std::string newer = read(path);
  ASSERT_EQ(older.size(), newer.size());  // same shape: a tear anywhere keeps valid JSON shape
  const size_t end_digit = newer.find("\"generation_end\":") + 17;
  const size_t in_sum = newer.find("\"checksum\":\"") + 14;
  for (size_t cut : {size_t{1}, newer.size() / 2, end_digit, in_sum}) {
    std::ofstream(path, std::ios::binary) << newer.substr(0, cut) << older.substr(cut);
    ASSERT_EQ(load(&starts), 5u) << "cut at " << cut;
    EXPECT_EQ(starts, 5);
  }
  // Whole, but the shorter text not yet cut: the older one's tail follows it.
  std::ofstream(path, std::ios::binary) << newer << "xx\n";
  ASSERT_EQ(load(&starts), 5u);
  // A retry under the same number (a save that failed after its text was written) torn by a
  // crash: both halves say generation 6, the checksum does not match.
  ASSERT_TRUE(save(6, 8));
  const std::string retried = read(path);
  ASSERT_EQ(retried.size(), newer.size());
  for (size_t cut = 1; cut < newer.size(); cut += 7) {
    std::ofstream(path, std::ios::binary) << newer.substr(0, cut) << retried.substr(cut);
    const uint64_t got = load(&starts);
    // Generation 6 only when the bytes are one whole save (a cut past the last difference).
    const std::string now = read(path);
    ASSERT_TRUE(got == 5u || (got == 6u && (now == newer || now == retried))) << "cut at " << cut;
  }
  // A generation of the wrong type: that slot is unreadable (no exception escapes).
  std::string typed = newer;
  typed.replace(typed.find("\"generation\":6"), 14, "\"generation\":\"6\"");
  std::ofstream(path, std::ios::binary) << typed;
  ASSERT_EQ(load(&starts), 5u);
  // Both slots unreadable: an error, not a fresh start.
  std::ofstream(path + ".alt", std::ios::binary) << "{";
  EXPECT_EQ(load(&starts), kFailed);
  // Only the other slot missing: the remaining one.
  std::filesystem::remove(path + ".alt");
  std::ofstream(path, std::ios::binary) << newer;
  ASSERT_EQ(load(&starts), 6u);

  // A file of before the two slots (no generation): read as generation 0; the next save (1)
  // goes to the other slot and leaves it whole.
  std::string legacy = newer;
  legacy.erase(legacy.find(",\"checksum\""),
               std::string(",\"checksum\":\"0123456789abcdef\"").size());
  legacy.erase(legacy.find(",\"generation_end\""), std::string(",\"generation_end\":6").size());
  legacy.erase(legacy.find(",\"generation\""), std::string(",\"generation\":6").size());
  ASSERT_TRUE(nlohmann::json::accept(legacy)) << legacy;
  std::ofstream(path, std::ios::binary) << legacy;
  ASSERT_EQ(load(&starts), 0u);
  EXPECT_EQ(starts, 6);
  // Next to an `.alt` (an upgrade, a downgrade that wrote only the old file, an upgrade
  // again): the one written last wins, and the next save numbers above both.
  ASSERT_TRUE(save(7, 7));
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path + ".alt") + std::chrono::seconds(5));
  ASSERT_EQ(load(&starts), 7u);
  EXPECT_EQ(starts, 6);
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path + ".alt") - std::chrono::seconds(5));
  ASSERT_EQ(load(&starts), 7u);
  EXPECT_EQ(starts, 7);

  // Not a regular file at a slot (the state directory is the user's own, 0700): a symlink is
  // replaced, not written through; a FIFO does not block the save.
  const std::string target = dir / "elsewhere";
  std::ofstream(target) << "keep";
  std::filesystem::remove(path);
  std::filesystem::create_symlink(target, path);
  ASSERT_TRUE(save(8, 8));
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(read(target), "keep");
  std::filesystem::remove(path + ".alt");
  ASSERT_EQ(mkfifo((path + ".alt").c_str(), 0600), 0);
  ASSERT_EQ(load(&starts), 8u);  // the FIFO is no slot to read either
  ASSERT_TRUE(save(9, 9));
  EXPECT_TRUE(std::filesystem::is_regular_file(path + ".alt"));
  ASSERT_EQ(load(&starts), 9u);
  EXPECT_EQ(starts, 9);
  std::filesystem::remove_all(dir);
}

TEST(Wire, RecordsRoundTripThroughTheCollectorsParser) {
  Event exec;
  exec.time_ns = 1748772000123456000;
  exec.extension = "github";
  exec.pid = 7;
  exec.sandbox_pid = 2;
  exec.executable = "/bin/sh";
  exec.tool_call = {events::ToolCallState::kOne, events::ToolCall{"run", "12"}};
  exec.payload = events::ProcessEvent{.action = events::ProcessAction::kExec,
                                      .path = "/usr/bin/git",
                                      .argv = {"git", "caf\xe9", "a\\b"},
                                      .error = 13};
  Event net;
  net.time_ns = 1748772000000001000;
  net.extension = "github";
  net.payload = events::NetworkEvent{"example.com", "93.184.215.14",          443,
                                     "tcp",         events::Verdict::kDenied, 111};
  // A relayed UDP flow's event: counts, drops and why it ended survive the wire.
  Event udp;
  udp.time_ns = 1748772000000002000;
  udp.extension = "github";
  udp.payload = events::NetworkEvent{.ip = "10.0.0.5",
                                     .port = 53,
                                     .transport = "udp",
                                     .rule = "10.0.0.5",
                                     .bytes_out = 40,
                                     .bytes_in = 200,
                                     .datagrams_out = 2,
                                     .datagrams_in = 2,
                                     .datagrams_dropped = 1,
                                     .end = "evicted"};
  Event exit_event;
  exit_event.extension = "github";
  exit_event.time_ns = 1000;
  exit_event.payload = events::ProcessEvent{.action = events::ProcessAction::kExit, .signal = 9};
  LineParser parser;
  for (const Event& e :
       {exec, net, udp, exit_event, FileEvent("/tmp/\xff", events::PathClass::kPrivate),
        Counted("", 3), Lifecycle(events::LifecyclePhase::kEventsDropped, "9")}) {
    std::string line = WithoutNewline(wire::EncodeRecord(9, e));
    auto parsed = parser.ParseLine(line);
    ASSERT_TRUE(parsed) << parsed.error().message << "\n" << line;
    EXPECT_EQ(parsed->seq, 9u);
    EXPECT_FALSE(parsed->backlog_gap);
    EXPECT_EQ(events::ToJsonLine(parsed->event), events::ToJsonLine(e));
  }
  auto gap = parser.ParseLine(WithoutNewline(wire::EncodeRecord(
      3, Lifecycle(events::LifecyclePhase::kEventsDropped, "4"), wire::kStageBacklog)));
  ASSERT_TRUE(gap);
  EXPECT_TRUE(gap->backlog_gap);
  auto bye = parser.ParseLine(WithoutNewline(wire::EncodeBye(12)));
  ASSERT_TRUE(bye);
  EXPECT_EQ(bye->kind, LauncherLine::Kind::kBye);
  EXPECT_EQ(bye->seq, 12u);
}

TEST(Wire, TimestampsOutOfRangeAreRefusedBeforeAnyArithmetic) {
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T00:00:01.000002Z"), int64_t{1000002000});
  // Found by fuzz.wire: year 1012 overflowed the nanoseconds (undefined behaviour).
  for (const char* bad :
       {"1012-06-01T10:00:00.000000Z", "9999-06-01T10:00:00.000000Z", "-999-06-01T10:00:00.000000Z",
        "2025-06-01T10:00:00.-12345Z", "2025-06-01T-1:00:00.000000Z"}) {
    EXPECT_EQ(ParseRfc3339Micros(bad), std::nullopt) << bad;
  }
}

TEST(Wire, HelloRoundTrip) {
  LineParser parser;
  auto h = parser.ParseHello(WithoutNewline(wire::EncodeHello(MakeHello())));
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->launcher, "123-abc");
  EXPECT_EQ(h->extension, "github");
  EXPECT_EQ(h->info.destinations, std::vector<std::string>{"api.github.com"});
  EXPECT_EQ(h->info.secrets, std::vector<std::string>{"GITHUB_TOKEN"});
  EXPECT_EQ(h->home, "/home/u");
}

// A newer launcher's event kind or lifecycle phase: the line goes to the audit log as sent,
// counted in no metric, and the launcher stays connected.
TEST(Wire, UnknownKindsAreKeptForTheAuditLogOnly) {
  LineParser parser;
  std::string good = WithoutNewline(wire::EncodeRecord(1, Counted("read", 1)));
  std::string future = good;
  future.replace(future.find("\"kind\":\"syscall\""), 16, "\"kind\":\"teleport\"");
  auto parsed = parser.ParseLine(future);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_FALSE(parsed->counted);
  EXPECT_NE(parsed->event_json.find("teleport"), std::string::npos);
  auto known = parser.ParseLine(good);
  ASSERT_TRUE(known);
  EXPECT_TRUE(known->counted);
}

TEST(Wire, CollectorRejectsBadInput) {
  LineParser parser;
  std::string good = WithoutNewline(wire::EncodeRecord(1, Counted("read", 1)));
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  for (const std::string& bad : {
           std::string("not json"),
           std::string("[1,2]"),
           replace("\"seq\":1", "\"seq\":0"),
           replace("\"seq\":1", "\"seq\":-1"),
           replace("\"action\":\"counted\"", "\"action\":\"maybe\""),
           replace("\"v\":1", "\"v\":2"),
           replace("\"time\":\"2025", "\"time\":\"x025"),
           replace("\"count\":1", "\"count\":\"1\""),
           replace("\"event\":", "\"stage\":\"backlog\",\"event\":"),  // not a drop notice
           replace("\"event\":", "\"stage\":\"elsewhere\",\"event\":"),
           good.substr(0, good.size() - 1),
       }) {
    EXPECT_FALSE(parser.ParseLine(bad)) << bad;
  }
  std::string hello = WithoutNewline(wire::EncodeHello(MakeHello()));
  auto hello_with = [&](const std::string& from, const std::string& to) {
    std::string s = hello;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_FALSE(parser.ParseHello(hello_with("\"v\":1", "\"v\":2")));
  EXPECT_FALSE(parser.ParseHello(hello_with("\"extension\":\"github\"", "\"extension\":\"..\"")));
  EXPECT_FALSE(parser.ParseHello(hello_with("\"extension\":\"github\"", "\"extension\":\"a/b\"")));
  // No hello may name a path: the collector derives its own (a forged one overwrote ~/.bashrc).
  for (std::string path : {"/tmp/x.jsonl", "tmp", ""}) {
    EXPECT_FALSE(parser.ParseHello(
        hello_with("\"audit_log_local\":false", "\"audit_log\":\"" + path + "\"")))
        << path;
    EXPECT_FALSE(parser.ParseHello(hello_with(
        "\"audit_log_local\":false", "\"audit_log_local\":false,\"audit_log\":\"" + path + "\"")))
        << path;
  }
  EXPECT_TRUE(parser.ParseHello(hello));
  EXPECT_FALSE(parser.ParseHello(good));  // a record first
  EXPECT_FALSE(ValidExtensionName(std::string(200, 'a')));
  EXPECT_TRUE(ValidExtensionName("github-mcp_2"));
}

// A forged launcher's tool-call duration: nanoseconds that would overflow an int64_t are
// refused before the multiplication (undefined behaviour before).
TEST(Wire, ToolDurationsThatOverflowAreRefused) {
  LineParser parser;
  Event e;
  e.time_ns = 1748772000123456000;
  e.extension = "github";
  e.payload =
      events::ToolEvent{.name = "search", .request_id = "7", .outcome = "ok", .duration_ns = 5000};
  std::string good = WithoutNewline(wire::EncodeRecord(1, e));
  ASSERT_NE(good.find("\"duration_us\":5"), std::string::npos) << good;
  auto with = [&](const std::string& us) {
    std::string s = good;
    return s.replace(s.find("\"duration_us\":5"), 15, "\"duration_us\":" + us);
  };
  EXPECT_TRUE(parser.ParseLine(with("9223372036854775")));  // INT64_MAX / 1000
  for (const char* bad : {"9223372036854776", "9223372036854775807", "-1"}) {
    EXPECT_FALSE(parser.ParseLine(with(bad))) << bad;
  }
}

TEST(Wire, LauncherParsesReplies) {
  auto w = wire::ParseReply(WithoutNewline(wire::EncodeWelcome(17)));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind, wire::Reply::Kind::kWelcome);
  EXPECT_EQ(w->seq, 17u);
  auto a = wire::ParseReply(WithoutNewline(wire::EncodeAck(18)));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, wire::Reply::Kind::kAck);
  auto e = wire::ParseReply(WithoutNewline(wire::EncodeError("bad \"seq\"\n")));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, wire::Reply::Kind::kError);
  EXPECT_EQ(e->reason, "bad ?seq??");
  EXPECT_FALSE(wire::ParseReply("{\"t\":\"ack\"}"));
}

TEST(EventMetrics, ExitReasons) {
  ExpectMaps(ExitReason, {{"exited with status 0", "clean"},
                          {"exited with status 1", "failure"},
                          {"exited with status 137", "signal"},
                          {"could not start: exec: No such file", "start_failed"},
                          {"whatever", "other"}});
}

TEST(EventMetrics, MapsEventsAndCapsLabels) {
  MetricStore store;
  EventMetrics m(store, LabelBounds({.path = 1, .syscall = 2}));
  m.OnHello(MakeHello());
  // Implied series at 0.
  EXPECT_EQ(store.Value(Metric::kDenials, {"github", "network", "broker", "enforce", "run"}), 0);
  EXPECT_EQ(store.Value(Metric::kEgressConnections, {"github", "api.github.com", "allowed", "run"}),
            0);

  m.Apply(FileEvent("/home/u/.ssh/id", events::PathClass::kDenied), "/home/u");
  m.Apply(FileEvent("/home/u/.aws/creds", events::PathClass::kOutside), "/home/u");
  m.Apply(FileEvent("/work/x", events::PathClass::kWorkspace), "/home/u");  // not counted
  m.Apply(FileEvent("/etc/shadow", events::PathClass::kDenied, events::Verdict::kDenied),
          "/home/u");
  EXPECT_EQ(store.Value(Metric::kFileOutsideWorkspace,
                        {"github", "~/.ssh", "denied", "read", "allowed", "run"}),
            1);
  EXPECT_EQ(store.Value(Metric::kFileOutsideWorkspace,
                        {"github", "other", "outside", "read", "allowed", "run"}),
            1);
  EXPECT_EQ(
      store.Value(Metric::kLabelOverflow, {"gander_file_access_outside_workspace_total", "path"}),
      2);
  EXPECT_EQ(store.Value(Metric::kDenials, {"github", "file", "seccomp", "enforce", "run"}), 1);

  m.Apply(Counted("read", 10), "");
  m.Apply(Counted("openat", 2), "");
  m.Apply(Counted("close", 3), "");
  EXPECT_EQ(store.Value(Metric::kSyscalls, {"github", "read", "run"}), 10);
  EXPECT_EQ(store.Value(Metric::kSyscalls, {"github", "other", "run"}), 3);

  Event denied;
  denied.extension = "github";
  denied.payload = events::SyscallEvent{.name = "ptrace", .nr = 101, .error = 1};
  m.Apply(denied, "");
  EXPECT_EQ(store.Value(Metric::kDenials, {"github", "syscall", "seccomp", "enforce", "run"}), 1);

  m.Apply(Lifecycle(events::LifecyclePhase::kStart, "x"), "");
  m.Apply(Lifecycle(events::LifecyclePhase::kStop, "exited with status 0"), "");
  m.Apply(Lifecycle(events::LifecyclePhase::kEventsDropped, "12"), "");
  m.Apply(Lifecycle(events::LifecyclePhase::kEventsDropped, "5"), "", true);
  EXPECT_EQ(store.Value(Metric::kExtensionStarts, {"github"}), 1);
  EXPECT_EQ(store.Value(Metric::kExtensionExits, {"github", "clean"}), 1);
  EXPECT_EQ(store.Value(Metric::kEventsDropped, {"github", "queue"}), 12);
  EXPECT_EQ(store.Value(Metric::kEventsDropped, {"github", "backlog"}), 5);

  // UDP flows: counted by why they ended, with the datagrams the relay dropped.
  for (const char* end : {"idle", "evicted", "evicted", "exit"}) {
    Event flow;
    flow.extension = "github";
    flow.payload = events::NetworkEvent{.ip = "10.0.0.5",
                                        .port = 53,
                                        .transport = "udp",
                                        .datagrams_out = 1,
                                        .datagrams_dropped = 2,
                                        .end = end};
    m.Apply(flow, "");
  }
  EXPECT_EQ(store.Value(Metric::kUdpFlows, {"github", "idle"}), 1);
  EXPECT_EQ(store.Value(Metric::kUdpFlows, {"github", "evicted"}), 2);
  EXPECT_EQ(store.Value(Metric::kUdpFlows, {"github", "exit"}), 1);
  EXPECT_EQ(store.Value(Metric::kUdpDatagramsDropped, {"github"}), 8);

  // A new policy replaces the info series instead of adding a second one.
  wire::Hello h = MakeHello();
  h.info.run.policy_sha256 = "1111";
  m.OnHello(h);
  size_t info_series = 0;
  for (const auto& family : store.Collect()) {
    if (family.name == "gander_extension_info") info_series = family.metric.size();
  }
  EXPECT_EQ(info_series, 1u);

  // A connection that describes no run (the install phase's events) keeps the series.
  wire::Hello install;
  install.launcher = "456-def";
  install.extension = "github";
  m.OnHello(install);
  EXPECT_EQ(store.Value(Metric::kExtensionInfo,
                        {"github", "native", "full", "enforce", "1111", "watched"}),
            1);
}

// Every label a launcher names is its own bytes to choose: a forged launcher (one holding the
// token) must not make series the real relay never does, nor two that differ only in bytes
// the state file writes alike (one would overwrite the other at a restart).
TEST(EventMetrics, ForgedOutcomesAndRunLabelsMakeNoSeriesOfTheirOwn) {
  MetricStore store;
  EventMetrics m(store, LabelBounds({}));
  for (const char* outcome : {"ok", "weird", "ok\xff", "ok\xfe", "ok\n"}) {
    Event e;
    e.extension = "github";
    e.payload = events::ToolEvent{.name = "search", .outcome = outcome, .duration_ns = 1000};
    m.Apply(e, "");
  }
  EXPECT_EQ(store.Value(Metric::kToolCalls, {"github", "search", "ok"}), 1);
  EXPECT_EQ(store.Value(Metric::kToolCalls, {"github", "search", "other"}), 4);
  for (auto outcome : events::kToolOutcomes) {
    m.ToolCall("github", "search", outcome, 0.1);
    EXPECT_EQ(store.Value(Metric::kToolCalls, {"github", "search", std::string(outcome)}),
              outcome == "ok" ? 2 : 1)
        << outcome;
  }

  wire::Hello h = MakeHello();
  h.info.run.backend = "native\xff\n";
  m.OnHello(h);
  EXPECT_EQ(store.Value(Metric::kExtensionInfo,
                        {"github", "native\\xff?", "full", "enforce", "00ff", "watched"}),
            1);
}

// gander's install of the package (a postinstall script reading ~/.ssh) is counted, under
// phase="install", in the same series the alerts match on; its lifecycle is not the
// extension's: no start, no exit.
TEST(EventMetrics, InstallPhaseEventsAreCountedUnderTheirPhase) {
  MetricStore store;
  EventMetrics m(store, LabelBounds({}));
  m.OnHello(MakeHello());
  auto install = [](Event e) {
    e.install_phase = true;
    return e;
  };
  m.Apply(install(FileEvent("/home/u/.ssh/id_rsa", events::PathClass::kDenied,
                            events::Verdict::kDenied)),
          "/home/u");
  m.Apply(install(Counted("read", 4)), "");
  m.Apply(install(Lifecycle(events::LifecyclePhase::kStart, "npm install")), "");
  m.Apply(install(Lifecycle(events::LifecyclePhase::kStop, "exited with status 1")), "");
  m.Apply(FileEvent("/home/u/.ssh/id_rsa", events::PathClass::kDenied), "/home/u");
  m.Apply(Lifecycle(events::LifecyclePhase::kStart, "x"), "");
  EXPECT_EQ(store.Value(Metric::kFileOutsideWorkspace,
                        {"github", "~/.ssh", "denied", "read", "denied", "install"}),
            1);
  EXPECT_EQ(store.Value(Metric::kFileOutsideWorkspace,
                        {"github", "~/.ssh", "denied", "read", "allowed", "run"}),
            1);
  EXPECT_EQ(store.Value(Metric::kDenials, {"github", "file", "seccomp", "enforce", "install"}), 1);
  EXPECT_EQ(store.Value(Metric::kDenials, {"github", "file", "seccomp", "enforce", "run"}), 0);
  EXPECT_EQ(store.Value(Metric::kSyscalls, {"github", "read", "install"}), 4);
  EXPECT_EQ(store.Value(Metric::kExtensionStarts, {"github"}), 1);  // the run's only
  EXPECT_EQ(store.Value(Metric::kExtensionExits, {"github", "failure"}), 0);
}

// A state file written before the phase label restores into phase="run", not "damaged".
TEST(MetricStore, AStateWithoutThePhaseLabelRestoresAsTheRun) {
  MetricStore store;
  nlohmann::json old = {
      {"gander_denials_total",
       {{{"labels", {"github", "file", "seccomp", "enforce"}}, {"value", 7}}}},
      {"gander_extension_starts_total", {{{"labels", {"github"}}, {"value", 3}}}}};
  ASSERT_TRUE(store.Restore(old));
  EXPECT_EQ(store.Value(Metric::kDenials, {"github", "file", "seccomp", "enforce", "run"}), 7);
  EXPECT_EQ(store.Value(Metric::kExtensionStarts, {"github"}), 3);
}

TEST(MetricStore, LabelValuesAreValidUtf8) {
  EXPECT_EQ(SanitizeLabelValue("caf\xe9\n"), "caf\\xe9?");
}

}  // namespace
}  // namespace gander::exporters::collector
