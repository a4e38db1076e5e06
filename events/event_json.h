// The audit log's line format: one Event as one JSON object on one line (schema in
// docs/audit-log.md). Hand-written so that paths, which are bytes and not text, survive:
//
// Byte strings are made text reversibly before JSON encoding ("byte escaping"):
//   - valid UTF-8 (RFC 3629, no overlongs or surrogates) is kept as is,
//   - a backslash becomes two backslashes,
//   - every byte that is not part of valid UTF-8 becomes the four characters \xNN (lower-case
//     hex).
// The result is then JSON-encoded ('"' and '\' escaped, control characters as \n, \t, \u00XX;
// DEL as \u007f). So a raw path "a\xffb" appears in the file as "a\\xffb", and a path holding
// a real backslash, "a\b", as "a\\\\b". UnescapeBytes undoes the first step after a JSON
// parser has undone the second.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "events/event.h"

namespace gander::events {

// The byte escaping above (without JSON encoding): always valid UTF-8.
std::string EscapeBytes(std::string_view bytes);
// Inverse of EscapeBytes; nullopt for a malformed escape (a lone '\' or bad \x digits).
std::optional<std::string> UnescapeBytes(std::string_view text);

// Appends `bytes` as a JSON string literal (quotes included), byte-escaped then JSON-encoded.
void AppendJsonString(std::string& out, std::string_view bytes);
// Appends `text` as a JSON string literal that parses back to the same text (no byte
// escaping); an invalid UTF-8 byte becomes U+FFFD. For text already valid, as label values.
void AppendJsonText(std::string& out, std::string_view text);

// RFC 3339 UTC with microseconds: 2025-06-01T10:00:00.123456Z.
std::string FormatRfc3339Micros(int64_t unix_ns);

// The event as one line of JSON, '\n' included. Never fails; bounds the raw path and argv.
std::string ToJsonLine(const Event& event);

}  // namespace gander::events
