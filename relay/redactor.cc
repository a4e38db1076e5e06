#include "relay/redactor.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace gander::relay {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads \uXXXX at text[j] (the backslash). -1: not one; -2: cut by the end of the text.
int32_t ReadU(std::string_view text, size_t j) {
  if (j + 6 > text.size()) {
    // Cut: a prefix of "\uXXXX" with hex digits so far.
    if (j + 1 < text.size() && text[j + 1] != 'u') return -1;
    for (size_t k = j + 2; k < text.size(); ++k) {
      if (HexValue(text[k]) < 0) return -1;
    }
    return -2;
  }
  if (text[j + 1] != 'u') return -1;
  int32_t v = 0;
  for (size_t k = j + 2; k < j + 6; ++k) {
    int h = HexValue(text[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes one token at text[j]: a raw byte or a JSON escape. Returns its length in `text`
// (0: cut by the end of the text) and its bytes in `bytes`; a malformed escape is the raw
// backslash.
size_t Token(std::string_view text, size_t j, std::string& bytes) {
  bytes.clear();
  if (text[j] != '\\') {
    bytes += text[j];
    return 1;
  }
  if (j + 1 >= text.size()) return 0;
  switch (text[j + 1]) {
    case '"':
    case '\\':
    case '/':
      bytes += text[j + 1];
      return 2;
    case 'b':
      bytes += '\b';
      return 2;
    case 'f':
      bytes += '\f';
      return 2;
    case 'n':
      bytes += '\n';
      return 2;
    case 'r':
      bytes += '\r';
      return 2;
    case 't':
      bytes += '\t';
      return 2;
    case 'u':
      break;
    default:
      bytes += '\\';
      return 1;
  }
  int32_t u = ReadU(text, j);
  if (u == -2) return 0;
  if (u < 0) {
    bytes += '\\';
    return 1;
  }
  if (u >= 0xD800 && u <= 0xDBFF) {  // a high surrogate: its low half follows
    if (j + 6 >= text.size()) return 0;
    int32_t low = text[j + 6] == '\\' ? ReadU(text, j + 6) : -1;
    if (low == -2) return 0;
    if (low >= 0xDC00 && low <= 0xDFFF) {
      AppendUtf8(bytes, 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00));
      return 12;
    }
  }
  AppendUtf8(bytes, static_cast<uint32_t>(u));
  return 6;
}

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `got` is `want[k, k + got.size())`, letters compared without case when `fold_case`.
bool SameAt(const std::string& want, size_t k, std::string_view got, bool fold_case) {
  if (!fold_case) return want.compare(k, got.size(), got) == 0;
  if (k + got.size() > want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (LowerAscii(got[i]) != want[k + i]) return false;
  }
  return true;
}

std::string SafeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}

// The hex form of `value`, lower case (matched in any case: a form with fold_case).
std::string HexOf(std::string_view value) {
  const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(value.size() * 2);
  for (unsigned char c : value) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The characters of a base64 text that depend on `value`'s bytes alone when `value` sits
// `align` bytes (0, 1, 2) into the encoded stream: character k covers the stream's bits
// [6k, 6k + 6), kept when they all lie inside the value's. What comes before and after (other
// bytes, padding) changes only the characters left out, so the core is found wherever the
// value is printed base64, padded or not.
std::string Base64Core(std::string_view value, size_t align, bool url) {
  const char* abc = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                        : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string stream(align, '\0');
  stream.append(value);
  stream.append(3, '\0');
  const size_t first_bit = 8 * align, end_bit = 8 * (align + value.size());
  std::string out;
  for (size_t k = (first_bit + 5) / 6; 6 * k + 6 <= end_bit; ++k) {
    size_t bit = 6 * k, byte = bit / 8, shift = bit % 8;
    uint32_t two = static_cast<uint8_t>(stream[byte]) << 8 | static_cast<uint8_t>(stream[byte + 1]);
    out += abc[(two >> (10 - shift)) & 63];
  }
  return out;
}

struct Form {
  std::string text;
  bool fold_case = false;  // hex: its letters match in either case, each on its own
};

// The forms `value` is looked for in: as written, and (long enough values) hex and base64.
// A form of digits only is left out: it could be a JSON number, which a marker would break.
std::vector<Form> FormsOf(const std::string& value) {
  std::vector<Form> forms{{value}};
  if (value.size() < kMinEncodedSecretBytes) return forms;
  auto add = [&](std::string form, bool fold_case = false) {
    if (form.empty() ||
        std::any_of(forms.begin(), forms.end(), [&](const Form& f) { return f.text == form; })) {
      return;
    }
    if (std::all_of(form.begin(), form.end(), [](char c) { return c >= '0' && c <= '9'; })) return;
    forms.push_back({std::move(form), fold_case});
  };
  // Hex in any case, mixed included (a printer may upper-case some bytes and not others).
  add(HexOf(value), true);
  for (bool url : {false, true}) {
    for (size_t align = 0; align < 3; ++align) add(Base64Core(value, align, url));
  }
  return forms;
}

}  // namespace

bool IsRedactable(std::string_view value) {
  if (value.size() < kMinSecretBytes) return false;
  auto all = [&](auto pred) {
    return std::all_of(value.begin(), value.end(),
                       [&](char c) { return pred(static_cast<unsigned char>(c)); });
  };
  if (all([](unsigned char c) { return c >= '0' && c <= '9'; })) return false;
  if (value.size() < 16 && all([](unsigned char c) { return std::isalpha(c) != 0; })) return false;
  // Could the value stand outside a JSON string (numbers, literals, punctuation)?
  size_t i = 0;
  while (i < value.size()) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (std::isalpha(c)) {
      size_t j = i;
      while (j < value.size() && std::isalpha(static_cast<unsigned char>(value[j]))) ++j;
      std::string_view run = value.substr(i, j - i);
      bool literal = false;
      for (std::string_view word : {"true", "false", "null"}) {
        literal |= word.find(run) != std::string_view::npos;
      }
      if (!literal) return true;
      i = j;
      continue;
    }
    if (std::string_view("0123456789+-.,:[]{} \t\r\n").find(static_cast<char>(c)) ==
        std::string_view::npos) {
      return true;
    }
    ++i;
  }
  return false;
}

std::string Redactor::Marker(std::string_view name) {
  return "[gander:redacted:" + SafeName(name) + "]";
}

Redactor::Redactor(std::vector<Secret> secrets,
                   std::function<void(const std::string&, uint64_t)> on_redact)
    : on_redact_(std::move(on_redact)) {
  SetSecrets(std::move(secrets));
}

void Redactor::SetSecrets(std::vector<Secret> secrets) {
  secrets_.clear();
  std::fill(std::begin(starts_), std::end(starts_), false);
  for (auto& s : secrets) {
    if (!IsRedactable(s.value)) continue;
    for (Form& form : FormsOf(s.value)) {
      starts_[static_cast<unsigned char>(form.text[0])] = true;
      if (form.fold_case) {
        starts_[static_cast<unsigned char>(
            std::toupper(static_cast<unsigned char>(form.text[0])))] = true;
      }
      secrets_.push_back({s.name, std::move(form.text), Marker(s.name), form.fold_case});
    }
  }
  // Longest first: a secret containing another is replaced whole.
  std::sort(secrets_.begin(), secrets_.end(),
            [](const Entry& a, const Entry& b) { return a.value.size() > b.value.size(); });
  if (!secrets_.empty()) starts_[static_cast<unsigned char>('\\')] = true;
}

Redactor::Match Redactor::TryAt(std::string_view text, size_t i, const Entry& e,
                                size_t* end) const {
  const std::string& s = e.value;
  size_t k = 0;  // bytes of the secret matched
  size_t j = i;
  int breaks = 0;
  std::string bytes;
  while (k < s.size()) {
    if (j >= text.size()) return Match::kPartial;
    size_t len = Token(text, j, bytes);
    if (len == 0) return Match::kPartial;
    if (json_lines_ && len == 1 && bytes[0] == '"') return Match::kNone;  // a string's end
    if (SameAt(s, k, bytes, e.fold_case)) {
      k += bytes.size();
      j += len;
      continue;
    }
    // A line break inside the occurrence (raw, or escaped in a JSON string).
    if (k > 0 && bytes.size() == 1 && (bytes[0] == '\n' || bytes[0] == '\r') &&
        ++breaks <= kMaxBreaks) {
      j += len;
      continue;
    }
    return Match::kNone;
  }
  *end = j;
  return Match::kFull;
}

StreamRewriter::Outcome Redactor::Rewrite(std::string_view text, bool at_end) {
  Outcome o;
  o.released = text.size();
  std::map<std::string, uint64_t> hits;
  size_t copied = 0;  // text[0, copied) is in o.replacement
  for (size_t i = 0; i < text.size(); ++i) {
    if (!starts_[static_cast<unsigned char>(text[i])]) continue;
    bool partial = false;
    for (const Entry& e : secrets_) {
      size_t end = 0;
      Match m = TryAt(text, i, e, &end);
      if (m == Match::kFull) {
        o.replacement.append(text.substr(copied, i - copied));
        o.replacement += e.marker;
        copied = end;
        ++hits[e.name];
        i = end - 1;
        partial = false;
        break;
      }
      if (m == Match::kPartial && !at_end) partial = true;
    }
    if (partial) {
      o.released = i;
      break;
    }
  }
  if (!hits.empty()) {
    o.replaced = true;
    o.replacement.append(text.substr(copied, o.released - copied));
    if (on_redact_) {
      for (const auto& [name, count] : hits) on_redact_(name, count);
    }
  } else {
    o.replacement.clear();
  }
  return o;
}

}  // namespace gander::relay
