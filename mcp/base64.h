// Base64 (RFC 4648, standard alphabet, padded) for file_read and file_write's binary mode: a
// file's bytes cross the JSON-RPC link as text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gander::mcp {

std::string Base64Encode(std::string_view bytes);
// nullopt when `text` is not base64 (whitespace between groups is allowed).
std::optional<std::string> Base64Decode(std::string_view text);
// Whether `bytes` is valid UTF-8 (what a JSON string can carry unchanged).
bool IsUtf8(std::string_view bytes);

}  // namespace gander::mcp
