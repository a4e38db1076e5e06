// Event -> one JSON line, with byte escaping for non-UTF-8 strings (see event_json.h).
#include "events/event_json.h"

#include <string.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <type_traits>
#include <variant>

namespace gander::events {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when s[i] does not start one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < s.size() && byte(k) >= lo && byte(k) <= hi;
  };
  unsigned char b = byte(i);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (b == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if (b == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;  // no surrogates
  if (b >= 0xE1 && b <= 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (b == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (b >= 0xF1 && b <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (b == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;  // 0x80-0xC1 (continuation or overlong lead), 0xF5-0xFF
}

constexpr char kHex[] = "0123456789abcdef";

// Walks `bytes`, calling on_text(sequence) for valid UTF-8 and on_invalid(byte) otherwise.
template <typename OnText, typename OnInvalid>
void ForEachSequence(std::string_view bytes, OnText on_text, OnInvalid on_invalid) {
  for (size_t i = 0; i < bytes.size();) {
    size_t n = Utf8SequenceLength(bytes, i);
    if (n == 0) {
      on_invalid(static_cast<unsigned char>(bytes[i]));
      ++i;
    } else {
      on_text(bytes.substr(i, n));
      i += n;
    }
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Writes a JSON object's members in order, with the commas.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  void End() { out_ += '}'; }

  void String(std::string_view key, std::string_view value) {
    Key(key);
    AppendJsonString(out_, value);
  }
  // null when empty.
  void StringOrNull(std::string_view key, std::string_view value) {
    if (value.empty()) {
      Null(key);
    } else {
      String(key, value);
    }
  }
  void Int(std::string_view key, int64_t value) {
    Key(key);
    out_ += std::to_string(value);
  }
  void Uint(std::string_view key, uint64_t value) {
    Key(key);
    out_ += std::to_string(value);
  }
  template <typename T>
  void OptionalInt(std::string_view key, const std::optional<T>& value) {
    if (value) {
      Int(key, *value);
    } else {
      Null(key);
    }
  }
  void Bool(std::string_view key, bool value) {
    Key(key);
    out_ += value ? "true" : "false";
  }
  void Null(std::string_view key) {
    Key(key);
    out_ += "null";
  }
  // errno and its symbolic name ("EACCES"), the name null when errno is 0.
  void Errno(int error) {
    Int("errno", error);
    const char* name = error != 0 ? strerrorname_np(error) : nullptr;
    if (name) {
      String("errno_name", name);
    } else {
      Null("errno_name");
    }
  }
  // Starts a nested object member; the caller ends it.
  ObjectWriter Object(std::string_view key) {
    Key(key);
    return ObjectWriter(out_);
  }
  std::string& raw(std::string_view key) {
    Key(key);
    return out_;
  }

 private:
  void Key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += key;  // keys are our own ASCII identifiers
    out_ += "\":";
  }
  std::string& out_;
  bool first_ = true;
};

void WriteFile(ObjectWriter& o, const FileEvent& f) {
  o.String("syscall", f.syscall);
  std::string_view raw = f.raw_path;
  bool truncated = f.raw_path_truncated || raw.size() > kMaxRawPathBytes;
  o.String("raw_path", raw.substr(0, kMaxRawPathBytes));
  o.Bool("raw_path_truncated", truncated);
  if (f.path) {
    o.String("path", *f.path);
  } else {
    o.Null("path");
  }
  o.String("path_label", f.path_label);
  o.String("class", ToString(f.path_class));
  o.String("access", ToString(f.access));
  o.String("result", ToString(f.result));
  o.Errno(f.error);
}

void WriteNetwork(ObjectWriter& o, const NetworkEvent& n) {
  o.StringOrNull("host", n.host);
  o.StringOrNull("ip", n.ip);
  o.Int("port", n.port);
  o.StringOrNull("transport", n.transport);
  o.String("result", ToString(n.result));
  o.Errno(n.error);
  o.StringOrNull("syscall", n.syscall);
  o.StringOrNull("rule", n.rule);
  o.Uint("bytes_out", n.bytes_out);
  o.Uint("bytes_in", n.bytes_in);
  if (n.transport == "udp" && n.result != Verdict::kDenied) {
    o.Uint("datagrams_out", n.datagrams_out);
    o.Uint("datagrams_in", n.datagrams_in);
    o.Uint("datagrams_dropped", n.datagrams_dropped);
    o.StringOrNull("end", n.end);
  }
  o.Uint("duration_us", static_cast<uint64_t>(n.duration_ns / 1000));
}

void WriteSyscall(ObjectWriter& o, const SyscallEvent& s) {
  o.StringOrNull("name", s.name);
  o.Int("nr", s.nr);
  o.String("action", ToString(s.action));
  o.Uint("count", s.count);
  o.Errno(s.error);
}

void WriteProcess(ObjectWriter& o, const ProcessEvent& p) {
  o.String("action", ToString(p.action));
  o.StringOrNull("path", p.path);
  bool truncated = p.argv_truncated || p.argv.size() > kMaxArgvEntries;
  std::string& out = o.raw("argv");
  out += '[';
  for (size_t i = 0; i < p.argv.size() && i < kMaxArgvEntries; ++i) {
    if (i > 0) out += ',';
    std::string_view arg = p.argv[i];
    if (arg.size() > kMaxArgBytes) truncated = true;
    AppendJsonString(out, arg.substr(0, kMaxArgBytes));
  }
  out += ']';
  o.Bool("argv_truncated", truncated);
  o.OptionalInt("exit_code", p.exit_code);
  o.OptionalInt("signal", p.signal);
  o.Errno(p.error);
}

void WriteLifecycle(ObjectWriter& o, const LifecycleEvent& l) {
  o.String("what", ToString(l.what));
  o.String("detail", l.detail);
  if (!l.info) {
    o.Null("info");
    return;
  }
  ObjectWriter i = o.Object("info");
  i.String("backend", l.info->backend);
  i.String("isolation", l.info->isolation);
  i.String("mode", l.info->mode);
  i.String("syscall_accounting", l.info->syscall_accounting);
  i.String("policy_sha256", l.info->policy_sha256);
  i.String("policy", l.info->policy);
  i.String("workspace", l.info->workspace);
  std::string& grants = i.raw("command_grants");
  grants += '[';
  for (size_t n = 0; n < l.info->command_grants.size(); ++n) {
    if (n > 0) grants += ',';
    AppendJsonString(grants, l.info->command_grants[n]);
  }
  grants += ']';
  std::string& secrets = i.raw("secrets");
  secrets += '[';
  for (size_t n = 0; n < l.info->secrets.size(); ++n) {
    const RunSecret& secret = l.info->secrets[n];
    if (n > 0) secrets += ',';
    ObjectWriter s(secrets);
    s.String("name", secret.name);
    s.String("from", secret.from);
    s.String("as", secret.as);
    s.StringOrNull("file", secret.file);
    s.End();
  }
  secrets += ']';
  i.End();
}

void WriteTool(ObjectWriter& o, const ToolEvent& t) {
  o.String("name", t.name);
  o.String("request_id", t.request_id);
  o.String("outcome", t.outcome);
  o.Int("duration_us", t.duration_ns / 1000);
  if (t.error_code) {
    o.Int("error_code", t.error_code);
  } else {
    o.Null("error_code");
  }
  o.Uint("files", t.files);
  o.Uint("network", t.network);
  o.Uint("denials", t.denials);
  if (t.session_id) {
    o.String("session_id", *t.session_id);
  } else {
    o.Null("session_id");
  }
  if (t.working_dir) {
    o.String("working_dir", *t.working_dir);
  } else {
    o.Null("working_dir");
  }
}

void WriteRedaction(ObjectWriter& o, const RedactionEvent& r) {
  o.String("secret", r.secret);
  o.String("channel", r.channel);
  o.Uint("count", r.count);
}

}  // namespace

std::string EscapeBytes(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  ForEachSequence(
      bytes,
      [&](std::string_view seq) {
        if (seq == "\\") out += '\\';
        out += seq;
      },
      [&](unsigned char b) {
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
      });
  return out;
}

std::optional<std::string> UnescapeBytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\\') {
      out += '\\';
      i += 1;
      continue;
    }
    if (i + 3 < text.size() && text[i + 1] == 'x') {
      int hi = HexValue(text[i + 2]), lo = HexValue(text[i + 3]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi << 4 | lo);
      i += 3;
      continue;
    }
    return std::nullopt;
  }
  return out;
}

