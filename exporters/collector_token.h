// The collector's per-user secret: a random token in a 0600 file in gander's state directory
// (GanderStateDir()/collector.token), which every sandbox is denied in every mode. A launcher
// reads it and presents it in its hello; the collector refuses a hello without it. Together
// with the SO_PEERCRED uid check this means that a process that reaches the socket (a sandbox
// through some hole, another program of the same user that cannot read gander's state) cannot
// report for an extension.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace gander::exporters {

inline constexpr size_t kCollectorTokenBytes = 32;  // 64 hex characters in the file

// GanderStateDir()/collector.token.
std::string DefaultCollectorTokenPath();

// The collector's side: reads the token at `path`, creating it first (random, 0600, published
// with link() so that two collectors starting together agree on one) when there is none. The
// file must be a regular file of ours, not a link, with no group or other access.
Result<std::string> LoadOrCreateCollectorToken(const std::string& path);

// The launcher's side: reads the token; an error when there is none or it is not private.
Result<std::string> ReadCollectorToken(const std::string& path);

// Compares in time that depends only on the lengths.
bool TokensEqual(std::string_view a, std::string_view b);

}  // namespace gander::exporters
