// The words of an enumeration's values, one table for both directions:
//
//   constexpr EnumName<Severity> kSeverityNames[] = {{Severity::kInfo, "info"}, ...};
//   NameOf(kSeverityNames, Severity::kLow)  // "low"
//   ValueOf(kSeverityNames, "low")          // Severity::kLow; nullopt for a word not listed
//
// List every value: one missing from its table gets the first entry's word.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gander {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

template <typename E, size_t N>
constexpr const char* NameOf(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E>& n : names) {
    if (n.value == value) return n.name;
  }
  return names[0].name;
}

template <typename E, size_t N>
constexpr std::optional<E> ValueOf(const EnumName<E> (&names)[N], std::string_view name) {
  for (const EnumName<E>& n : names) {
    if (name == n.name) return n.value;
  }
  return std::nullopt;
}

}  // namespace gander
