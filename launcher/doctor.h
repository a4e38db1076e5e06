// `gander doctor`: what the kernel allows here, which isolation level `gander run` would apply
// and why.
#pragma once

#include <ostream>

namespace gander::launcher {

// Prints the report; returns 0 when `run` gets full isolation, 1 otherwise.
int Doctor(std::ostream& out);

}  // namespace gander::launcher
