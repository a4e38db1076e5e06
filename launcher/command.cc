#include "launcher/command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>

#include "common/path.h"
#include "common/unique_fd.h"
#include "launcher/shims.h"
#include "sandbox/filesystem_plan.h"

namespace gander::launcher {
namespace {

std::string Dirname(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The interpreter line of a script ("#!/usr/bin/env node" -> {"/usr/bin/env", "node"}).
std::vector<std::string> ReadShebang(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  char buf[256];
  ssize_t n = read(fd.get(), buf, sizeof(buf) - 1);
  if (n < 3 || buf[0] != '#' || buf[1] != '!') return {};
  std::string line(buf + 2, static_cast<size_t>(n) - 2);
  line = line.substr(0, line.find('\n'));
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  return words;
}

// Interpreters whose first non-option argument is commonly the program to run.
bool IsScriptInterpreter(const std::string& name) {
  static const std::set<std::string> kNames = {"node",    "nodejs", "deno", "bun",  "python",
                                               "python3", "ruby",   "perl", "bash", "sh"};
  if (kNames.count(name)) return true;
  return name.starts_with("python3.");
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Result<std::string> FindExecutable(const std::string& name, const std::string& path_env,
                                   const std::string& cwd) {
  if (name.empty()) return Error{ENOENT, "empty command"};
  auto check = [](const std::string& candidate) -> int {
    struct stat st;
    if (stat(candidate.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return ENOENT;
    return access(candidate.c_str(), X_OK) == 0 ? 0 : EACCES;
  };
  if (name.find('/') != std::string::npos) {
    std::string path = name[0] == '/' ? name : cwd + "/" + name;
    if (int err = check(path)) return Error{err, name};
    return path;
  }
  int last = ENOENT;
  size_t i = 0;
  std::string dirs = path_env.empty() ? "/usr/local/bin:/usr/bin:/bin" : path_env;
  while (i <= dirs.size()) {
    size_t j = dirs.find(':', i);
    if (j == std::string::npos) j = dirs.size();
    std::string dir = dirs.substr(i, j - i);
    std::string candidate;
    if (dir.empty() || dir[0] != '/') candidate.append(cwd).append("/");
    candidate.append(dir.empty() ? "." : dir).append("/").append(name);
    int err = check(candidate);
    if (err == 0) return candidate;
    if (err == EACCES) last = EACCES;
    i = j + 1;
  }
  return Error{last, name};
}

std::string InstallPrefix(const std::string& path) {
  const std::string marker = "/node_modules/";
  if (auto at = path.find(marker); at != std::string::npos) {
    return path.substr(0, at + marker.size() - 1);
  }
  std::string dir = Dirname(path);
  if (Basename(dir) == "bin" || Basename(dir) == "sbin") {
    std::string prefix = Dirname(dir);
    if (prefix != "/") return prefix;
  }
  return dir;
}

Result<ResolvedCommand> ResolveCommand(const std::vector<std::string>& argv,
                                       const std::string& path_env, const std::string& cwd,
                                       const std::string& home,
                                       const std::map<std::string, std::string>& env) {
  if (argv.empty()) return Error{ENOENT, "no command given"};
  auto found = FindExecutable(argv[0], path_env, cwd);
  if (!found) return found.error();
  auto unshim = [&](const std::string& path) {
    return ResolveShim(path, env, cwd, home).value_or(path);
  };

  ResolvedCommand out;
  out.exec_path = unshim(*found);
  const std::string dot_local = home.empty() ? std::string() : home + "/.local";
  auto grant = [&](const std::string& file) {
    std::string prefix = InstallPrefix(file);
    if (prefix == "/" || (!home.empty() && IsWithin(home, prefix))) prefix = Dirname(file);
    if (!dot_local.empty() && prefix == dot_local) {
      // ~/.local/bin/TOOL: the tool and pip's --user packages, never ~/.local/share or state.
      prefix = Dirname(file);
      struct stat st;
      std::string lib = dot_local + "/lib";
      if (stat(lib.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
          std::find(out.readable.begin(), out.readable.end(), lib) == out.readable.end()) {
        out.readable.push_back(lib);
      }
    }
    for (const std::string& path : {file, prefix}) {
      if (path == "/" || (!home.empty() && IsWithin(home, path))) continue;
      if (std::find(out.readable.begin(), out.readable.end(), path) == out.readable.end()) {
        out.readable.push_back(path);
      }
    }
  };
  auto add = [&](const std::string& file) {
    grant(file);
    grant(RealPath(file).value_or(file));
    std::string dir = Dirname(file);
    if (std::find(out.path_dirs.begin(), out.path_dirs.end(), dir) == out.path_dirs.end()) {
      out.path_dirs.push_back(dir);
    }
  };
  add(out.exec_path);

  // Follow the interpreter chain: script -> #!/usr/bin/env node -> node (at most 4 deep).
  std::string current = RealPath(out.exec_path).value_or(out.exec_path);
  std::string interpreter = Basename(current);
  for (int depth = 0; depth < 4; ++depth) {
    std::vector<std::string> shebang = ReadShebang(current);
    if (shebang.empty()) break;
    std::string next = shebang[0];
    if (Basename(next) == "env" && shebang.size() > 1) {
      size_t k = 1;
      while (k < shebang.size() && shebang[k].starts_with('-')) ++k;  // env -S ...
      if (k == shebang.size()) break;
      add(next);
      auto via_path = FindExecutable(shebang[k], path_env, cwd);
      if (!via_path) break;
      next = unshim(*via_path);
    }
    add(next);
    current = RealPath(next).value_or(next);
    interpreter = Basename(current);
  }

  // `node server.js`, `python3 -u app.py`: the script and its package come along.
  if (IsScriptInterpreter(Basename(out.exec_path)) || IsScriptInterpreter(interpreter)) {
    for (size_t k = 1; k < argv.size(); ++k) {
      if (argv[k].starts_with('-')) continue;
      std::string script = argv[k][0] == '/' ? argv[k] : cwd + "/" + argv[k];
      if (IsRegularFile(script)) {
        grant(script);
        grant(RealPath(script).value_or(script));
      }
      break;
    }
  }
  return out;
}

}  // namespace gander::launcher
