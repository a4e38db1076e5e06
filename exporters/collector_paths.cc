// Collector locations and detached start (see collector_paths.h).
#include "exporters/collector_paths.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "common/exec_signals.h"
#include "common/exec_strings.h"
#include "common/install_paths.h"

namespace gander::exporters {
namespace {

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

std::string GanderStateDir() {
  std::string state = Env("XDG_STATE_HOME");
  if (state.empty()) {
    std::string home = Env("HOME");
    state = home.empty() ? "/tmp" : home + "/.local/state";
  }
  return state + "/gander";
}

std::string CollectorRuntimeDir() {
  std::string runtime = Env("XDG_RUNTIME_DIR");
  return runtime.empty() ? GanderStateDir() : runtime + "/gander";
}

std::string DefaultCollectorSocket() { return CollectorRuntimeDir() + "/collector.sock"; }

std::string CollectorLockPath(const std::string& socket_path) { return socket_path + ".lock"; }

std::string MetricsAddressPath(const std::string& socket_path) { return socket_path + ".metrics"; }

std::string DefaultCollectorStatePath() { return GanderStateDir() + "/collector-state.json"; }

std::string DefaultAuditLogFor(const std::string& extension) {
  return GanderStateDir() + "/audit/" + extension + ".jsonl";
}

std::string CollectorBinary() {
  // Installed: PREFIX/libexec/gander/gander-collect (not on PATH); in the build tree: next to
  // gander.
  if (auto libexec = InstalledLibexecDir()) {
    std::string installed = *libexec + "/gander-collect";
    if (access(installed.c_str(), X_OK) == 0) return installed;
  }
  return SelfExeDir() + "/gander-collect";
}

std::vector<std::string> DefaultCollectorStartCommand() {
  return {CollectorBinary(), "--log-file", GanderStateDir() + "/collector.log"};
}

Status EnsurePrivateDir(const std::string& dir) {
  for (size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1)) {
    mkdir(dir.substr(0, slash).c_str(), 0700);  // parents: errors show up below
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("mkdir " + dir);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return ErrnoError("lstat " + dir);
  if (!S_ISDIR(st.st_mode)) return Error{ENOTDIR, dir + " is not a directory"};
  if (st.st_uid != geteuid())
    return Error{EPERM, dir + " is owned by uid " + std::to_string(st.st_uid) + ", not us"};
  if ((st.st_mode & 077) != 0 && chmod(dir.c_str(), 0700) != 0) {
    return ErrnoError("chmod 0700 " + dir);
  }
  return {};
}

Status SpawnDetached(const std::vector<std::string>& argv) {
  if (argv.empty()) return MakeError("spawn: empty command");
  // Everything the grandchild needs is prepared before fork: only async-signal-safe calls
  // happen in between.
  std::vector<std::string> env_strings;
  for (const char* name : {"HOME", "PATH", "LANG", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"}) {
    if (const char* value = getenv(name)) env_strings.push_back(std::string(name) + "=" + value);
  }
  const ExecStrings envp(std::move(env_strings)), args(argv);

  // A close-on-exec pipe tells whether the grandchild's execve worked: EOF when it did, its
  // errno when it did not, so a missing collector binary is a failure now rather than a
  // start_wait (1.5 s) spent waiting for a collector that never comes.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  pid_t child = fork();
  if (child < 0) {
    int err = errno;
    close(report[0]);
    close(report[1]);
    return Error{err, "fork"};
  }
  if (child == 0) {
    if (setsid() < 0 || fork() != 0) _exit(0);  // the grandchild is re-parented to init
    ResetSignalsForExec();
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    if (report[1] != 3 && dup3(report[1], 3, O_CLOEXEC) != 3) _exit(127);
    close_range(4, ~0U, 0);
    execve(args.front(), args.get(), envp.get());
    int err = errno;
    (void)!write(3, &err, sizeof(err));
    _exit(127);
  }
  close(report[1]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int err = 0;
  ssize_t n;
  while ((n = read(report[0], &err, sizeof(err))) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof(err))) return Error{err, "execve " + argv[0]};
  return {};
}

}  // namespace gander::exporters
