// Checks the words of a gander command line against the CLI's model before CLI11 parses it, so
// that an unknown command or option is reported by its own name, with the closest known word
// ("did you mean") and where the right words are listed (`gander COMMAND --help`). CLI11's own
// messages name the wrong thing for gander's `run -- COMMAND` shape ("-- --frobnicate").
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gander::launcher {

// The closest of `known` to `word` when it is close enough to be a typo (edit distance <= 2,
// and less than half of the word), else nothing.
std::optional<std::string> ClosestWord(const std::string& word,
                                       const std::vector<std::string>& known);

// An error message for the first unknown command or option in args (argv without argv[0]),
// else nothing. Words after `--`, inside `collect` (gander-collect's own), and after the first
// positional of a command whose positionals come last (run, audit: the extension's command)
// are not checked.
std::optional<std::string> CheckWords(const CLI::App& app, const std::vector<std::string>& args);

// The subcommand named by `path` (`policy suggest`), or an error message naming the word that
// is not one.
const CLI::App* FindCommand(const CLI::App& app, const std::vector<std::string>& path,
                            std::string& error);

}  // namespace gander::launcher
