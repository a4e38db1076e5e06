#include "relay/jsonrpc.h"

#include <simdjson.h>

#include <cstring>

#include "relay/line_relay.h"

namespace gander::monitor {
namespace {

namespace od = simdjson::ondemand;
static_assert(kLinePadding >= simdjson::SIMDJSON_PADDING);

// A parse of a line this large keeps simdjson's index buffers (up to ~4 bytes per input byte);
// they are released afterwards so one huge message does not pin memory for the whole run.
constexpr size_t kShrinkAfter = 8u << 20;

bool ReadString(od::value v, std::string& out) {
  std::string_view s;
  if (v.get_string().get(s)) return false;
  out.assign(s);
  return true;
}

// false: not a valid id (an object, an array, a bad string).
bool ReadId(od::value v, std::optional<RpcId>& out) {
  od::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case od::json_type::string: {
      RpcId id{.is_string = true, .text = {}};
      if (!ReadString(v, id.text)) return false;
      out = std::move(id);
      return true;
    }
    case od::json_type::number: {
      std::string_view raw = v.raw_json_token();
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r' ||
                              raw.back() == '\n')) {
        raw.remove_suffix(1);
      }
      double ignored;
      if (v.get_double().get(ignored)) return false;  // validates the number
      out = RpcId{.is_string = false, .text = std::string(raw)};
      return true;
    }
    case od::json_type::null:
      out.reset();
      return true;
    default:
      return false;
  }
}

bool ParseMeta(od::object meta, RpcMessage& m) {
  for (auto field : meta) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    od::value v;
    if (field.value().get(v)) return false;
    if (key == "agent-session-id") {
      std::string s;
      if (ReadString(v, s)) m.session_id = std::move(s);
    } else if (key == "agent-working-dir") {
      std::string s;
      if (ReadString(v, s)) m.working_dir = std::move(s);
    } else if (key == "io.modelcontextprotocol/protocolVersion") {
      std::string s;
      if (ReadString(v, s)) m.stateless_version = std::move(s);
    }
  }
  return true;
}

bool ParseParams(od::object params, RpcMessage& m) {
  for (auto field : params) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    od::value v;
    if (field.value().get(v)) return false;
    if (key == "name") {
      ReadString(v, m.tool);  // a non-string name is left empty
    } else if (key == "requestId") {
      if (!ReadId(v, m.cancelled_id)) m.cancelled_id.reset();
    } else if (key == "_meta") {
      od::object meta;
      if (!v.get_object().get(meta) && !ParseMeta(meta, m)) return false;
    }
  }
  return true;
}

bool ParseResult(od::object result, RpcMessage& m) {
  for (auto field : result) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    od::value v;
    if (field.value().get(v)) return false;
    if (key == "isError") {
      bool b = false;
      if (!v.get_bool().get(b)) m.result_is_error = b;
    } else if (key == "resultType") {
      ReadString(v, m.result_type);
    }
  }
  return true;
}

bool ParseError(od::object error, RpcMessage& m) {
  for (auto field : error) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    od::value v;
    if (field.value().get(v)) return false;
    if (key == "code") {
      int64_t code = 0;
      if (!v.get_int64().get(code)) m.error_code = static_cast<int>(code);
    }
  }
  return true;
}

// false: the JSON is broken (the whole line then counts as not JSON).
bool ParseMessage(od::object object, RpcMessage& m) {
  bool has_id = false, has_method = false, has_result = false, has_error = false;
  bool id_valid = true;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    od::value v;
    if (field.value().get(v)) return false;
    if (key == "id") {
      has_id = true;
      id_valid = ReadId(v, m.id);
    } else if (key == "method") {
      has_method = ReadString(v, m.method);
    } else if (key == "params") {
      od::object params;
      if (!v.get_object().get(params) && !ParseParams(params, m)) return false;
    } else if (key == "result") {
      has_result = true;
      od::object result;
      if (!v.get_object().get(result) && !ParseResult(result, m)) return false;
    } else if (key == "error") {
      has_error = true;
      od::object error;
      if (!v.get_object().get(error) && !ParseError(error, m)) return false;
    }
  }
  if (!id_valid) {
    m.id.reset();
    m.kind = RpcKind::kInvalid;
  } else if (has_method && has_id && m.id) {
    m.kind = RpcKind::kRequest;
  } else if (has_method && !has_id) {
    m.kind = RpcKind::kNotification;
  } else if (has_result && m.id) {
    m.kind = RpcKind::kResult;
  } else if (has_error) {
    m.kind = RpcKind::kError;
  } else {
    m.kind = RpcKind::kInvalid;
  }
  return true;
}

}  // namespace

