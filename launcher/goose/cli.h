// `gander goose wrap|unwrap|doctor`: Goose's config.yaml on disk, around the pure rewrite in
// goose_config.h.
#pragma once

#include <ostream>
#include <string>

namespace gander::launcher {

// ~/.config/goose/config.yaml (or $XDG_CONFIG_HOME/goose/config.yaml).
std::string DefaultGooseConfig();

// Wraps (or, with `unwrap`, unwraps) every stdio extension of `config`, printing a diff on
// `out`; with `dry_run` nothing is written. Returns the exit status.
int GooseWrap(const std::string& config, bool unwrap, bool dry_run, std::ostream& out);

// Per extension: wrapped or not, policy valid, command found, collector reachable, isolation;
// with `start`, each wrapped extension is started as Goose would (launcher/goose/probe.h);
// with `json`, the report is printed as JSON.
int GooseDoctor(const std::string& config, std::ostream& out, bool start = false,
                bool json = false);

}  // namespace gander::launcher
