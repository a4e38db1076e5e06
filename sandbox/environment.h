// The extension's environment, built from nothing: a fixed PATH and HOME, the variables the
// policy passes through from gander's own environment, and the ones it sets. Goose's
// environment (provider API keys included) never reaches the extension otherwise. Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "policies/policy.h"

namespace gander::sandbox {

inline constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// `path_dirs` go first on PATH (the resolved command's and interpreter's directories);
// `fixed` (HOME, and TMPDIR without a mount namespace) is set before the policy's env.set;
// `secrets` (the policy's named secrets, or NAME_FILE paths: SecretManager::Environment) come
// last and win over everything (the policy cannot name one variable twice: see Expand).
std::vector<std::string> BuildEnvironment(const policies::ExpandedPolicy& policy,
                                          const std::vector<std::string>& path_dirs,
                                          const std::map<std::string, std::string>& fixed,
                                          const std::map<std::string, std::string>& launcher_env,
                                          const std::map<std::string, std::string>& secrets = {});

// gander's own environment as a map.
std::map<std::string, std::string> CurrentEnvironment();

}  // namespace gander::sandbox
