// What the escape suites need of the host (escape_fixture.h builds on it): running commands
// with their stdio on pipes, running as another user, the kernel features a sandbox mode needs,
// and small file and process helpers. Functions are `inline`, in a named namespace, so a test
// file that uses only some of them builds cleanly.
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace gander::escape_suite {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Argv = std::vector<std::string>;

constexpr uid_t kNobodyId = 65534;

// ---------------------------------------------------------------------------------------------
// Running commands

struct RunResult {
  int status = -1;  // exit code, or 128+N when killed by signal N (gander's own convention)
  std::string out;
  std::string err;
  double seconds = 0;
  bool timed_out = false;

  std::string Describe() const {
    std::ostringstream s;
    s << "status " << status << (timed_out ? " (TIMED OUT)" : "") << " after " << seconds
      << " s\n--- stdout (" << out.size() << " bytes) ---\n"
      << out << "\n--- stderr ---\n"
      << err << "--- end ---";
    return s.str();
  }
};

struct RunOptions {
  std::string cwd = "/";
  std::vector<std::string> env;
  int leak_fd = -1;         // a descriptor passed to the child as fd 9, without O_CLOEXEC
  bool stderr_tty = false;  // stderr is a pty that is the child's controlling terminal
  bool pipe_stdin = false;  // keep a pipe on stdin (else /dev/null)
  double timeout_s = 90;
};

inline std::string Quote(const Argv& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_of(" '\"$\\&|;<>()*?") == std::string::npos;
    s += plain ? a : "'" + a + "'";
  }
  return s;
}

inline int StatusOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

// What `root` and every process under it were doing, for a run that timed out: each thread's
// state, kernel wait channel, syscall and kernel stack (the stack is readable as root only).
inline std::string ProcessTreeSnapshot(pid_t root) {
  auto read_small = [](const std::string& path) {
    std::ifstream in(path);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  };
  // Parents from /proc/PID/stat (the field after the parenthesised comm, which may hold spaces).
  std::vector<std::pair<pid_t, pid_t>> parents;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      pid_t pid = atoi(e->d_name);
      if (pid <= 0) continue;
      std::string stat = read_small("/proc/" + std::to_string(pid) + "/stat");
      size_t close = stat.rfind(')');
      if (close == std::string::npos || close + 4 >= stat.size()) continue;
      parents.emplace_back(pid, atoi(stat.c_str() + close + 4));
    }
    closedir(d);
  }
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i) {
    for (auto [pid, ppid] : parents)
      if (ppid == tree[i]) tree.push_back(pid);
  }
  std::ostringstream s;
  s << "--- test harness: the process tree at the timeout ---\n";
  for (pid_t pid : tree) {
    std::string base = "/proc/" + std::to_string(pid);
    std::string cmdline = read_small(base + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    s << pid << " " << cmdline.substr(0, 120) << "\n";
    std::error_code ec;
    for (const auto& t : fs::directory_iterator(base + "/task", ec)) {
      std::string stat = read_small(t.path() / "stat");
      size_t close = stat.rfind(')');
      char state = close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
      s << "  task " << t.path().filename().string() << " " << read_small(t.path() / "comm")
        << " state " << state << " wchan " << read_small(t.path() / "wchan") << " syscall "
        << read_small(t.path() / "syscall").substr(0, read_small(t.path() / "syscall").find(' '))
        << "\n";
      std::istringstream frames(read_small(t.path() / "stack"));
      int shown = 0;  // the innermost frames say where it waits
      for (std::string frame; shown < 3 && std::getline(frames, frame); ++shown)
        s << "    " << frame << "\n";
    }
  }
  return s.str();
}

