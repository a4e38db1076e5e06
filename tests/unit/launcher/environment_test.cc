#include "launcher/environment.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gander::launcher {
namespace {

TEST(BuildEnvironment, StartsEmptyAndTakesOnlyWhatThePolicyNames) {
  policies::ExpandedPolicy policy;
  policy.env_pass = {"LANG", "MISSING"};
  policy.env_set = {{"MODE", "strict"}};
  std::map<std::string, std::string> host = {
      {"LANG", "C.UTF-8"}, {"OPENAI_API_KEY", "sk-secret"}, {"PATH", "/home/u/bin:/usr/bin"}};
  auto env = BuildEnvironment(policy, {"/opt/node/bin", "/usr/bin"}, {{"HOME", "/home/u"}}, host);
  std::vector<std::string> expected = {"HOME=/home/u", "LANG=C.UTF-8", "MODE=strict",
                                       "PATH=/opt/node/bin:/usr/local/bin:/usr/bin:/bin"};
  EXPECT_EQ(env, expected);
}

TEST(BuildEnvironment, PolicySetWinsOverFixedValues) {
  policies::ExpandedPolicy policy;
  policy.env_set = {{"PATH", "/only"}};
  auto env = BuildEnvironment(policy, {}, {}, {});
  EXPECT_EQ(env, std::vector<std::string>{"PATH=/only"});
}

}  // namespace
}  // namespace gander::launcher
