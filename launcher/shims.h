// Version managers' shims, resolved to the program they run. pyenv, rbenv, nodenv, asdf and
// mise put a directory of shims first on PATH (~/.pyenv/shims/python3 is a bash script that
// runs `pyenv exec`), volta its ~/.volta/bin; the shim needs the manager's own files in the
// home, which the sandbox keeps private, so it fails there. gander asks the manager on the
// host which program the shim would run (`pyenv which python3`, in the extension's working
// directory and with the launcher's environment, so local version files count) and runs that
// program instead; its install prefix is granted like any other (launcher/command.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gander::launcher {

// The manager a shim path belongs to and how to ask it: `argv` + the program's name, run with
// `env_root` (PYENV_ROOT=...) added. Pure: decided from the path alone.
struct ShimManager {
  std::string name;                              // pyenv, rbenv, nodenv, asdf, mise, volta
  std::vector<std::string> argv;                 // e.g. {"/root/.pyenv/libexec/pyenv", "which"}
  std::pair<std::string, std::string> env_root;  // {"PYENV_ROOT", "/root/.pyenv"}, or empty
};
std::optional<ShimManager> ShimManagerOf(const std::string& shim_path, const std::string& home);

// The real program behind `shim_path` (an absolute executable outside the shims), or nullopt
// when it is not a shim or the manager cannot say. Runs the manager (at most a few seconds).
std::optional<std::string> ResolveShim(const std::string& shim_path,
                                       const std::map<std::string, std::string>& env,
                                       const std::string& cwd, const std::string& home);

}  // namespace gander::launcher
