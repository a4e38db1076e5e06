// Shell completion scripts (bash, zsh, fish) generated from the CLI's own model, so they list
// exactly the commands and options `gander` accepts. The build writes them with
// `gander completions SHELL` (a hidden command) and `cmake --install` installs them.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace gander::launcher {

// Writes the completion script for `shell` (bash, zsh or fish); false for another shell.
bool WriteCompletions(const CLI::App& app, const std::string& shell, std::ostream& out);

}  // namespace gander::launcher