namespace {

// The JSON string literal of `bytes`. byte_escaped: of EscapeBytes's form (each backslash
// doubled, an invalid byte as \xNN), so the bytes can be recovered; otherwise of the text as
// it is, an invalid byte as U+FFFD.
void AppendJsonLiteral(std::string& out, std::string_view bytes, bool byte_escaped) {
  out += '"';
  // Most strings are printable ASCII with nothing to escape: that part is copied at once.
  auto plain = [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; };
  auto run = std::find_if_not(bytes.begin(), bytes.end(), plain);
  out.append(bytes.begin(), run);
  bytes.remove_prefix(static_cast<size_t>(run - bytes.begin()));
  ForEachSequence(
      bytes,
      [&](std::string_view seq) {
        if (seq.size() > 1) {
          out += seq;
          return;
        }
        unsigned char c = static_cast<unsigned char>(seq[0]);
        switch (c) {
          case '"':
            out += "\\\"";
            break;
          case '\\':
            out += byte_escaped ? "\\\\\\\\" : "\\\\";
            break;
          case '\n':
            out += "\\n";
            break;
          case '\r':
            out += "\\r";
            break;
          case '\t':
            out += "\\t";
            break;
          case '\b':
            out += "\\b";
            break;
          case '\f':
            out += "\\f";
            break;
          default:
            if (c < 0x20 || c == 0x7F) {
              out += "\\u00";
              out += kHex[c >> 4];
              out += kHex[c & 0xF];
            } else {
              out += static_cast<char>(c);
            }
        }
      },
      [&](unsigned char b) {
        if (!byte_escaped) {
          out += "\\ufffd";
          return;
        }
        out += "\\\\x";  // byte-escaped "\xNN", the backslash JSON-encoded
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
      });
  out += '"';
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view bytes) {
  AppendJsonLiteral(out, bytes, true);
}

void AppendJsonText(std::string& out, std::string_view text) {
  AppendJsonLiteral(out, text, false);
}

// Calendar arithmetic, not gmtime_r: glibc's first gmtime_r loads /etc/localtime (tzset), an
// open and two reads on the path of the run's first event, which the extension's execve waits
// behind. In whole seconds: a nanosecond time point near the type's limits overflows.
std::string FormatRfc3339Micros(int64_t unix_ns) {
  using namespace std::chrono;
  int64_t whole = unix_ns / 1'000'000'000;
  int64_t rest = unix_ns % 1'000'000'000;
  if (rest < 0) {  // before 1970: floor, so the fraction stays positive
    rest += 1'000'000'000;
    whole -= 1;
  }
  const sys_seconds at{seconds(whole)};
  const sys_days day = floor<days>(at);
  const year_month_day date(day);
  const hh_mm_ss<seconds> time(at - day);
  char buf[64];
  snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d.%06dZ", static_cast<int>(date.year()),
           static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
           static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
           static_cast<int>(time.seconds().count()), static_cast<int>(rest / 1000));
  return buf;
}

