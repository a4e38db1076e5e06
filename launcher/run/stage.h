// What the stages of `gander run` (launcher/run.cc) share: how a stage stops the run.
#pragma once

#include <string>

namespace gander::launcher {

// A stage's refusal: gander's exit status and the one line Run prints on stderr.
struct Stop {
  int status;
  std::string message;
};

// Prints the stop's message as an error; returns its status.
int Report(const Stop& stop);

}  // namespace gander::launcher
