// The shipped profiles (policies/profiles/*.yaml), compiled into the binary so `gander` works
// from any directory. The table is generated at build time by embed_profiles.cmake.
#pragma once

#include <span>
#include <string_view>

namespace gander::policies {

struct BuiltinProfile {
  std::string_view name;  // the file name without .yaml
  std::string_view yaml;  // the file's text
};

// Every shipped profile, sorted by name.
std::span<const BuiltinProfile> BuiltinProfiles();

}  // namespace gander::policies
