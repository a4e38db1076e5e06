// Secret redaction on the extension's stdout and stderr: every occurrence of a secret's value
// that gander injected is replaced by a marker naming the secret, `[gander:redacted:NAME]`,
// before it reaches Goose. Found as written raw and in every JSON string escape form (`\/`,
// `\u00XX` in either case, `\uXXXX` and surrogate pairs for non-ASCII, `\n`...), also when cut
// by a read or by line breaks (up to kMaxBreaks inside one occurrence). A value of at least
// kMinEncodedSecretBytes is also found printed hex (in any case, mixed too) and base64 (standard
// or URL-safe alphabet, padded or not, at any of the three byte alignments in the encoded
// stream): the characters that depend on the value alone are replaced, which leaves at most
// a few bits of its first and last bytes in the characters around the marker. Streaming: bytes that
// may be the start of an occurrence are held back until the following bytes decide.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "relay/line_relay.h"

namespace gander::relay {

struct Secret {
  std::string name;   // e.g. GITHUB_TOKEN; only [A-Za-z0-9_.-] are kept in the marker
  std::string value;  // only values IsRedactable() accepts are redacted
};

inline constexpr size_t kMinSecretBytes = 8;

// The floor: a value too short or too common to be a secret is never redacted, whatever its
// name says (replacing every "true" or "debug" an extension prints breaks its output, and its
// JSON): shorter than kMinSecretBytes; only digits; only letters and shorter than 16 (a word:
// "production", "localhost"); or made only of what JSON has outside strings (digits, `+-.eE`,
// `,:[]{}`, whitespace, and letter runs inside true/false/null). The launcher warns once when
// a secret falls below it.
bool IsRedactable(std::string_view value);
// Values at least this long are also looked for hex and base64 encoded (shorter ones would
// give encoded forms of a few characters, found by chance in ordinary output).
inline constexpr size_t kMinEncodedSecretBytes = 8;

class Redactor final : public StreamRewriter {
 public:
  static constexpr int kMaxBreaks = 4;  // line-break bytes tolerated inside one occurrence

  // `on_redact(name, count)` is called for each Rewrite that replaced something.
  Redactor(std::vector<Secret> secrets,
           std::function<void(const std::string& name, uint64_t count)> on_redact = {});

  Outcome Rewrite(std::string_view pending, bool at_end) override;
  // Replaces the set (a refreshed secret: its new value and every old one).
  void SetSecrets(std::vector<Secret> secrets);

  // JSON-RPC lines (stdout): an occurrence never spans a raw `"`, so a marker stays inside
  // the JSON string it replaces text in and the line stays valid JSON.
  void SetJsonLines(bool on) { json_lines_ = on; }

  static std::string Marker(std::string_view name);
  bool empty() const { return secrets_.empty(); }

 private:
  enum class Match { kNone, kFull, kPartial };
  struct Entry {
    std::string name;
    std::string value;
    std::string marker;
    bool fold_case = false;  // a hex form: its letters match in either case (value is lower)
  };
  // Tries `e` at text[i]; on kFull, *end is one past the occurrence.
  Match TryAt(std::string_view text, size_t i, const Entry& e, size_t* end) const;

  std::vector<Entry> secrets_;
  bool starts_[256] = {};
  bool json_lines_ = false;
  std::function<void(const std::string&, uint64_t)> on_redact_;
};

}  // namespace gander::relay
