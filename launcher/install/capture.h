// Running a host helper (curl, tar) and collecting what it prints.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace gander::launcher::install {

// Runs argv (looked up in PATH) with `input` on its stdin and gander's stderr as its own;
// returns its stdout, or an error naming its exit status.
Result<std::string> CaptureOutput(const std::vector<std::string>& argv, const std::string& input);

}  // namespace gander::launcher::install
