#include "relay/jsonrpc.h"

#include <charconv>
#include <cstring>
#include <vector>

#include "relay/json_scanner.h"

namespace gander::relay {
namespace {

// A parse of a line this large grows the string buffer; it is released afterwards so one huge
// message does not pin memory for the whole run.
constexpr size_t kShrinkAfter = 8u << 20;
// Nesting deeper than this is not JSON to gander (the relay still forwards it as text).
constexpr size_t kMaxDepth = 1024;

// What the value after a key (or an array element) is to gander.
enum class Slot {
  kSkip,        // nothing gander reads
  kVersion,     // message.jsonrpc
  kRoot,        // the line itself
  kBatchItem,   // an element of a top-level array
  kId,          // message.id
  kMethod,      // message.method
  kParams,      // message.params
  kResult,      // message.result
  kError,       // message.error
  kToolName,    // params.name
  kRequestId,   // params.requestId
  kMeta,        // params._meta
  kSessionId,   // _meta["agent-session-id"]
  kWorkingDir,  // _meta["agent-working-dir"]
  kStateless,   // _meta["io.modelcontextprotocol/protocolVersion"]
  kIsError,     // result.isError
  kResultType,  // result.resultType
  kErrorCode,   // error.code
};

// The containers gander looks into; every other one is kSkip.
enum class Container { kSkip, kBatch, kMessage, kParams, kMeta, kResult, kError };

Slot SlotOfKey(Container in, std::string_view key) {
  switch (in) {
    case Container::kMessage:
      if (key == "jsonrpc") return Slot::kVersion;
      if (key == "id") return Slot::kId;
      if (key == "method") return Slot::kMethod;
      if (key == "params") return Slot::kParams;
      if (key == "result") return Slot::kResult;
      if (key == "error") return Slot::kError;
      return Slot::kSkip;
    case Container::kParams:
      if (key == "name") return Slot::kToolName;
      if (key == "requestId") return Slot::kRequestId;
      if (key == "_meta") return Slot::kMeta;
      return Slot::kSkip;
    case Container::kMeta:
      if (key == "agent-session-id") return Slot::kSessionId;
      if (key == "agent-working-dir") return Slot::kWorkingDir;
      if (key == "io.modelcontextprotocol/protocolVersion") return Slot::kStateless;
      return Slot::kSkip;
    case Container::kResult:
      if (key == "isError") return Slot::kIsError;
      if (key == "resultType") return Slot::kResultType;
      return Slot::kSkip;
    case Container::kError:
      return key == "code" ? Slot::kErrorCode : Slot::kSkip;
    case Container::kSkip:
    case Container::kBatch:
      return Slot::kSkip;
  }
  return Slot::kSkip;
}

// The keys the client's types name in a message and in its `error` (serde's derived structs
// refuse each of them twice; other keys are ignored, twice or not). Inside `result` the
// client's types are untagged with a catch-all (an empty result), so a key there twice is not
// refused, and `_meta` is a map (the last one wins, as it does here).
int KnownKeyBit(Container in, std::string_view key) {
  static constexpr std::string_view kMessage[] = {"jsonrpc", "id",     "method",
                                                  "params",  "result", "error"};
  static constexpr std::string_view kError[] = {"code", "message", "data"};
  auto find = [&](const auto& names) {
    for (size_t i = 0; i < std::size(names); ++i) {
      if (names[i] == key) return static_cast<int>(i);
    }
    return -1;
  };
  if (in == Container::kMessage) return find(kMessage);
  if (in == Container::kError) return find(kError);
  return -1;
}

// The SAX handler: it follows the few paths gander reads and skips the rest (the parser still
// validates all of it). A scalar value of the wrong type where gander expects one is treated as
// the old reader did: an id that is not a string, number or null makes the message invalid; a
// method that is not a string is no method; any other mistyped field is left unset.
class Handler {
 public:
  explicit Handler(ParsedLine& out) : out_(out) {}

  void Null() { Scalar(Value::kNull, {}); }
  void Bool(bool b) { Scalar(b ? Value::kTrue : Value::kFalse, {}); }
  void Number(std::string_view text) { Scalar(Value::kNumber, text); }
  void String(std::string_view text) { Scalar(Value::kString, text); }
  void Key(std::string_view key) {
    Container in = stack_.back();
    if (int bit = KnownKeyBit(in, key); bit >= 0) {
      unsigned& seen = in == Container::kMessage ? message_.keys : message_.error_keys;
      if (seen & 1u << bit) out_.client_refuses = true;
      seen |= 1u << bit;
    }
    next_ = SlotOfKey(in, key);
  }
  void StartObject() { Open(/*object=*/true); }
  void StartArray() { Open(/*object=*/false); }
  void End() { Close(); }

 private:
  enum class Value { kNull, kTrue, kFalse, kNumber, kString, kObject, kArray };

  // The facts of the message being read (messages never nest).
  struct Message {
    RpcMessage m;
    bool has_id = false, has_method = false, has_result = false, has_error = false;
    bool id_valid = true;
    bool version = false;               // "jsonrpc":"2.0"
    unsigned keys = 0, error_keys = 0;  // KnownKeyBit of the keys seen
  };

  // After a value: what the next value in the same container is.
  void AfterValue() {
    next_ = stack_.empty()                       ? Slot::kSkip
            : stack_.back() == Container::kBatch ? Slot::kBatchItem
                                                 : Slot::kSkip;
  }

