#include "sandbox/environment.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gander::sandbox {
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

TEST(BuildEnvironment, APassedValueWinsOverTheSetDefault) {
  // The memory profile: MEMORY_FILE_PATH passed and set; the user's own value wins.
  policies::ExpandedPolicy policy;
  policy.env_pass = {"MEMORY_FILE_PATH"};
  policy.env_set = {{"MEMORY_FILE_PATH", "/data/memory.jsonl"}};
  EXPECT_EQ(BuildEnvironment(policy, {}, {}, {{"MEMORY_FILE_PATH", "/ws/m.jsonl"}}),
            (std::vector<std::string>{"MEMORY_FILE_PATH=/ws/m.jsonl",
                                      "PATH=/usr/local/bin:/usr/bin:/bin"}));
  EXPECT_EQ(BuildEnvironment(policy, {}, {}, {}),
            (std::vector<std::string>{"MEMORY_FILE_PATH=/data/memory.jsonl",
                                      "PATH=/usr/local/bin:/usr/bin:/bin"}));
}

TEST(BuildEnvironment, OnlyTheNamedSecretsUnderTheirSandboxNames) {
  policies::ExpandedPolicy policy;
  policy.env_pass = {"LANG"};
  std::map<std::string, std::string> host = {{"LANG", "C"},
                                             {"OPENAI_API_KEY", "sk-openai"},
                                             {"AWS_SECRET_ACCESS_KEY", "aws-secret"},
                                             {"SLACK_TOKEN", "xoxb-1"}};
  auto env = BuildEnvironment(policy, {}, {{"HOME", "/h"}}, host,
                              {{"SLACK_BOT_TOKEN", "xoxb-1"}, {"CERT_FILE", "/run/secrets/CERT"}});
  std::vector<std::string> expected = {"CERT_FILE=/run/secrets/CERT", "HOME=/h", "LANG=C",
                                       std::string("PATH=") + kDefaultPath,
                                       "SLACK_BOT_TOKEN=xoxb-1"};
  EXPECT_EQ(env, expected);
}

}  // namespace
}  // namespace gander::sandbox
