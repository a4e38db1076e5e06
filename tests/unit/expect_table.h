// Table-driven checks for the unit tests: a pure function called with many inputs, written as
// one row per input and the result it must give instead of one EXPECT_EQ line per call. Each
// failure names the row's input (the helper's own line is the same for every row).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gander::unit {

// For each row {input, want}: EXPECT_EQ(fn(input), want). Out defaults to std::string; name it
// for other results (ExpectMaps<HostKind>(KindOf, {...})).
template <typename Out = std::string, typename Fn>
void ExpectMaps(Fn&& fn, const std::vector<std::pair<std::string, Out>>& rows) {
  for (const auto& [input, want] : rows) {
    EXPECT_EQ(fn(input), want) << "for the input \"" << input << "\"";
  }
}

}  // namespace gander::unit
