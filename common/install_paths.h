// Where an installed gander finds its own files: relative to the running binary, so that
// `cmake --install --prefix P` and the Debian package (prefix /usr) work without a configured
// path. With the binary at P/bin/gander: the collector at P/libexec/gander/gander-collect, the
// shipped profiles in P/share/gander/profiles. A binary in the build tree (not under a `bin`
// directory) has no install prefix: callers fall back to their build-tree locations.
#pragma once

#include <optional>
#include <string>

namespace gander {

// The directory of /proc/self/exe ("." when it cannot be read).
std::string SelfExeDir();

// P when the running binary is P/bin/NAME, else nothing.
std::optional<std::string> InstallPrefix();

// P/libexec/gander and P/share/gander for an installed binary, else nothing.
std::optional<std::string> InstalledLibexecDir();
std::optional<std::string> InstalledDataDir();

}  // namespace gander
