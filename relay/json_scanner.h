// A validating JSON scanner that reports what it reads to a handler, as a SAX reader does:
// RFC 8259 grammar, UTF-8 checked byte for byte, escapes decoded (a lone surrogate is an
// error, as it is to serde_json and simdjson), numbers kept as their text (and refused when
// they overflow a double), nesting bounded and followed without recursion, nothing but
// whitespace after the value. The bytes come from the extension or the client: nothing here
// trusts a length, a terminator or a depth. Pure; no allocation but the two buffers it is
// given, which it reuses.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace gander::relay {

// Handler: Null(), Bool(bool), Number(text), String(text), Key(text), StartObject(),
// StartArray(), End() (of the innermost container). A view it is given lives until the next
// call.
class JsonScanner {
 public:
  static constexpr size_t kMaxDepth = 1024;

  JsonScanner(std::string_view in, std::string& strings, std::vector<char>& nesting)
      : p_(in.data()), end_(in.data() + in.size()), strings_(strings), nesting_(nesting) {}

  // true: `in` is one JSON value (with whitespace around it) and the handler saw all of it.
  template <class Handler>
  bool Run(Handler& h) {
    nesting_.clear();
    enum class Want { kValue, kKey, kAfterValue } want = Want::kValue;
    for (;;) {
      SkipWhitespace();
      if (want == Want::kAfterValue) {
        if (nesting_.empty()) return p_ == end_;
        if (p_ == end_) return false;
        char top = nesting_.back();
        char c = *p_++;
        if (c == ',') {
          want = top == '{' ? Want::kKey : Want::kValue;
        } else if ((c == '}' && top == '{') || (c == ']' && top == '[')) {
          nesting_.pop_back();
          h.End();
        } else {
          return false;
        }
        continue;
      }
      if (p_ == end_) return false;
      if (want == Want::kKey) {
        std::string_view key;
        if (*p_ != '"' || !String(key)) return false;
        h.Key(key);
        SkipWhitespace();
        if (p_ == end_ || *p_++ != ':') return false;
        want = Want::kValue;
        continue;
      }
      // A value.
      char c = *p_;
      if (c == '{' || c == '[') {
        if (nesting_.size() >= kMaxDepth) return false;
        ++p_;
        nesting_.push_back(c);
        if (c == '{') {
          h.StartObject();
        } else {
          h.StartArray();
        }
        SkipWhitespace();
        char close = c == '{' ? '}' : ']';
        if (p_ != end_ && *p_ == close) {  // empty
          ++p_;
          nesting_.pop_back();
          h.End();
          want = Want::kAfterValue;
        } else {
          want = c == '{' ? Want::kKey : Want::kValue;
        }
        continue;
      }
      if (c == '"') {
        std::string_view s;
        if (!String(s)) return false;
        h.String(s);
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        std::string_view n;
        if (!Number(n)) return false;
        h.Number(n);
      } else if (Literal("true")) {
        h.Bool(true);
      } else if (Literal("false")) {
        h.Bool(false);
      } else if (Literal("null")) {
        h.Null();
      } else {
        return false;
      }
      want = Want::kAfterValue;
    }
  }

 private:
  void SkipWhitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  static bool Digit(char c) { return c >= '0' && c <= '9'; }

  bool Number(std::string_view& out) {
    const char* start = p_;
    if (*p_ == '-') ++p_;
    if (p_ == end_ || !Digit(*p_)) return false;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ != end_ && Digit(*p_)) ++p_;
    }
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      if (p_ == end_ || !Digit(*p_)) return false;
      while (p_ != end_ && Digit(*p_)) ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !Digit(*p_)) return false;
      while (p_ != end_ && Digit(*p_)) ++p_;
    }
    out = std::string_view(start, p_ - start);
    double value;
    auto [ptr, ec] = std::from_chars(start, p_, value);
    if (ec == std::errc::result_out_of_range) {
      // Overflow is refused (1e999); underflow is a zero (1e-999), as for serde_json.
      std::string copy(out);
      if (!std::isfinite(std::strtod(copy.c_str(), nullptr))) return false;
    } else if (ec != std::errc() || ptr != p_) {
      return false;
    }
    return true;
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Four hex digits after `\u`.
  bool Hex4(uint32_t& out) {
    if (end_ - p_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      int d = Hex(*p_++);
      if (d < 0) return false;
      out = out << 4 | static_cast<uint32_t>(d);
    }
    return true;
  }

  void AppendUtf8(uint32_t cp) {
    if (cp < 0x80) {
      strings_ += static_cast<char>(cp);
    } else if (cp < 0x800) {
      strings_ += static_cast<char>(0xC0 | cp >> 6);
      strings_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      strings_ += static_cast<char>(0xE0 | cp >> 12);
      strings_ += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      strings_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      strings_ += static_cast<char>(0xF0 | cp >> 18);
      strings_ += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
      strings_ += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      strings_ += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // One escape after the backslash, decoded into strings_.
  bool Escape() {
    if (p_ == end_) return false;
    char c = *p_++;
    switch (c) {
      case '"':
        strings_ += '"';
        return true;
      case '\\':
        strings_ += '\\';
        return true;
      case '/':
        strings_ += '/';
        return true;
      case 'b':
        strings_ += '\b';
        return true;
      case 'f':
        strings_ += '\f';
        return true;
      case 'n':
        strings_ += '\n';
        return true;
      case 'r':
        strings_ += '\r';
        return true;
      case 't':
        strings_ += '\t';
        return true;
      case 'u':
        break;
      default:
        return false;
    }
    uint32_t cp;
    if (!Hex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
    if (cp >= 0xD800 && cp <= 0xDBFF) {              // must pair with a low one
      uint32_t low;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
      p_ += 2;
      if (!Hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(cp);
    return true;
  }

  // The length of the UTF-8 sequence at p_ (lead byte >= 0x80), 0 if it is not valid UTF-8:
  // no overlong form, no surrogate, nothing past U+10FFFF.
  size_t Utf8Sequence() const {
    auto byte = [&](ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
    auto cont = [&](ptrdiff_t i) { return i < end_ - p_ && (byte(i) & 0xC0) == 0x80; };
    unsigned char b0 = byte(0);
    if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
      if (!cont(1) || !cont(2)) return 0;
      if (b0 == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
      if (b0 == 0xED && byte(1) >= 0xA0) return 0;  // a surrogate
      return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return 0;
      if (b0 == 0xF0 && byte(1) < 0x90) return 0;   // overlong
      if (b0 == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
      return 4;
    }
    return 0;
  }

  // A string at p_ (the opening quote). `out` views the input when it has no escape, else
  // strings_.
  bool String(std::string_view& out) {
    const char* start = ++p_;
    bool decoded = false;
    while (p_ != end_) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        if (decoded) {
          out = strings_;
        } else {
          out = std::string_view(start, p_ - start);
        }
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (!decoded) {
          strings_.assign(start, p_ - start);
          decoded = true;
        }
        ++p_;
        if (!Escape()) return false;
        continue;
      }
      if (c < 0x20) return false;
      size_t n = 1;
      if (c >= 0x80 && (n = Utf8Sequence()) == 0) return false;
      if (decoded) strings_.append(p_, n);
      p_ += n;
    }
    return false;
  }

  const char* p_;
  const char* end_;
  std::string& strings_;
  std::vector<char>& nesting_;
};

}  // namespace gander::relay
