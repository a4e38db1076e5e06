#include "launcher/gvisor/runsc.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

extern char** environ;

namespace gander::launcher::gvisor {
namespace {

constexpr std::string_view kPrefix = "gander-gvisor-";

void RemoveTree(const std::string& dir) {
  nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, FTW*) { return remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return MakeError("cannot write " + path);
  return {};
}

// mkdir -p inside the root directory (for the parents of a symlink).
void MakeDirs(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    mkdir(path.substr(0, slash).c_str(), 0755);
  }
}

}  // namespace

std::vector<std::string> RunscRunArgv(const RunscOptions& options, const std::string& state_dir,
                                      const std::string& bundle_dir,
                                      const std::string& container_id,
                                      const std::string& debug_log) {
  std::vector<std::string> argv{options.runsc, "--rootless", "--network=none",
                                "--root=" + state_dir};
  if (!options.platform.empty()) argv.push_back("--platform=" + options.platform);
  if (!options.strace_syscalls.empty()) {
    std::string list;
    for (const auto& name : options.strace_syscalls) list += (list.empty() ? "" : ",") + name;
    argv.push_back("--strace");
    if (list != kStraceAll) argv.push_back("--strace-syscalls=" + list);
    argv.push_back("--debug-log=" + debug_log);
  }
  argv.insert(argv.end(), {"run", "--bundle=" + bundle_dir, container_id});
  return argv;
}

std::string RunDirBase() { return "/tmp"; }

void RemoveStaleRunDirs(const std::string& base) {
  DIR* dir = opendir(base.c_str());
  if (!dir) return;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (!name.starts_with(kPrefix)) continue;
    pid_t owner = static_cast<pid_t>(atoi(name.c_str() + kPrefix.size()));
    if (owner <= 0 || owner == getpid()) continue;
    struct stat st;
    std::string path = base + "/" + name;
    // Only our own, and only when their gander is gone.
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    if (kill(owner, 0) == 0 || errno != ESRCH) continue;
    RemoveTree(path);
  }
  closedir(dir);
}

Result<std::unique_ptr<GvisorRun>> StartGvisor(const BundleSpec& spec, const RunscOptions& options,
                                               int stdin_fd, int stdout_fd, int stderr_fd,
                                               const std::string& name) {
  const std::string base = RunDirBase();
  RemoveStaleRunDirs(base);
  std::unique_ptr<GvisorRun> run(new GvisorRun());
  run->options_ = options;
  std::string pattern = base + "/" + std::string(kPrefix) + std::to_string(getpid()) + "-XXXXXX";
  if (!mkdtemp(pattern.data())) return ErrnoError("mkdtemp " + pattern);
  run->dir_ = pattern;
  run->state_dir_ = run->dir_ + "/state";
  run->container_id_ = "gander-" + std::to_string(getpid()) + "-" + name.substr(0, 32);
  for (char& c : run->container_id_) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  const std::string bundle = run->dir_ + "/bundle";
  BundleSpec with_root = spec;
  with_root.root = bundle + "/rootfs";
  // runsc's gofer runs as the caller and must open a mount's target to mount over it: a file
  // the caller cannot read (/etc/shadow for a user) makes the whole start fail. Such a file
  // needs no mask: the gofer opens every file with the caller's permissions, so the extension
  // cannot read it either.
  std::erase_if(with_root.mounts, [](const MountOp& m) {
    return m.kind == MountOp::Kind::kMaskFile && access(m.target.c_str(), R_OK) != 0;
  });
  for (const std::string& dir : {run->state_dir_, bundle, with_root.root}) {
    if (mkdir(dir.c_str(), 0700) != 0) return ErrnoError("mkdir " + dir);
  }
  chmod(with_root.root.c_str(), 0755);
  for (const auto& [target, text] : RootSymlinks(spec.mounts)) {
    std::string at = with_root.root + target;
    MakeDirs(at);
    if (symlink(text.c_str(), at.c_str()) != 0) return ErrnoError("symlink " + at);
  }
  if (Status written = WriteFile(bundle + "/config.json", OciConfig(with_root)); !written) {
    return written.error();
  }
  std::string debug_log;
  if (!options.strace_syscalls.empty()) {
    // A pipe in the file system: runsc opens it as its debug log, gander reads the strace
    // lines from it as they are written (no file grows on disk).
    debug_log = run->dir_ + "/strace.fifo";
    if (mkfifo(debug_log.c_str(), 0600) != 0) return ErrnoError("mkfifo " + debug_log);
    int fd = open(debug_log.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return ErrnoError("open " + debug_log);
    run->strace_.Reset(fd);
  }
  std::vector<std::string> argv =
      RunscRunArgv(options, run->state_dir_, bundle, run->container_id_, debug_log);

  pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    // runsc dies with gander, and its sandbox and gofer with it (they have PDEATHSIG).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(125);
    setsid();
    dup2(stdin_fd, 0);
    dup2(stdout_fd, 1);
    dup2(stderr_fd, 2);
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    syscall(SYS_close_range, 3, ~0U, 0);
    std::vector<char*> args = CStrings(argv);
    execvp(args[0], args.data());
    _exit(errno == ENOENT ? 127 : 126);
  }
  run->pid_ = pid;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return ErrnoError("pidfd_open");
  run->pidfd_.Reset(pidfd);
  return run;
}

void GvisorRun::Terminate() {
  std::vector<std::string> argv{options_.runsc, "--root=" + state_dir_, "kill",
                                "--all",        container_id_,          "TERM"};
  std::vector<char*> args = CStrings(argv);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) {
    helpers_.push_back(pid);
  }
  posix_spawn_file_actions_destroy(&actions);
}

void GvisorRun::Reap() {
  for (pid_t helper : helpers_) waitpid(helper, nullptr, 0);
  helpers_.clear();
  if (pidfd_) {
    syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
    siginfo_t info{};
    waitid(static_cast<idtype_t>(P_PIDFD), pidfd_.get(), &info, WEXITED);
  }
}

GvisorRun::~GvisorRun() {
  Reap();
  strace_.Reset();
  if (!dir_.empty()) RemoveTree(dir_);
}

}  // namespace gander::launcher::gvisor
