#include "sandbox/environment.h"

#include <unistd.h>

#include <algorithm>

extern char** environ;

namespace gander::sandbox {

std::vector<std::string> BuildEnvironment(const policies::ExpandedPolicy& policy,
                                          const std::vector<std::string>& path_dirs,
                                          const std::map<std::string, std::string>& fixed,
                                          const std::map<std::string, std::string>& launcher_env,
                                          const std::map<std::string, std::string>& secrets) {
  std::map<std::string, std::string> env;
  std::string path;
  const std::string defaults = std::string(":") + kDefaultPath + ":";
  for (const auto& dir : path_dirs) {
    if (defaults.find(":" + dir + ":") != std::string::npos) continue;
    if (!path.empty()) path += ':';
    path += dir;
  }
  env["PATH"] = path.empty() ? kDefaultPath : path + ":" + kDefaultPath;
  for (const auto& [name, value] : fixed) env[name] = value;
  for (const auto& name : policy.env_pass) {
    if (auto it = launcher_env.find(name); it != launcher_env.end()) env[name] = it->second;
  }
  // A variable both passed and set: the caller's value when it has one (a user's own
  // MEMORY_FILE_PATH), else the policy's (the profile's default).
  for (const auto& [name, value] : policy.env_set) {
    bool passed =
        std::find(policy.env_pass.begin(), policy.env_pass.end(), name) != policy.env_pass.end();
    if (!passed || !launcher_env.contains(name)) env[name] = value;
  }
  for (const auto& [name, value] : secrets) env[name] = value;

  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

}  // namespace gander::sandbox