  void Open(bool object) {
    if (stack_.size() >= ParsedLine::kClientMaxDepth) out_.client_refuses = true;
    Container c = Container::kSkip;
    if (object) {
      c = OpenObject(next_);
    } else {
      if (next_ == Slot::kRoot) {
        out_.batch = true;
        c = Container::kBatch;
      } else {
        Scalar(Value::kArray, {});
      }
    }
    stack_.push_back(c);
    next_ = c == Container::kBatch ? Slot::kBatchItem : Slot::kSkip;
  }

  Container OpenObject(Slot slot) {
    switch (slot) {
      case Slot::kRoot:
      case Slot::kBatchItem:
        message_ = Message{};
        return Container::kMessage;
      case Slot::kParams:
        return Container::kParams;
      case Slot::kMeta:
        return Container::kMeta;
      case Slot::kResult:
        message_.has_result = true;
        return Container::kResult;
      case Slot::kError:
        message_.has_error = true;
        return Container::kError;
      default:
        Scalar(Value::kObject, {});
        return Container::kSkip;
    }
  }

  void Close() {
    Container c = stack_.back();
    stack_.pop_back();
    if (c == Container::kMessage) {
      if (!message_.version) out_.client_refuses = true;
      Keep(Finish(std::move(message_)));
    }
    AfterValue();
  }

  void Keep(RpcMessage&& m) {
    if (out_.messages.size() < ParsedLine::kMaxMessages) {
      out_.messages.push_back(std::move(m));
    } else {
      ++out_.unread;
    }
  }

  static RpcMessage Finish(Message&& s) {
    RpcMessage m = std::move(s.m);
    if (!s.id_valid) {
      m.id.reset();
      m.kind = RpcKind::kInvalid;
    } else if (s.has_method && s.has_id && m.id) {
      m.kind = RpcKind::kRequest;
    } else if (s.has_method && !s.has_id) {
      m.kind = RpcKind::kNotification;
    } else if (s.has_result && m.id) {
      m.kind = RpcKind::kResult;
    } else if (s.has_error) {
      m.kind = RpcKind::kError;
    } else {
      m.kind = RpcKind::kInvalid;
    }
    return m;
  }

  // false: not a valid id (an object, an array, a boolean).
  static bool ReadId(Value type, std::string_view text, std::optional<RpcId>& out) {
    switch (type) {
      case Value::kString:
        out = RpcId{.is_string = true, .text = std::string(text)};
        return true;
      case Value::kNumber:  // the scanner has checked it is a finite double
        out = RpcId{.is_string = false, .text = std::string(text)};
        return true;
      case Value::kNull:
        out.reset();
        return true;
      default:
        return false;
    }
  }

  // A scalar, or a container gander does not look into, in the slot `next_` names.
  void Scalar(Value type, std::string_view text) {
    Message& s = message_;
    bool is_string = type == Value::kString;
    switch (next_) {
      case Slot::kBatchItem:  // not an object: an element that is no message
        out_.client_refuses = true;
        Keep(RpcMessage{});
        break;
      case Slot::kVersion:
        s.version = is_string && text == "2.0";
        break;
      case Slot::kId:
        s.has_id = true;
        s.id_valid = ReadId(type, text, s.m.id);
        break;
      case Slot::kMethod:
        s.has_method = is_string;
        if (is_string) s.m.method.assign(text);
        break;
      case Slot::kResult:
        s.has_result = true;
        break;
      case Slot::kError:
        s.has_error = true;
        break;
      case Slot::kToolName:
        if (is_string) s.m.tool.assign(text);
        break;
      case Slot::kRequestId:
        if (!ReadId(type, text, s.m.cancelled_id)) s.m.cancelled_id.reset();
        break;
      case Slot::kSessionId:
        if (is_string) s.m.session_id = std::string(text);
        break;
      case Slot::kWorkingDir:
        if (is_string) s.m.working_dir = std::string(text);
        break;
      case Slot::kStateless:
        if (is_string) s.m.stateless_version = std::string(text);
        break;
      case Slot::kIsError:
        if (type == Value::kTrue || type == Value::kFalse)
          s.m.result_is_error = type == Value::kTrue;
        break;
      case Slot::kResultType:
        if (is_string) s.m.result_type.assign(text);
        break;
      case Slot::kErrorCode: {
        int64_t code = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), code);
        if (type == Value::kNumber && ec == std::errc() && end == text.data() + text.size()) {
          s.m.error_code = static_cast<int>(code);
        }
        break;
      }
      default:
        break;
    }
    if (type != Value::kObject && type != Value::kArray) AfterValue();
  }

  ParsedLine& out_;
  std::vector<Container> stack_;
  Slot next_ = Slot::kRoot;
  Message message_;
};

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
  std::string strings;        // the scanner's unescaped strings
  std::vector<char> nesting;  // the scanner's open containers
};

JsonRpcParser::JsonRpcParser(size_t max_bytes) : impl_(new Impl{max_bytes, {}, {}}) {}

JsonRpcParser::~JsonRpcParser() = default;

ParsedLine JsonRpcParser::Parse(std::string_view line, bool /*padded*/) {
  ParsedLine out;
  if (line.size() > impl_->max_bytes) return out;
  Handler handler(out);
  JsonScanner scanner(line, impl_->strings, impl_->nesting);
  bool ok = scanner.Run(handler);
  if (line.size() > kShrinkAfter) {
    impl_->strings = std::string();
    impl_->nesting = std::vector<char>();
  }
  if (!ok) return ParsedLine{};
  out.json = true;
  return out;
}

}  // namespace gander::relay
