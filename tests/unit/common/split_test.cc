#include "common/split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gander {
namespace {

std::vector<std::string> Pieces(std::string_view text, char separator) {
  std::vector<std::string> out;
  for (SplitView pieces(text, separator); auto piece = pieces.Next();) out.emplace_back(*piece);
  return out;
}

TEST(SplitViewTest, EveryPieceEmptyOnesIncluded) {
  EXPECT_EQ(Pieces("a/b", '/'), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Pieces("a//b", '/'), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Pieces("/a/", '/'), (std::vector<std::string>{"", "a", ""}));
  EXPECT_EQ(Pieces("", '/'), (std::vector<std::string>{""}));
  EXPECT_EQ(Pieces("x\ny\n", '\n'), (std::vector<std::string>{"x", "y", ""}));
}

TEST(SplitViewTest, MoreSaysWhetherASeparatorFollowedThePiece) {
  SplitView pieces("a/b", '/');
  ASSERT_EQ(pieces.Next(), "a");
  EXPECT_TRUE(pieces.more());
  ASSERT_EQ(pieces.Next(), "b");
  EXPECT_FALSE(pieces.more());
  EXPECT_EQ(pieces.Next(), std::nullopt);

  SplitView trailing("a/", '/');
  ASSERT_EQ(trailing.Next(), "a");
  EXPECT_TRUE(trailing.more());
}

TEST(SplitViewTest, PiecesPointIntoTheText) {
  std::string_view text = "ab,cd";
  SplitView pieces(text, ',');
  pieces.Next();
  auto second = pieces.Next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->data(), text.data() + 3);
}

}  // namespace
}  // namespace gander