// A spawned process with its stdio on pipes. Kills and reaps itself if still running when
// destroyed.
class Child {
 public:
  Child(const Argv& argv, const RunOptions& opts) : argv_(argv) {
    int in[2] = {-1, -1}, out[2], err[2];
    if (opts.pipe_stdin && pipe2(in, O_CLOEXEC) != 0) return;
    if (pipe2(out, O_CLOEXEC) != 0) return;
    if (opts.stderr_tty) {
      // err[0] is the master (our end), err[1] the slave (the child's stderr and ctty).
      if (openpty(&err[0], &err[1], nullptr, nullptr, nullptr) != 0) return;
      fcntl(err[0], F_SETFD, FD_CLOEXEC);
      fcntl(err[1], F_SETFD, FD_CLOEXEC);
    } else if (pipe2(err, O_CLOEXEC) != 0) {
      return;
    }
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv_) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : opts.env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    start_ = Clock::now();
    pid_ = fork();
    if (pid_ == 0) {
      int devnull = open("/dev/null", O_RDONLY);
      dup2(opts.pipe_stdin ? in[0] : devnull, 0);
      dup2(out[1], 1);
      if (opts.stderr_tty) {
        setsid();
        ioctl(err[1], TIOCSCTTY, 0);
      }
      dup2(err[1], 2);
      if (opts.leak_fd >= 0) {
        dup2(opts.leak_fd, 9);  // dup2 clears FD_CLOEXEC
        close_range(3, 8, 0);
        close_range(10, ~0U, 0);
      } else {
        close_range(3, ~0U, 0);
      }
      signal(SIGPIPE, SIG_DFL);
      if (chdir(opts.cwd.c_str()) != 0) {
        dprintf(2, "test harness: chdir %s: %s\n", opts.cwd.c_str(), strerror(errno));
        _exit(121);
      }
      execve(cargv[0], cargv.data(), cenv.data());
      dprintf(2, "test harness: execve %s: %s\n", cargv[0], strerror(errno));
      _exit(122);
    }
    if (opts.pipe_stdin) {
      close(in[0]);
      stdin_ = in[1];
    }
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }

  ~Child() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      int st;
      waitpid(pid_, &st, 0);
    }
    for (int fd : {stdin_, out_, err_}) {
      if (fd >= 0) close(fd);
    }
  }

  pid_t pid() const { return pid_; }
  const Argv& argv() const { return argv_; }
  // What the process wrote to stderr so far (as far as WaitForStderr or Wait have read).
  const std::string& err_so_far() const { return result_.err; }

  bool WriteStdin(const std::string& data) {
    return stdin_ >= 0 &&
           write(stdin_, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  }
  void CloseStdin() {
    if (stdin_ >= 0) close(stdin_);
    stdin_ = -1;
  }

  // Reads output until `needle` shows up on stderr or the timeout passes.
  bool WaitForStderr(const std::string& needle, double timeout_s) {
    auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (result_.err.find(needle) == std::string::npos) {
      if (Clock::now() > deadline) return false;
      if (!Pump(100) && out_ < 0 && err_ < 0) return result_.err.find(needle) != std::string::npos;
    }
    return true;
  }

  // Waits for the process to exit (killing it at the timeout), collecting its output. Output
  // is drained until both pipes close or a short grace after the exit (grandchildren may keep
  // them open).
  RunResult Wait(double timeout_s = 90) {
    if (pid_ <= 0) {
      result_.err =
          std::string("test harness: could not spawn ") + argv_[0] + ": " + strerror(errno) + "\n";
      return result_;
    }
    auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    std::optional<Clock::time_point> exited;
    std::string snapshot;  // what the processes were doing when the timeout struck
    while (true) {
      if (!reaped_) {
        int st = 0;
        pid_t r = waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
          reaped_ = true;
          result_.status = StatusOf(st);
          exited = Clock::now();
          exited_at_ = *exited;
          result_.seconds = std::chrono::duration<double>(*exited - start_).count();
        } else if (Clock::now() > deadline) {
          result_.timed_out = true;
          snapshot = ProcessTreeSnapshot(pid_);
          kill(pid_, SIGKILL);
          deadline = Clock::now() + std::chrono::seconds(5);
        }
      }
      if (out_ < 0 && err_ < 0 && reaped_) break;
      if (exited && Clock::now() - *exited > std::chrono::seconds(2)) break;
      Pump(20);
    }
    result_.err += snapshot;
    return result_;
  }

  // When waitpid saw the process exit (valid after Wait returned with status >= 0).
  Clock::time_point exited_at() const { return exited_at_; }

 private:
  // One poll round over stdout/stderr; returns false when nothing is open any more.
  bool Pump(int timeout_ms) {
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (out_ < 0 && err_ < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
      return false;
    }
    int n = poll(fds, 2, timeout_ms);
    if (n <= 0) return true;
    std::string* sinks[2] = {&result_.out, &result_.err};
    int* fdp[2] = {&out_, &err_};
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[8192];
      ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        sinks[i]->append(buf, static_cast<size_t>(r));
      } else {
        close(*fdp[i]);
        *fdp[i] = -1;
      }
    }
    return true;
  }

  Argv argv_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int stdin_ = -1, out_ = -1, err_ = -1;
  Clock::time_point start_, exited_at_;
  RunResult result_;
};

inline RunResult RunCommand(const Argv& argv, const RunOptions& opts) {
  Child child(argv, opts);
  return child.Wait(opts.timeout_s);
}

// ---------------------------------------------------------------------------------------------
// Users and kernel features

enum class Who { kCurrent, kNobody };

inline std::string WhoName(Who who) { return who == Who::kCurrent ? "current_user" : "uid65534"; }

// For gtest's parameter printing (test names in ctest -N and failure messages).
inline void PrintTo(Who who, std::ostream* os) { *os << WhoName(who); }

