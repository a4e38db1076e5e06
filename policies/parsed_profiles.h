// The shipped profiles as the build parsed them (policies/profile_gen.cc writes them as C++,
// policy_cpp.h): the loader takes one instead of parsing a profile's YAML whenever the text it
// found (the copy built into the binary, or an installed file) is the text the build parsed.
// The table is in its own library (gander_parsed_profiles, generated after gander_policies is
// built): a program that links it says so once, at its start (UseParsedProfiles).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "policies/policy.h"

namespace gander::policies {

// The Policy ParsePolicy(yaml, source) would give, when `yaml` is the text of the shipped
// profile `name` that the build parsed; nullopt otherwise.
using ParsedProfileLookup = std::optional<Policy> (*)(std::string_view name, std::string_view yaml,
                                                      const std::string& source);

// Makes LoadProfile (loader.h) consult `lookup` first. Call before any profile is loaded.
void UseParsedProfiles(ParsedProfileLookup lookup);

// The generated table's lookup (gander_parsed_profiles).
std::optional<Policy> ParsedShippedProfile(std::string_view name, std::string_view yaml,
                                           const std::string& source);

}  // namespace gander::policies
