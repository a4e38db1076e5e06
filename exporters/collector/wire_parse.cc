// Launcher lines -> hello / records, validated (see wire_parse.h).
#include "exporters/collector/wire_parse.h"

#include <time.h>

#include <cerrno>
#include <charconv>
#include <cstdint>

#include "events/event_json.h"

namespace gander::exporters::collector {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Every string field of an event: audit-log byte escaping undone, bounded.
constexpr size_t kMaxStringBytes = 4096;

Error Bad(std::string_view what) { return MakeError(std::string(what)); }

// The inverse of ToString for an enumeration with `count` values.
template <typename E>
std::optional<E> EnumFrom(std::string_view text, int count) {
  for (int i = 0; i < count; ++i) {
    if (events::ToString(static_cast<E>(i)) == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

// A byte string: the JSON string, then audit-log byte escaping undone.
Result<std::string> Bytes(const object& o, const char* key, bool nullable = false) {
  element e;
  if (o[key].get(e)) return Bad(std::string("missing ") + key);
  if (nullable && e.is_null()) return std::string();
  std::string_view s;
  if (e.get_string().get(s)) return Bad(std::string(key) + " is not a string");
  if (s.size() > kMaxStringBytes) return Bad(std::string(key) + " is too long");
  auto bytes = events::UnescapeBytes(s);
  if (!bytes) return Bad(std::string(key) + " has a malformed byte escape");
  return std::move(*bytes);
}

Result<int64_t> Int(const object& o, const char* key) {
  int64_t v = 0;
  if (o[key].get_int64().get(v)) return Bad(std::string(key) + " is not an integer");
  return v;
}

Result<std::optional<int32_t>> OptionalInt32(const object& o, const char* key) {
  element e;
  if (o[key].get(e)) return Bad(std::string("missing ") + key);
  if (e.is_null()) return std::optional<int32_t>();
  int64_t v = 0;
  if (e.get_int64().get(v) || v < INT32_MIN || v > INT32_MAX) {
    return Bad(std::string(key) + " is not a 32-bit integer");
  }
  return std::optional<int32_t>(static_cast<int32_t>(v));
}

Result<bool> Bool(const object& o, const char* key) {
  bool v = false;
  if (o[key].get_bool().get(v)) return Bad(std::string(key) + " is not a boolean");
  return v;
}

template <typename E>
Result<E> Enum(const object& o, const char* key, int count) {
  std::string_view s;
  if (o[key].get_string().get(s)) return Bad(std::string(key) + " is not a string");
  auto v = EnumFrom<E>(s, count);
  if (!v) return Bad(std::string("unknown ") + key + " '" + std::string(s.substr(0, 64)) + "'");
  return *v;
}

// Early return of an error from a Result-valued expression.
#define GANDER_TRY_ASSIGN(lhs, expr)       \
  do {                                     \
    auto r_ = (expr);                      \
    if (!r_) return std::move(r_).error(); \
    lhs = std::move(r_).value();           \
  } while (0)

Status ParseFile(const object& o, events::FileEvent& f) {
  GANDER_TRY_ASSIGN(f.syscall, Bytes(o, "syscall"));
  GANDER_TRY_ASSIGN(f.raw_path, Bytes(o, "raw_path"));
  GANDER_TRY_ASSIGN(f.raw_path_truncated, Bool(o, "raw_path_truncated"));
  element path;
  if (o["path"].get(path)) return Bad("missing path");
  if (!path.is_null()) {
    std::string p;
    GANDER_TRY_ASSIGN(p, Bytes(o, "path"));
    f.path = std::move(p);
  }
  if (o["path_label"].get_string().error() == simdjson::SUCCESS) {
    GANDER_TRY_ASSIGN(f.path_label, Bytes(o, "path_label"));
  }
  GANDER_TRY_ASSIGN(f.path_class, Enum<events::PathClass>(o, "class", 8));
  GANDER_TRY_ASSIGN(f.access, Enum<events::FileAccess>(o, "access", 9));
  GANDER_TRY_ASSIGN(f.result, Enum<events::Verdict>(o, "result", 3));
  int64_t err = 0;
  GANDER_TRY_ASSIGN(err, Int(o, "errno"));
  f.error = static_cast<int>(err);
  return {};
}

Status ParseNetwork(const object& o, events::NetworkEvent& n) {
  GANDER_TRY_ASSIGN(n.host, Bytes(o, "host", true));
  GANDER_TRY_ASSIGN(n.ip, Bytes(o, "ip", true));
  int64_t port = 0;
  GANDER_TRY_ASSIGN(port, Int(o, "port"));
  if (port < 0 || port > 65535) return Bad("port out of range");
  n.port = static_cast<uint16_t>(port);
  GANDER_TRY_ASSIGN(n.transport, Bytes(o, "transport", true));
  GANDER_TRY_ASSIGN(n.result, Enum<events::Verdict>(o, "result", 3));
  int64_t err = 0;
  GANDER_TRY_ASSIGN(err, Int(o, "errno"));
  n.error = static_cast<int>(err);
  // The broker's fields (absent from older launchers).
  if (o["rule"].get_string().error() == simdjson::SUCCESS) {
    GANDER_TRY_ASSIGN(n.rule, Bytes(o, "rule"));
  }
  uint64_t bytes = 0;
  if (!o["bytes_out"].get_uint64().get(bytes)) n.bytes_out = bytes;
  if (!o["bytes_in"].get_uint64().get(bytes)) n.bytes_in = bytes;
  if (!o["datagrams_out"].get_uint64().get(bytes)) n.datagrams_out = bytes;
  if (!o["datagrams_in"].get_uint64().get(bytes)) n.datagrams_in = bytes;
  if (!o["datagrams_dropped"].get_uint64().get(bytes)) n.datagrams_dropped = bytes;
  if (o["end"].get_string().error() == simdjson::SUCCESS) {
    GANDER_TRY_ASSIGN(n.end, Bytes(o, "end"));
  }
  return {};
}

Status ParseSyscall(const object& o, events::SyscallEvent& s) {
  GANDER_TRY_ASSIGN(s.name, Bytes(o, "name", true));
  int64_t nr = 0, err = 0;
  GANDER_TRY_ASSIGN(nr, Int(o, "nr"));
  s.nr = static_cast<int>(nr);
  GANDER_TRY_ASSIGN(s.action, Enum<events::SyscallAction>(o, "action", 2));
  uint64_t count = 0;
  if (o["count"].get_uint64().get(count)) return Bad("count is not an unsigned integer");
  s.count = count;
  GANDER_TRY_ASSIGN(err, Int(o, "errno"));
  s.error = static_cast<int>(err);
  return {};
}

Status ParseProcess(const object& o, events::ProcessEvent& p) {
  GANDER_TRY_ASSIGN(p.action, Enum<events::ProcessAction>(o, "action", 2));
  GANDER_TRY_ASSIGN(p.path, Bytes(o, "path", true));
  array argv;
  if (o["argv"].get_array().get(argv)) return Bad("argv is not an array");
  for (element a : argv) {
    std::string_view s;
    if (a.get_string().get(s)) return Bad("argv entry is not a string");
    auto bytes = events::UnescapeBytes(s);
    if (!bytes || p.argv.size() >= events::kMaxArgvEntries) return Bad("bad argv");
    p.argv.push_back(std::move(*bytes));
  }
  GANDER_TRY_ASSIGN(p.argv_truncated, Bool(o, "argv_truncated"));
  GANDER_TRY_ASSIGN(p.exit_code, OptionalInt32(o, "exit_code"));
  GANDER_TRY_ASSIGN(p.signal, OptionalInt32(o, "signal"));
  int64_t err = 0;
  GANDER_TRY_ASSIGN(err, Int(o, "errno"));
  p.error = static_cast<int>(err);
  return {};
}

Status ParseLifecycle(const object& o, events::LifecycleEvent& l) {
  auto what = Enum<events::LifecyclePhase>(o, "what", 7);
  if (!what) return Error{ENOTSUP, what.error().message};  // a newer launcher's phase
  l.what = *what;
  GANDER_TRY_ASSIGN(l.detail, Bytes(o, "detail"));
  if (l.what == events::LifecyclePhase::kEventsDropped) {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(l.detail.data(), l.detail.data() + l.detail.size(), n);
    if (ec != std::errc() || end != l.detail.data() + l.detail.size()) {
      return Bad("events_dropped detail is not a count");
    }
  }
  return {};
}

// What the metrics need of a finished tool call; the audit log keeps the rest as sent.
Status ParseTool(const object& o, events::ToolEvent& t) {
  GANDER_TRY_ASSIGN(t.name, Bytes(o, "name"));
  GANDER_TRY_ASSIGN(t.request_id, Bytes(o, "request_id"));
  GANDER_TRY_ASSIGN(t.outcome, Bytes(o, "outcome"));
  if (t.outcome.size() > wire::kMaxNameBytes) return Bad("outcome is too long");
  int64_t us = 0;
  GANDER_TRY_ASSIGN(us, Int(o, "duration_us"));
  // Nanoseconds must fit an int64_t (a forged value would overflow the product).
  if (us < 0 || us > INT64_MAX / 1000) return Bad("duration_us out of range");
  t.duration_ns = us * 1000;
  return {};
}

Status ParseRedaction(const object& o, events::RedactionEvent& r) {
  GANDER_TRY_ASSIGN(r.secret, Bytes(o, "secret"));
  GANDER_TRY_ASSIGN(r.channel, Bytes(o, "channel"));
  if (r.channel != "stdout" && r.channel != "stderr") return Bad("unknown channel");
  int64_t count = 0;
  GANDER_TRY_ASSIGN(count, Int(o, "count"));
  if (count < 1 || count > 1'000'000) return Bad("bad redaction count");
  r.count = static_cast<uint64_t>(count);
  return {};
}

Result<events::Event> ParseEvent(const object& o) {
  events::Event e;
  int64_t v = 0;
  GANDER_TRY_ASSIGN(v, Int(o, "v"));
  if (v != events::kEventSchemaVersion) return Bad("unknown event schema version");
  std::string_view time;
  if (o["time"].get_string().get(time)) return Bad("time is not a string");
  auto ns = ParseRfc3339Micros(time);
  if (!ns) return Bad("time is not RFC 3339 UTC with microseconds");
  e.time_ns = *ns;
  GANDER_TRY_ASSIGN(e.extension, Bytes(o, "extension"));
  GANDER_TRY_ASSIGN(e.pid, OptionalInt32(o, "pid"));
  GANDER_TRY_ASSIGN(e.sandbox_pid, OptionalInt32(o, "sandbox_pid"));
  GANDER_TRY_ASSIGN(e.executable, Bytes(o, "exe", true));
  if (std::string_view phase; !o["phase"].get_string().get(phase)) {
    if (phase != "install") return Bad("unknown phase");
    e.install_phase = true;
  }

  object tc;
  if (o["tool_call"].get_object().get(tc)) return Bad("tool_call is not an object");
  GANDER_TRY_ASSIGN(e.tool_call.state, Enum<events::ToolCallState>(tc, "state", 4));
  if (e.tool_call.state == events::ToolCallState::kOne) {
    events::ToolCall call;
    GANDER_TRY_ASSIGN(call.tool, Bytes(tc, "tool", true));
    GANDER_TRY_ASSIGN(call.request_id, Bytes(tc, "request_id", true));
    e.tool_call.call = std::move(call);
  }

  auto parsed_kind = Enum<events::EventKind>(o, "kind", 7);
  if (!parsed_kind) return Error{ENOTSUP, parsed_kind.error().message};  // a newer launcher's
  events::EventKind kind = *parsed_kind;
  object payload;
  std::string name(events::ToString(kind));
  if (o[name].get_object().get(payload)) return Bad("missing the " + name + " object");
  Status status;
  switch (kind) {
    case events::EventKind::kFile:
      status = ParseFile(payload, e.payload.emplace<events::FileEvent>());
      break;
    case events::EventKind::kNetwork:
      status = ParseNetwork(payload, e.payload.emplace<events::NetworkEvent>());
      break;
    case events::EventKind::kSyscall:
      status = ParseSyscall(payload, e.payload.emplace<events::SyscallEvent>());
      break;
    case events::EventKind::kProcess:
      status = ParseProcess(payload, e.payload.emplace<events::ProcessEvent>());
      break;
    case events::EventKind::kLifecycle:
      status = ParseLifecycle(payload, e.payload.emplace<events::LifecycleEvent>());
      break;
    case events::EventKind::kTool:
      status = ParseTool(payload, e.payload.emplace<events::ToolEvent>());
      break;
    case events::EventKind::kRedaction:
      status = ParseRedaction(payload, e.payload.emplace<events::RedactionEvent>());
      break;
  }
  if (!status) return std::move(status).error().Context(name);
  return e;
}

Result<std::string> Label(const object& o, const char* key) {
  std::string_view s;
  if (o[key].get_string().get(s)) return Bad(std::string(key) + " is not a string");
  if (s.size() > wire::kMaxNameBytes) return Bad(std::string(key) + " is too long");
  return std::string(s);
}

Result<std::vector<std::string>> LabelList(const object& o, const char* key) {
  array a;
  if (o[key].get_array().get(a)) return Bad(std::string(key) + " is not an array");
  std::vector<std::string> out;
  for (element e : a) {
    std::string_view s;
    if (e.get_string().get(s) || s.empty() || s.size() > wire::kMaxNameBytes ||
        out.size() >= wire::kMaxHelloListSize) {
      return Bad(std::string("bad ") + key);
    }
    out.emplace_back(s);
  }
  return out;
}

}  // namespace

bool ValidExtensionName(std::string_view name) {
  if (name.empty() || name.size() > wire::kMaxNameBytes || name == "." || name == "..") {
    return false;
  }
  for (char c : name) {
    if (c < 0x21 || c > 0x7e || c == '/' || c == '\\' || c == '"') return false;
  }
  return true;
}

std::optional<int64_t> ParseRfc3339Micros(std::string_view t) {
  // 2025-06-01T10:00:00.123456Z
  if (t.size() != 27 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' ||
      t[16] != ':' || t[19] != '.' || t[26] != 'Z') {
    return std::nullopt;
  }
  auto num = [&](size_t at, size_t len) -> std::optional<int> {
    int v = 0;
    auto [end, ec] = std::from_chars(t.data() + at, t.data() + at + len, v);
    if (ec != std::errc() || end != t.data() + at + len) return std::nullopt;
    return v;
  };
  auto year = num(0, 4), mon = num(5, 2), day = num(8, 2), hour = num(11, 2), min = num(14, 2),
       sec = num(17, 2), micros = num(20, 6);
  // Bytes a launcher (or a forged peer) sent: every field in range before any arithmetic, so
  // nanoseconds since 1970 fit in 64 bits (a year 1012 overflowed; found by fuzz.wire).
  if (!year || !mon || !day || !hour || !min || !sec || !micros || *year < 1970 || *year > 2200 ||
      *mon < 1 || *mon > 12 || *day < 1 || *day > 31 || *hour < 0 || *hour > 23 || *min < 0 ||
      *min > 59 || *sec < 0 || *sec > 60 || *micros < 0) {
    return std::nullopt;
  }
  tm parts{};
  parts.tm_year = *year - 1900;
  parts.tm_mon = *mon - 1;
  parts.tm_mday = *day;
  parts.tm_hour = *hour;
  parts.tm_min = *min;
  parts.tm_sec = *sec;
  time_t secs = timegm(&parts);
  return static_cast<int64_t>(secs) * 1000000000 + static_cast<int64_t>(*micros) * 1000;
}

Result<wire::Hello> LineParser::ParseHello(std::string_view line) {
  element doc;
  object o;
  if (parser_.parse(line.data(), line.size()).get(doc) || doc.get_object().get(o)) {
    return Bad("hello is not a JSON object");
  }
  std::string_view t;
  if (o["t"].get_string().get(t) || t != "hello") return Bad("the first line must be a hello");
  int64_t v = 0;
  if (o["v"].get_int64().get(v) || v != wire::kProtocolVersion) {
    return Bad("unsupported protocol version (this collector speaks " +
               std::to_string(wire::kProtocolVersion) + ")");
  }
  wire::Hello h;
  GANDER_TRY_ASSIGN(h.launcher, Label(o, "launcher"));
  GANDER_TRY_ASSIGN(h.extension, Label(o, "extension"));
  if (h.launcher.empty()) return Bad("empty launcher id");
  if (!ValidExtensionName(h.extension)) return Bad("bad extension name");
  GANDER_TRY_ASSIGN(h.running, Bool(o, "running"));
  GANDER_TRY_ASSIGN(h.info.run.backend, Label(o, "backend"));
  GANDER_TRY_ASSIGN(h.info.run.isolation, Label(o, "isolation"));
  GANDER_TRY_ASSIGN(h.info.run.mode, Label(o, "mode"));
  GANDER_TRY_ASSIGN(h.info.run.policy_sha256, Label(o, "policy_sha256"));
  GANDER_TRY_ASSIGN(h.info.run.syscall_accounting, Label(o, "syscall_accounting"));
  GANDER_TRY_ASSIGN(h.info.destinations, LabelList(o, "destinations"));
  GANDER_TRY_ASSIGN(h.info.secrets, LabelList(o, "secrets"));
  GANDER_TRY_ASSIGN(h.home, Bytes(o, "home"));
  // Checked by the collector against its own (absent: empty, and refused there).
  if (std::string_view token; !o["token"].get_string().get(token)) {
    if (token.size() > wire::kMaxNameBytes) return Bad("token too long");
    h.token = std::string(token);
  }
  // Every path the collector opens is its own, derived from the validated extension name.
  if (o["audit_log"].error() != simdjson::NO_SUCH_FIELD) {
    return Bad("hello names a path (audit_log): the collector derives its paths itself");
  }
  GANDER_TRY_ASSIGN(h.audit_log_local, Bool(o, "audit_log_local"));
  uint64_t max_bytes = 0, max_files = 0;
  if (o["audit_log_max_bytes"].get_uint64().get(max_bytes) ||
      o["audit_log_max_files"].get_uint64().get(max_files) || max_files > 1000) {
    return Bad("bad audit log rotation");
  }
  h.audit_log_max_bytes = max_bytes;
  h.audit_log_max_files = static_cast<int>(max_files);
  return h;
}

Result<LauncherLine> LineParser::ParseLine(std::string_view line) {
  element doc;
  object o;
  if (parser_.parse(line.data(), line.size()).get(doc) || doc.get_object().get(o)) {
    return Bad("line is not a JSON object");
  }
  LauncherLine out;
  if (o["seq"].get_uint64().get(out.seq) || out.seq == 0) return Bad("bad seq");
  std::string_view t;
  if (!o["t"].get_string().get(t)) {
    if (t == "sync") {
      out.kind = LauncherLine::Kind::kSync;
      return out;
    }
    if (t != "bye") return Bad("unknown line type");
    out.kind = LauncherLine::Kind::kBye;
    return out;
  }
  std::string_view stage;
  if (!o["stage"].get_string().get(stage)) {
    if (stage != wire::kStageBacklog) return Bad("unknown stage");
    out.backlog_gap = true;
  }
  object event;
  if (o["event"].get_object().get(event)) return Bad("record without an event object");
  auto parsed = ParseEvent(event);
  if (!parsed && parsed.error().code == ENOTSUP && !out.backlog_gap) {
    // An event kind or phase this collector does not know (a newer launcher): its line still
    // goes to the audit log, it just counts in no metric. Found below like any other.
    out.counted = false;
  } else if (!parsed) {
    return std::move(parsed).error().Context("event");
  } else {
    out.event = std::move(parsed).value();
  }
  // EncodeRecord writes the event last: `{"seq":N[,"stage":"backlog"],"event":{...}}`. Only
  // digits and the checked stage come before it, so the first `"event":{` is the member.
  size_t start = line.find("\"event\":{");
  size_t end = line.find_last_not_of(" \t\r\n");
  if (start == std::string_view::npos || end == std::string_view::npos || line[end] != '}') {
    return Bad("the event must be the record's last member");
  }
  start += 8;
  size_t close = line.find_last_not_of(" \t\r\n", end - 1);
  if (close == std::string_view::npos || close < start || line[close] != '}') {
    return Bad("the event must be the record's last member");
  }
  out.event_json = line.substr(start, close + 1 - start);
  if (out.backlog_gap) {
    const auto* l = std::get_if<events::LifecycleEvent>(&out.event.payload);
    if (!l || l->what != events::LifecyclePhase::kEventsDropped) {
      return Bad("a backlog record must be an events_dropped notice");
    }
  }
  return out;
}

}  // namespace gander::exporters::collector