std::string ToJsonLine(const Event& event) {
  std::string out;
  out.reserve(256);
  ObjectWriter o(out);
  o.Int("v", kEventSchemaVersion);
  o.String("time", FormatRfc3339Micros(event.time_ns));
  o.String("kind", ToString(event.kind()));
  o.String("extension", event.extension);
  o.OptionalInt("pid", event.pid);
  o.OptionalInt("sandbox_pid", event.sandbox_pid);
  o.StringOrNull("exe", event.executable);
  if (event.install_phase) o.String("phase", "install");  // absent: the extension's own run
  {
    ObjectWriter t = o.Object("tool_call");
    t.String("state", ToString(event.tool_call.state));
    if (event.tool_call.call) {
      t.String("tool", event.tool_call.call->tool);
      t.String("request_id", event.tool_call.call->request_id);
    } else {
      t.Null("tool");
      t.Null("request_id");
    }
    t.End();
  }
  ObjectWriter p = o.Object(ToString(event.kind()));
  std::visit(
      [&](const auto& payload) {
        using T = std::decay_t<decltype(payload)>;
        if constexpr (std::is_same_v<T, FileEvent>) WriteFile(p, payload);
        if constexpr (std::is_same_v<T, NetworkEvent>) WriteNetwork(p, payload);
        if constexpr (std::is_same_v<T, SyscallEvent>) WriteSyscall(p, payload);
        if constexpr (std::is_same_v<T, ProcessEvent>) WriteProcess(p, payload);
        if constexpr (std::is_same_v<T, LifecycleEvent>) WriteLifecycle(p, payload);
        if constexpr (std::is_same_v<T, ToolEvent>) WriteTool(p, payload);
        if constexpr (std::is_same_v<T, RedactionEvent>) WriteRedaction(p, payload);
      },
      event.payload);
  p.End();
  o.End();
  out += '\n';
  return out;
}

}  // namespace gander::events
