// Resolving the extension's command on the host before anything starts: the executable by
// PATH, the interpreter its shebang names (through `env`), the script an interpreter is given,
// and the install prefix of each, which the sandbox must be able to read and execute.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace gander::launcher {

struct ResolvedCommand {
  std::string exec_path;               // absolute path execve gets
  std::vector<std::string> readable;   // paths to grant read+exec (prefixes, the files)
  std::vector<std::string> path_dirs;  // directories to put first on the sandbox's PATH
};

// Looks `name` up like execvp does (a name with a slash is taken as a path relative to cwd).
// Error code ENOENT when not found, EACCES when found but not executable.
Result<std::string> FindExecutable(const std::string& name, const std::string& path_env,
                                   const std::string& cwd);

// The directory an executable's installation lives in: the enclosing `node_modules` for npm
// packages, the parent of a `bin` directory (/home/u/.nvm/versions/node/v20/bin/node ->
// .../v20), else the file's own directory. Pure.
std::string InstallPrefix(const std::string& path);

// `home` guards the grants: a prefix that is the home directory, one of its parents or `/`
// is never granted (a tool in ~/bin must not expose all of ~); the file's own directory is.
// A version manager's shim (pyenv, rbenv, nodenv, asdf, mise, volta; launcher/shims.h), as
// the command or as the interpreter a shebang names through `env`, is replaced by the program
// it runs, asked of the manager with `env` in `cwd`. A command in ~/.local/bin gets the file
// and ~/.local/lib (pip --user packages) granted, not all of ~/.local (gander's own state).
Result<ResolvedCommand> ResolveCommand(const std::vector<std::string>& argv,
                                       const std::string& path_env, const std::string& cwd,
                                       const std::string& home,
                                       const std::map<std::string, std::string>& env = {});

}  // namespace gander::launcher
