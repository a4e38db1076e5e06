// The install phase for package runners (`npx -y PKG`, `npm exec PKG`, `uvx PKG`, `pipx run
// PKG`): before the extension starts, gander installs its package into a per-extension cache,
// $XDG_DATA_HOME/gander/packages/NAME/ (default ~/.local/share/gander/packages/NAME), in a
// sandbox of its own: the network only to the npm registry or the Python package index, writes
// only to that cache, an empty private home (every access to it logged), install scripts
// (npm's, setup.py) confined with it. Python packages go into a venv in the cache, installed
// with pip for both runners. The package
// is checked against OSV first. The extension then runs from the cache (its bin), read-only
// and offline, under its own policy; later starts reuse the cache; `gander update NAME`
// refreshes it.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "launcher/run.h"

namespace gander::launcher::install {

struct InstallOptions {
  // --install auto | off; unset: the policy's `install:` (policies/policy.h), else auto.
  std::optional<bool> enabled;
  std::string osv_endpoint;  // --osv-endpoint; empty: GANDER_OSV_ENDPOINT, else api.osv.dev
};

// The name an extension gets when --name is absent and its command is a package runner: the
// package's name without its scope (`npx -y @x/server-memory` -> server-memory); else the
// command itself (for DefaultExtensionName).
std::string NameSource(const std::vector<std::string>& command);

// `gander run`: installs when the command is a package runner and its cache is missing or was
// made for another package, then runs the extension from the cache. Returns gander's exit
// status.
int RunWithInstall(RunOptions run, const InstallOptions& install);

// `gander update NAME`: installs NAME's package again (the newest version its spec allows),
// with the OSV check, in the install sandbox. What changed goes to `out`.
int Update(const std::string& name, RunOptions run, const InstallOptions& install,
           std::ostream& out);

// The policy of an install step that is not a package runner's (`gander mcp`'s sandbox_create
// `install`): the default profile with the host's npm registry and Python index (and PyPI's
// file host) as the only destinations, npm and pip pointed at them.
std::string InstallStepPolicy();

// $XDG_DATA_HOME/gander/packages (default ~/.local/share/gander/packages).
std::string PackagesDir();

}  // namespace gander::launcher::install
