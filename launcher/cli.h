// The `gander` command line: run, policy check/show, doctor, version.
#pragma once

namespace gander::launcher {

// Parses argv and runs the subcommand; returns the process exit status.
int Main(int argc, char** argv);

}  // namespace gander::launcher
