// Encoding of the launcher side of the wire protocol (see collector_wire.h).
#include "exporters/collector_wire.h"

#include <charconv>

#include "events/event_json.h"

namespace gander::exporters::wire {
namespace {

void AppendList(std::string& out, std::string_view key, const std::vector<std::string>& items) {
  out += ",\"";
  out += key;
  out += "\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    events::AppendJsonString(out, items[i]);
  }
  out += ']';
}

void AppendField(std::string& out, std::string_view key, std::string_view value) {
  out += ",\"";
  out += key;
  out += "\":";
  events::AppendJsonString(out, value);
}

std::optional<uint64_t> NumberAfter(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const char* begin = line.data() + at + key.size();
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(begin, line.data() + line.size(), value);
  if (ec != std::errc() || end == begin) return std::nullopt;
  return value;
}

}  // namespace

std::string EncodeHello(const Hello& h) {
  std::string out = "{\"t\":\"hello\",\"v\":" + std::to_string(kProtocolVersion);
  AppendField(out, "launcher", h.launcher);
  AppendField(out, "extension", h.extension);
  out += h.running ? ",\"running\":true" : ",\"running\":false";
  AppendField(out, "backend", h.info.run.backend);
  AppendField(out, "isolation", h.info.run.isolation);
  AppendField(out, "mode", h.info.run.mode);
  AppendField(out, "policy_sha256", h.info.run.policy_sha256);
  AppendField(out, "syscall_accounting", h.info.run.syscall_accounting);
  AppendList(out, "destinations", h.info.destinations);
  AppendList(out, "secrets", h.info.secrets);
  AppendField(out, "home", h.home);
  AppendField(out, "token", h.token);
  out += h.audit_log_local ? ",\"audit_log_local\":true" : ",\"audit_log_local\":false";
  out += ",\"audit_log_max_bytes\":" + std::to_string(h.audit_log_max_bytes);
  out += ",\"audit_log_max_files\":" + std::to_string(h.audit_log_max_files);
  out += "}\n";
  return out;
}

std::string EncodeRecord(uint64_t seq, const events::Event& event, std::string_view stage) {
  std::string out = "{\"seq\":" + std::to_string(seq);
  if (!stage.empty()) AppendField(out, "stage", stage);
  out += ",\"event\":";
  out += events::ToJsonLine(event);  // ends with '\n'
  out.back() = '}';
  out += '\n';
  return out;
}

std::string EncodeSync(uint64_t last_seq) {
  return "{\"t\":\"sync\",\"seq\":" + std::to_string(last_seq) + "}\n";
}

std::string EncodeBye(uint64_t last_seq) {
  return "{\"t\":\"bye\",\"seq\":" + std::to_string(last_seq) + "}\n";
}

std::string EncodeWelcome(uint64_t seq) {
  return "{\"t\":\"welcome\",\"seq\":" + std::to_string(seq) + "}\n";
}

std::string EncodeAck(uint64_t seq) {
  return "{\"t\":\"ack\",\"seq\":" + std::to_string(seq) + "}\n";
}

std::string EncodeError(std::string_view reason) {
  // Reasons are ours, but may quote launcher input: keep printable ASCII only, so that the
  // launcher's parser below needs no JSON unescaping.
  std::string clean;
  for (char c : reason.substr(0, 512)) {
    clean += (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? c : '?';
  }
  return "{\"t\":\"error\",\"reason\":\"" + clean + "\"}\n";
}

std::optional<Reply> ParseReply(std::string_view line) {
  Reply reply;
  if (line.starts_with("{\"t\":\"welcome\",")) {
    reply.kind = Reply::Kind::kWelcome;
  } else if (line.starts_with("{\"t\":\"ack\",")) {
    reply.kind = Reply::Kind::kAck;
  } else if (line.starts_with("{\"t\":\"error\",")) {
    reply.kind = Reply::Kind::kError;
    constexpr std::string_view kKey = "\"reason\":\"";
    size_t at = line.find(kKey);
    if (at == std::string_view::npos) return std::nullopt;
    size_t end = line.find('"', at + kKey.size());
    if (end == std::string_view::npos) return std::nullopt;
    reply.reason = std::string(line.substr(at + kKey.size(), end - at - kKey.size()));
    return reply;
  } else {
    return std::nullopt;
  }
  auto seq = NumberAfter(line, "\"seq\":");
  if (!seq) return std::nullopt;
  reply.seq = *seq;
  return reply;
}

}  // namespace gander::exporters::wire