std::string RpcId::ToJson() const {
  if (!is_string) return text;
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

struct JsonRpcParser::Impl {
  size_t max_bytes;
  od::parser parser;
  std::string scratch;
};

JsonRpcParser::JsonRpcParser(size_t max_bytes)
    : impl_(new Impl{max_bytes, od::parser(max_bytes + 1), {}}) {}

JsonRpcParser::~JsonRpcParser() = default;

ParsedLine JsonRpcParser::Parse(std::string_view line, bool padded) {
  ParsedLine out;
  if (line.size() > impl_->max_bytes) return out;
  if (!padded) {
    impl_->scratch.assign(line);
    impl_->scratch.append(kLinePadding, '\0');
    line = std::string_view(impl_->scratch.data(), line.size());
  }
  struct Shrink {
    Impl& impl;
    size_t size;
    ~Shrink() {
      if (size > kShrinkAfter) impl.parser = od::parser(impl.max_bytes + 1);
    }
  } shrink{*impl_, line.size()};

  od::document doc;
  if (impl_->parser.iterate(line.data(), line.size(), line.size() + kLinePadding).get(doc)) {
    return out;
  }
  od::json_type type;
  if (doc.type().get(type)) return out;
  if (type == od::json_type::object) {
    od::object object;
    RpcMessage m;
    if (doc.get_object().get(object) || !ParseMessage(object, m)) return out;
    out.messages.push_back(std::move(m));
  } else if (type == od::json_type::array) {
    out.batch = true;
    od::array array;
    if (doc.get_array().get(array)) return out;
    for (auto element : array) {
      od::value v;
      if (element.get(v)) return ParsedLine{};
      RpcMessage m;
      od::object object;
      od::json_type t;
      if (v.type().get(t)) return ParsedLine{};
      if (t == od::json_type::object) {
        if (v.get_object().get(object) || !ParseMessage(object, m)) return ParsedLine{};
      } else {
        // A batch element that is not an object is not a message; it must still be JSON.
        std::string_view raw;
        if (t == od::json_type::array) {
          od::array inner;
          if (v.get_array().get(inner) || inner.raw_json().get(raw)) return ParsedLine{};
        } else {
          bool b;
          double d;
          std::string_view s;
          bool bad = t == od::json_type::boolean  ? bool(v.get_bool().get(b))
                     : t == od::json_type::number ? bool(v.get_double().get(d))
                     : t == od::json_type::string ? bool(v.get_string().get(s))
                                                  : (v.is_null().get(b) || !b);
          if (bad) return ParsedLine{};
        }
      }
      out.messages.push_back(std::move(m));
    }
  } else {
    // A scalar: JSON, but no message. Checked by reading it.
    bool b = false;
    double d;
    std::string_view s;
    auto not_null = [&] { return doc.is_null().get(b) || !b; };
    bool bad = type == od::json_type::boolean  ? bool(doc.get_bool().get(b))
               : type == od::json_type::number ? bool(doc.get_double().get(d))
               : type == od::json_type::string ? bool(doc.get_string().get(s))
                                               : not_null();
    if (bad) return out;
  }
  // Nothing may follow the value: past the end, current_location() reports OUT_OF_BOUNDS.
  const char* rest = nullptr;
  if (doc.current_location().get(rest) != simdjson::OUT_OF_BOUNDS) return ParsedLine{};
  out.json = true;
  return out;
}

}  // namespace gander::monitor
