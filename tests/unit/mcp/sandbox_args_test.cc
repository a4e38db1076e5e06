// Arguments of the sandbox tools checked before anything starts.
#include <gtest/gtest.h>

#include "mcp/sandbox_pool.h"

namespace gander::mcp {
namespace {

using json = nlohmann::json;

TEST(ParseTtl, AcceptsUnitsAndSeconds) {
  EXPECT_EQ(ParseTtl(json("1h"))->count(), 3600);
  EXPECT_EQ(ParseTtl(json("30m"))->count(), 1800);
  EXPECT_EQ(ParseTtl(json("45s"))->count(), 45);
  EXPECT_EQ(ParseTtl(json("90"))->count(), 90);
  EXPECT_EQ(ParseTtl(json(2))->count(), 2);
  for (const json& bad : {json("0"), json("8d"), json("1w"), json("soon"), json(true), json(-1)}) {
    EXPECT_FALSE(ParseTtl(bad).ok()) << bad.dump();
  }
}

TEST(CheckSandboxName, LettersDigitsAndFewSigns) {
  EXPECT_TRUE(CheckSandboxName("build-1.try_2").ok());
  for (const char* bad : {"", ".hidden", "-x", "a/b", "../x", "a b", "x\n"}) {
    EXPECT_FALSE(CheckSandboxName(bad).ok()) << bad;
  }
  EXPECT_FALSE(CheckSandboxName(std::string(49, 'a')).ok());
}

}  // namespace
}  // namespace gander::mcp
