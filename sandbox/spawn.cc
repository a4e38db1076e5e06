// Exec vectors built before fork; see spawn.h.
#include "sandbox/spawn.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>

extern char** environ;

namespace gander::sandbox {
namespace {

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

// execvp's search, done in the parent: the first regular executable `name` on PATH.
std::string SearchPath(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return name;
}

}  // namespace

ExecSpec::ExecSpec(std::vector<std::string> argv)
    : ExecSpec(std::move(argv), CurrentEnvironment()) {}

ExecSpec::ExecSpec(std::vector<std::string> argv, std::vector<std::string> env)
    : argv_(std::move(argv)), env_(std::move(env)) {
  Prepare();
}

void ExecSpec::Prepare() {
  for (std::string& a : argv_) argv_ptrs_.push_back(a.data());
  argv_ptrs_.push_back(nullptr);
  for (std::string& e : env_) env_ptrs_.push_back(e.data());
  env_ptrs_.push_back(nullptr);
  path_ = argv_.empty() ? std::string() : SearchPath(argv_[0]);
}

int ExecSpec::Exec() const noexcept {
  if (argv_.empty()) return EINVAL;
  execve(path_.c_str(), argv_ptrs_.data(), env_ptrs_.data());
  return errno;
}

}  // namespace gander::sandbox
