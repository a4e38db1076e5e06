#include "common/exec_strings.h"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>

namespace gander {
namespace {

TEST(ExecStringsTest, NullTerminatedArrayOfTheStrings) {
  ExecStrings argv({"/bin/echo", "a b", ""});
  char* const* p = argv.get();
  EXPECT_STREQ(p[0], "/bin/echo");
  EXPECT_STREQ(p[1], "a b");
  EXPECT_STREQ(p[2], "");
  EXPECT_EQ(p[3], nullptr);
  EXPECT_STREQ(argv.front(), "/bin/echo");
}

TEST(ExecStringsTest, EmptyIsJustTheTerminator) {
  ExecStrings none({});
  EXPECT_EQ(none.get()[0], nullptr);
  EXPECT_EQ(none.front(), nullptr);
}

TEST(ExecStringsTest, EnvironmentIsNameEqualsValueInMapOrder) {
  ExecStrings env = ExecStrings::Environment({{"PATH", "/bin"}, {"HOME", "/h"}, {"E", ""}});
  char* const* p = env.get();
  EXPECT_STREQ(p[0], "E=");
  EXPECT_STREQ(p[1], "HOME=/h");
  EXPECT_STREQ(p[2], "PATH=/bin");
  EXPECT_EQ(p[3], nullptr);
}

TEST(ExecStringsTest, PointersSurviveAMove) {
  // Short strings live inside the std::string objects (SSO): a move must not relocate them.
  ExecStrings a({"x", "yy"});
  ExecStrings b = std::move(a);
  EXPECT_STREQ(b.get()[0], "x");
  EXPECT_STREQ(b.get()[1], "yy");
  ExecStrings c({"z"});
  c = std::move(b);
  EXPECT_STREQ(c.get()[1], "yy");
  EXPECT_EQ(c.get()[2], nullptr);
}

}  // namespace
}  // namespace gander
