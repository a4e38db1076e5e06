#include "launcher/shims.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <csignal>

#include "common/exec_signals.h"
#include "common/exec_strings.h"
#include "common/path.h"
#include "common/unique_fd.h"

namespace gander::launcher {
namespace {

std::string Dirname(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

bool Executable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The first of `candidates` that is executable, else empty.
std::string FirstExecutable(const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    if (Executable(c)) return c;
  }
  return "";
}

// Runs argv with env and cwd; its first stdout line, or nullopt (failure, or past the limit).
std::optional<std::string> FirstLineOf(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& env,
                                       const std::string& cwd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  const ExecStrings envp = ExecStrings::Environment(env), args(argv);
  // `gander run` holds its termination signals (monitor::HoldTerminationSignals): not the helper.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  ResetSignalsInSpawn(&attr);
  pid_t pid = 0;
  int err = posix_spawn(&pid, args.front(), &actions, &attr, args.get(), envp.get());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (err != 0) return std::nullopt;
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(read_end.get(), buf, sizeof buf);
    if (n <= 0 || out.size() > 65536) break;
    out.append(buf, static_cast<size_t>(n));
  }
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out.substr(0, out.find('\n'));
}

}  // namespace

std::optional<ShimManager> ShimManagerOf(const std::string& shim_path, const std::string& home) {
  const std::string dir = Dirname(shim_path);
  const std::string root = Dirname(dir);
  const std::string root_name = Basename(root);
  if (Basename(dir) == "shims") {
    for (const char* name : {"pyenv", "rbenv", "nodenv"}) {
      if (root_name == std::string(".") + name) {
        std::string upper = name;
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        std::string program = FirstExecutable(
            {root + "/libexec/" + name, root + "/bin/" + name, "/usr/bin/" + std::string(name)});
        if (program.empty()) return std::nullopt;
        return ShimManager{name, {program, "which"}, {upper + "_ROOT", root}};
      }
    }
    if (root_name == ".asdf" || root_name == "asdf") {
      std::string program = FirstExecutable(
          {root + "/bin/asdf", "/usr/local/bin/asdf", "/usr/bin/asdf", home + "/.local/bin/asdf"});
      if (program.empty()) return std::nullopt;
      return ShimManager{"asdf", {program, "which"}, {"ASDF_DATA_DIR", root}};
    }
    if (root_name == "mise") {
      std::string program = FirstExecutable(
          {home + "/.local/bin/mise", "/usr/local/bin/mise", "/usr/bin/mise", root + "/bin/mise"});
      if (program.empty()) return std::nullopt;
      return ShimManager{"mise", {program, "which"}, {}};
    }
  }
  if (Basename(dir) == "bin" && root_name == ".volta" && Basename(shim_path) != "volta") {
    std::string program = FirstExecutable({dir + "/volta"});
    if (program.empty()) return std::nullopt;
    return ShimManager{"volta", {program, "which"}, {"VOLTA_HOME", root}};
  }
  return std::nullopt;
}

std::optional<std::string> ResolveShim(const std::string& shim_path,
                                       const std::map<std::string, std::string>& env,
                                       const std::string& cwd, const std::string& home) {
  auto manager = ShimManagerOf(shim_path, home);
  if (!manager) return std::nullopt;
  std::vector<std::string> argv = manager->argv;
  argv.push_back(Basename(shim_path));
  std::map<std::string, std::string> with_root = env;
  if (!manager->env_root.first.empty() && !with_root.contains(manager->env_root.first)) {
    with_root[manager->env_root.first] = manager->env_root.second;
  }
  auto line = FirstLineOf(argv, with_root, cwd);
  if (!line || !line->starts_with('/') || Dirname(*line) == Dirname(shim_path)) {
    return std::nullopt;
  }
  if (!Executable(*line)) return std::nullopt;
  return *line;
}

}  // namespace gander::launcher
