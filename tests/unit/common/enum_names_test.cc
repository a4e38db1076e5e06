#include "common/enum_names.h"

#include <gtest/gtest.h>

#include <string_view>

namespace gander {
namespace {

enum class Colour { kRed, kGreen, kBlue };
constexpr EnumName<Colour> kColours[] = {
    {Colour::kRed, "red"}, {Colour::kGreen, "green"}, {Colour::kBlue, "blue"}};

TEST(EnumNamesTest, BothDirections) {
  EXPECT_EQ(std::string_view(NameOf(kColours, Colour::kGreen)), "green");
  EXPECT_EQ(ValueOf(kColours, "blue"), Colour::kBlue);
  EXPECT_EQ(ValueOf(kColours, "Blue"), std::nullopt);
  EXPECT_EQ(ValueOf(kColours, ""), std::nullopt);
  static_assert(ValueOf(kColours, "red") == Colour::kRed);
}

TEST(EnumNamesTest, AValueNotListedGetsTheFirstWord) {
  EXPECT_EQ(std::string_view(NameOf(kColours, static_cast<Colour>(7))), "red");
}

}  // namespace
}  // namespace gander
