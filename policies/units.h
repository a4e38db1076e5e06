// The units a policy writes sizes and durations in ("512MiB", "1h30m"), parsed and formatted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gander::policies {

// A whole number in decimal digits only (no sign, no space); nullopt past uint64_t.
std::optional<uint64_t> ParseUnsigned(std::string_view text);

// Parses a size: an integer number of bytes, optionally followed by a unit (spaces allowed in
// between): B, KiB, MiB, GiB, TiB, or the shorthands K, M, G, T for the same binary units.
// "512MiB" = 512 * 2^20. Decimal units (KB, MB, GB, TB), fractions, signs and lower-case units
// are rejected (KB is ambiguous; say what you mean). Zero parses; callers decide if it is legal.
Result<uint64_t> ParseSize(std::string_view text);

// The inverse for display: "1GiB" when `bytes` is an exact multiple of a unit, else "12345".
std::string FormatSize(uint64_t bytes);

// Parses a duration: one or more whole numbers each followed by a unit, largest unit first,
// each unit at most once, no spaces: d (days), h, m, s. "30s", "5m", "8h", "1h30m", "2d12h".
// Returns seconds. A bare number, fractions ("1.5h"), signs and unknown units are rejected:
//   '8x': unknown duration unit 'x' (expected d, h, m or s, e.g. 30s, 5m, 8h, 1h30m)
// Zero parses ("0s"); callers decide if it is legal.
Result<uint64_t> ParseDuration(std::string_view text);

// The inverse for display: 5400 -> "1h30m", 0 -> "0s".
std::string FormatDuration(uint64_t seconds);

}  // namespace gander::policies