// The argv prefix that runs a command as `who`.
inline Argv AsUser(Who who) {
  if (who == Who::kCurrent) return {};
  return {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
}

// Runs fn in a forked child as `who`; true when it returns true there.
template <typename Fn>
bool InChildAs(Who who, Fn fn) {
  pid_t pid = fork();
  if (pid == 0) {
    if (who == Who::kNobody) {
      if (setgroups(0, nullptr) != 0 || setresgid(kNobodyId, kNobodyId, kNobodyId) != 0 ||
          setresuid(kNobodyId, kNobodyId, kNobodyId) != 0) {
        _exit(2);
      }
    }
    _exit(fn() ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

inline int LandlockAbi() {
  constexpr long kLandlockCreateRuleset = 444;
  constexpr unsigned kVersionFlag = 1;  // LANDLOCK_CREATE_RULESET_VERSION
  long abi = syscall(kLandlockCreateRuleset, nullptr, 0, kVersionFlag);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

inline bool SeccompAvailable() { return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0; }

inline bool CanCreateUserNamespace(Who who) {
  return InChildAs(who, [] { return unshare(CLONE_NEWUSER) == 0; });
}

// Why the full sandbox cannot be built for `who` here, or "" when it can.
inline std::string MissingForFullSandbox(Who who) {
  if (!SeccompAvailable()) return "the kernel has no seccomp (prctl(PR_GET_SECCOMP) failed)";
  if (LandlockAbi() == 0) return "Landlock is not available (landlock_create_ruleset failed)";
  if (!CanCreateUserNamespace(who)) {
    return "an unprivileged user namespace cannot be created as " + WhoName(who) +
           " (userns blocked: sysctl, AppArmor or container policy)";
  }
  return "";
}

inline std::string MissingForDegradedSandbox() {
  if (!SeccompAvailable()) return "the kernel has no seccomp";
  if (LandlockAbi() == 0) return "Landlock is not available (landlock_create_ruleset failed)";
  return "";
}

// The three ways gander makes a sandbox, for suites that run in each: what is missing for one
// ("" when nothing), the flags that select it, and a test name suffix.
enum class SandboxMode { kNamespaces, kNoNamespaces, kGvisor };

inline std::string MissingForMode(Who who, SandboxMode mode) {
  if (mode == SandboxMode::kNamespaces) return MissingForFullSandbox(who);
  if (mode == SandboxMode::kNoNamespaces) return MissingForDegradedSandbox();
  return system("command -v runsc >/dev/null 2>&1") == 0 ? "" : "runsc (gVisor) is not installed";
}

inline std::vector<std::string> FlagsForMode(SandboxMode mode) {
  if (mode == SandboxMode::kNoNamespaces) return {"--no-namespaces", "--require", "landlock"};
  if (mode == SandboxMode::kGvisor) return {"--backend", "gvisor"};
  return {};
}

using ModeParam = std::tuple<Who, SandboxMode>;

inline std::string ModeParamName(const ::testing::TestParamInfo<ModeParam>& info) {
  const char* name[] = {"namespaces", "no_namespaces", "gvisor"};
  return std::string(std::get<0>(info.param) == Who::kNobody ? "nobody" : "current") + "_" +
         name[static_cast<int>(std::get<1>(info.param))];
}

// Both users in the three modes, for INSTANTIATE_TEST_SUITE_P (with ModeParamName).
inline auto EveryUserAndMode() {
  return ::testing::Combine(::testing::Values(Who::kCurrent, Who::kNobody),
                            ::testing::Values(SandboxMode::kNamespaces, SandboxMode::kNoNamespaces,
                                              SandboxMode::kGvisor));
}

inline std::string UserName() {
  const passwd* pw = getpwuid(geteuid());
  return pw ? pw->pw_name : std::to_string(geteuid());
}

inline std::string RandomHex(int n) {
  static std::mt19937_64 rng(std::random_device{}() ^ static_cast<uint64_t>(getpid()));
  std::string s;
  for (int i = 0; i < n; ++i) s += "0123456789abcdef"[rng() % 16];
  return s;
}

inline void WriteFile(const fs::path& p, const std::string& content, mode_t mode) {
  std::ofstream(p) << content;
  chmod(p.c_str(), mode);
}

inline std::string ReadFileOr(const fs::path& p, const std::string& fallback) {
  std::ifstream f(p);
  if (!f) return fallback;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void ChownTree(const fs::path& root, uid_t uid, gid_t gid) {
  lchown(root.c_str(), uid, gid);
  for (const auto& e : fs::recursive_directory_iterator(root)) lchown(e.path().c_str(), uid, gid);
}

// pids whose /proc/PID/cmdline contains `marker`.
inline std::vector<pid_t> ProcessesWithMarker(const std::string& marker) {
  std::vector<pid_t> pids;
  DIR* d = opendir("/proc");
  if (!d) return pids;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string cmdline = ReadFileOr(fs::path("/proc") / e->d_name / "cmdline", "");
    if (cmdline.find(marker) != std::string::npos) pids.push_back(atoi(e->d_name));
  }
  closedir(d);
  return pids;
}

template <typename Pred>
bool WaitUntil(Pred pred, double timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

inline void KillAll(const std::vector<pid_t>& pids) {
  for (pid_t p : pids) kill(p, SIGKILL);
}

inline std::string WhoParamName(const ::testing::TestParamInfo<Who>& info) {
  return WhoName(info.param);
}

}  // namespace gander::escape_suite
