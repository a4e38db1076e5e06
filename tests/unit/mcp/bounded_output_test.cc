// Output truncation: first and last bytes kept, the cut counted and said.
#include "mcp/bounded_output.h"

#include <gtest/gtest.h>

#include <string>

namespace gander::mcp {
namespace {

TEST(BoundedOutput, KeepsShortOutputWhole) {
  BoundedOutput out(100);
  out.Feed("hello ");
  out.Feed("world");
  EXPECT_EQ(out.Text(), "hello world");
  EXPECT_EQ(out.cut(), 0u);
  EXPECT_EQ(out.total(), 11u);
}

TEST(BoundedOutput, KeepsHeadAndTailAndSaysHowMuchWasCut) {
  BoundedOutput out(10);
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>('a' + i % 26);
  // Fed in odd pieces: the result must not depend on how the stream was split.
  for (size_t i = 0; i < data.size(); i += 7) out.Feed(data.substr(i, 7));
  EXPECT_EQ(out.total(), 1000u);
  EXPECT_EQ(out.cut(), 990u);
  EXPECT_EQ(out.Text(), data.substr(0, 5) + CutMarker(990) + data.substr(995));
}

TEST(BoundedOutput, OnePieceLargerThanTheLimit) {
  BoundedOutput out(8);
  out.Feed(std::string(3, 'x') + std::string(1 << 20, 'y') + "tail");
  EXPECT_EQ(out.cut(), (1u << 20) + 7 - 8);
  EXPECT_EQ(out.Text(), "xxxy" + CutMarker(out.cut()) + "tail");
}

TEST(BoundedOutput, ExactlyAtTheLimitIsNotCut) {
  BoundedOutput out(6);
  out.Feed("abc");
  out.Feed("def");
  EXPECT_EQ(out.Text(), "abcdef");
  EXPECT_EQ(out.cut(), 0u);
}

}  // namespace
}  // namespace gander::mcp
