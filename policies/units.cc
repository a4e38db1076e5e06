// Sizes and durations; see units.h.
#include "policies/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>
#include <limits>

namespace gander::policies {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

struct DurationUnit {
  char name;
  uint64_t seconds;
};
constexpr DurationUnit kDurationUnits[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};

struct SizeUnit {
  std::string_view name;
  uint64_t bytes;
};
constexpr SizeUnit kSizeUnits[] = {
    {"B", 1},
    {"KiB", 1ULL << 10},
    {"MiB", 1ULL << 20},
    {"GiB", 1ULL << 30},
    {"TiB", 1ULL << 40},
    {"K", 1ULL << 10},
    {"M", 1ULL << 20},
    {"G", 1ULL << 30},
    {"T", 1ULL << 40},
};

}  // namespace

std::optional<uint64_t> ParseUnsigned(std::string_view text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(),
                                   [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return std::nullopt;
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Result<uint64_t> ParseSize(std::string_view text) {
  const std::string expected = " (expected bytes, or a number with a unit: 512MiB, 2GiB)";
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) {
    ++digits;
  }
  if (digits == 0) return MakeError(Quote(text) + " is not a size" + expected);
  std::optional<uint64_t> number = ParseUnsigned(text.substr(0, digits));
  if (!number) return MakeError(Quote(text) + " is too large");
  std::string_view unit = text.substr(digits);
  while (unit.starts_with(' ')) unit.remove_prefix(1);
  if (unit.empty()) return *number;
  for (const SizeUnit& known : kSizeUnits) {
    if (known.name != unit) continue;
    if (*number > std::numeric_limits<uint64_t>::max() / known.bytes) {
      return MakeError(Quote(text) + " is too large");
    }
    return *number * known.bytes;
  }
  if (unit.starts_with('.') || unit.starts_with(',')) {
    return MakeError(Quote(text) + ": fractions are not supported; use a smaller unit (1536MiB)");
  }
  if (unit == "KB" || unit == "kB" || unit == "MB" || unit == "GB" || unit == "TB") {
    return MakeError(Quote(text) + ": decimal unit " + Quote(unit) +
                     " is ambiguous; use KiB, MiB, GiB or TiB (powers of 1024)");
  }
  return MakeError(Quote(text) + ": unknown unit " + Quote(unit) +
                   " (expected B, KiB, MiB, GiB, TiB, or K, M, G, T for the same)");
}

std::string FormatSize(uint64_t bytes) {
  constexpr SizeUnit kLargestFirst[] = {
      {"TiB", 1ULL << 40}, {"GiB", 1ULL << 30}, {"MiB", 1ULL << 20}, {"KiB", 1ULL << 10}};
  for (const SizeUnit& unit : kLargestFirst) {
    if (bytes != 0 && bytes % unit.bytes == 0) {
      return std::to_string(bytes / unit.bytes) + std::string(unit.name);
    }
  }
  return std::to_string(bytes);
}

Result<uint64_t> ParseDuration(std::string_view text) {
  const std::string expected = " (expected d, h, m or s, e.g. 30s, 5m, 8h, 1h30m)";
  if (text.empty()) return MakeError("empty duration" + expected);
  uint64_t total = 0;
  size_t next_unit = 0;  // units must come largest first, each once
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])) != 0) {
      ++digits;
    }
    if (digits == 0) return MakeError(Quote(text) + " is not a duration" + expected);
    if (digits > 9) return MakeError(Quote(text) + " is too long a duration");
    uint64_t number = *ParseUnsigned(rest.substr(0, digits));
    rest.remove_prefix(digits);
    if (rest.empty()) {
      return MakeError(Quote(text) + ": a number needs a unit" + expected);
    }
    if (rest[0] == '.' || rest[0] == ',') {
      return MakeError(Quote(text) + ": fractions are not supported; use a smaller unit (90m)");
    }
    size_t unit = next_unit;
    while (unit < std::size(kDurationUnits) && kDurationUnits[unit].name != rest[0]) ++unit;
    if (unit == std::size(kDurationUnits)) {
      bool known = std::any_of(std::begin(kDurationUnits), std::end(kDurationUnits),
                               [&](const DurationUnit& u) { return u.name == rest[0]; });
      if (known) {
        return MakeError(Quote(text) + ": units go largest first, each once (1h30m, not 30m1h)");
      }
      return MakeError(Quote(text) + ": unknown duration unit " + Quote(rest.substr(0, 1)) +
                       expected);
    }
    total += number * kDurationUnits[unit].seconds;
    next_unit = unit + 1;
    rest.remove_prefix(1);
  }
  return total;
}

std::string FormatDuration(uint64_t seconds) {
  if (seconds == 0) return "0s";
  std::string out;
  for (const DurationUnit& unit : kDurationUnits) {
    if (seconds >= unit.seconds) {
      out += std::to_string(seconds / unit.seconds) + unit.name;
      seconds %= unit.seconds;
    }
  }
  return out;
}

}  // namespace gander::policies
