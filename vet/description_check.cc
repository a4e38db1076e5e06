#include "vet/description_check.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <regex>

namespace gander::vet {
namespace {

// One code point of UTF-8 at `i`: its value and length; invalid bytes decode as themselves
// (length 1), so the scan never stalls.
struct CodePoint {
  uint32_t value;
  size_t length;
};

CodePoint Decode(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return {b, 1};
  uint32_t v = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {b, 1};
    v = (v << 6) | (byte(i + k) & 0x3F);
  }
  return {v, len};
}

// Characters a reader does not see but a model reads: zero-width and joiners, bidi
// embeddings/overrides/isolates, word joiner and invisible operators, the BOM, soft hyphen,
// Unicode tag characters (ASCII smuggled as U+E0000..E007F) and variation selectors.
bool Invisible(uint32_t c) {
  return (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF ||
         c == 0x00AD || c == 0x180E || (c >= 0xE0000 && c <= 0xE007F) ||
         (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF);
}

bool ShownEscaped(uint32_t c) {
  return Invisible(c) || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F;
}

std::string Hex(uint32_t c) {
  static const char* kDigits = "0123456789ABCDEF";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[c & 0xF]);
    c >>= 4;
  } while (c != 0);
  while (out.size() < 4) out.insert(out.begin(), '0');
  return out;
}

// `text` around [begin, end): up to 60 bytes either side, cut at code point boundaries, on
// one line.
std::string Excerpt(std::string_view text, size_t begin, size_t end) {
  constexpr size_t kContext = 60;
  size_t from = begin > kContext ? begin - kContext : 0;
  size_t to = std::min(text.size(), end + kContext);
  auto continuation = [&](size_t k) {
    return k < text.size() && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80;
  };
  while (from > 0 && continuation(from)) --from;
  while (to < text.size() && continuation(to)) ++to;
  std::string out = ShowInvisible(text.substr(from, to - from));
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\t', ' ');
  return (from > 0 ? "..." : "") + out + (to < text.size() ? "..." : "");
}

struct Rule {
  Severity severity;
  const char* name;
  std::regex pattern;
};

const std::vector<Rule>& Rules() {
  auto re = [](const char* p) {
    return std::regex(p, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  };
  static const std::vector<Rule> kRules = {
      {Severity::kHigh, "hidden instruction",
       re(R"((ignore|disregard|forget|override)\s+(all\s+|any\s+)?(the\s+|your\s+|of\s+the\s+)?)"
          R"((previous|prior|above|earlier|preceding|former|system|other|original)\s+)"
          R"((instructions?|directions?|rules?|prompts?|messages?|guidelines?|context))")},
      {Severity::kHigh, "concealment from the user",
       re(R"(((do\s+not|don't|never|must\s+not)\s+(tell|inform|notify|alert|mention|reveal|)"
          R"(disclose|show|say)\b[^.\n]{0,80}\b(user|human|anyone))|)"
          R"((without\s+(telling|informing|notifying|alerting|asking)\s+(the\s+)?(user|human))|)"
          R"(((user|human)\s+(must|should)\s+not\s+(know|see|notice|be\s+told))|)"
          R"(\b(secretly|covertly)\b)")},
      {Severity::kHigh, "secret file",
       re(R"(~/\.ssh|\.ssh/|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/(credentials|config)|\.gnupg|)"
          R"(\.config/goose|secrets\.ya?ml|\.netrc|\.npmrc|\.pgpass|\.docker/config\.json|)"
          R"(\.kube/config|/etc/shadow|/etc/passwd|\bmcp\.json\b|(^|[\s"'`(/])\.env\b)")},
      {Severity::kMedium, "instruction tag",
       re(R"(<\s*/?\s*(important|system|instructions?|secret|hidden|admin|assistant|critical)\b[^>]*>|)"
          R"(\[\s*/?\s*(system|inst|important)\s*\]|<!--)")},
      {Severity::kMedium, "other tools' data or the conversation",
       re(R"(\b(all|any|every|the)\s+other\s+tools?\b|\b(conversation|chat)\s+history\b|)"
          R"(\bprevious\s+(messages|conversation|tool\s+(calls?|results?|outputs?))\b|)"
          R"(\btool\s+(results|outputs)\s+of\b|\bsystem\s+prompt\b)")},
      {Severity::kMedium, "asks to pass data along",
       re(R"(\b(pass|send|include|append|forward|upload|attach)\s+(its\s+|their\s+|the\s+(full\s+)?)"
          R"(|all\s+(of\s+)?(the\s+)?)(contents?|data|text|key)\s+(as|in|to|into)\b)")},
  };
  return kRules;
}

bool NameMentioned(std::string_view text, const std::string& name) {
  if (name.size() < 3) return false;
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
  };
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    bool start = at == 0 || !word(text[at - 1]);
    bool end = at + name.size() == text.size() || !word(text[at + name.size()]);
    if (start && end) return true;
  }
  return false;
}

}  // namespace

std::string ShowInvisible(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    CodePoint cp = Decode(text, i);
    if (ShownEscaped(cp.value)) {
      out += "\\u{" + Hex(cp.value) + "}";
    } else {
      out.append(text.substr(i, cp.length));
    }
    i += cp.length;
  }
  return out;
}

std::vector<DescriptionHit> CheckDescription(std::string_view text,
                                             const std::vector<std::string>& other_tools) {
  std::vector<DescriptionHit> hits;
  size_t invisible = 0;
  std::optional<size_t> first;
  for (size_t i = 0; i < text.size();) {
    CodePoint cp = Decode(text, i);
    if (Invisible(cp.value)) {
      ++invisible;
      if (!first) first = i;
    }
    i += cp.length;
  }
  if (invisible > 0) {
    hits.push_back(
        {Severity::kHigh,
         std::to_string(invisible) + " invisible Unicode character" + (invisible == 1 ? "" : "s"),
         Excerpt(text, *first, *first + 1)});
  }
  const std::string owned(text);
  for (const Rule& rule : Rules()) {
    std::smatch m;
    if (std::regex_search(owned, m, rule.pattern)) {
      size_t at = static_cast<size_t>(m.position(0));
      hits.push_back({rule.severity, rule.name, Excerpt(text, at, at + m.length(0))});
    }
  }
  for (const auto& name : other_tools) {
    if (NameMentioned(text, name)) {
      size_t at = text.find(name);
      hits.push_back(
          {Severity::kInfo, "names another tool: " + name, Excerpt(text, at, at + name.size())});
    }
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const auto& a, const auto& b) { return a.severity > b.severity; });
  return hits;
}

}  // namespace gander::vet
