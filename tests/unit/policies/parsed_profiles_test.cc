// The shipped profiles as the build parsed them (policies/parsed_profiles.h) are the policies
// ParsePolicy gives for the same text, under the built-in name and under an installed file's
// path; a text that differs by one byte is parsed, not looked up.
#include "policies/parsed_profiles.h"

#include <gtest/gtest.h>

#include <string>

#include "policies/builtin_profiles.h"
#include "policies/loader.h"
#include "policies/parser.h"

namespace gander::policies {
namespace {

TEST(ParsedProfiles, EveryShippedProfileIsTheParsedOne) {
  int checked = 0;
  for (const BuiltinProfile& profile : BuiltinProfiles()) {
    const std::string name(profile.name);
    for (const std::string& source :
         {"profile:" + name, "/usr/share/gander/profiles/" + name + ".yaml"}) {
      auto parsed = ParsePolicy(profile.yaml, source);
      ASSERT_TRUE(parsed.ok()) << parsed.error().Describe();
      auto generated = ParsedShippedProfile(name, profile.yaml, source);
      ASSERT_TRUE(generated.has_value()) << source;
      EXPECT_TRUE(*generated == *parsed) << source;
      EXPECT_EQ(generated->source, source);
      ++checked;
    }
  }
  EXPECT_GE(checked, 2 * 10);
}

TEST(ParsedProfiles, OnlyTheTextTheBuildParsedIsLookedUp) {
  const BuiltinProfile& first = BuiltinProfiles().front();
  std::string changed(first.yaml);
  changed += "\n# one more line\n";
  EXPECT_FALSE(ParsedShippedProfile(first.name, changed, "x.yaml").has_value());
  EXPECT_FALSE(ParsedShippedProfile("no-such-profile", first.yaml, "x.yaml").has_value());
  for (const BuiltinProfile& other : BuiltinProfiles()) {
    if (other.name == first.name) continue;
    EXPECT_FALSE(ParsedShippedProfile(other.name, first.yaml, "x.yaml").has_value());
    break;
  }
}

TEST(ParsedProfiles, TheLoaderGivesTheSamePolicyEitherWay) {
  for (const BuiltinProfile& profile : BuiltinProfiles()) {
    UseParsedProfiles(nullptr);
    auto parsed = LoadProfile(std::string(profile.name), {});
    UseParsedProfiles(&ParsedShippedProfile);
    auto looked_up = LoadProfile(std::string(profile.name), {});
    UseParsedProfiles(nullptr);
    ASSERT_TRUE(parsed.ok() && looked_up.ok()) << profile.name;
    EXPECT_TRUE(*parsed == *looked_up) << profile.name;
  }
}

}  // namespace
}  // namespace gander::policies
