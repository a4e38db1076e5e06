// Shared by the escape suite (escape_test.cc) and the audit-log suite (audit_log_test.cc):
// running commands, users and kernel features, the planted world, the SandboxTest base and
// the table of escape attempts. Functions are `inline`, in a named namespace, so a test file
// that uses only some of them builds cleanly.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
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

constexpr const char* kGanderBuilt = GANDER_BIN;
constexpr const char* kProbeBuilt = GANDER_PROBE_BIN;
constexpr uid_t kNobodyId = 65534;
constexpr int kForkbombChildren = 1500;  // above the default profile's cap of 1024
constexpr int kSigsysStatus = 128 + SIGSYS;

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
          kill(pid_, SIGKILL);
          deadline = Clock::now() + std::chrono::seconds(5);
        }
      }
      if (out_ < 0 && err_ < 0 && reaped_) break;
      if (exited && Clock::now() - *exited > std::chrono::seconds(2)) break;
      Pump(20);
    }
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

// ---------------------------------------------------------------------------------------------
// The planted world

// Everything a test needs: a temp tree readable by the run's user, the planted secrets, the
// host-side listeners and the victim process. Lives under /var/tmp, not /tmp: the sandbox has
// a private /tmp, so a write "outside" into /tmp would land in its tmpfs and prove nothing.
class World {
 public:
  explicit World(Who who) : who_(who) {}

  // Builds the world; returns "" or why it could not.
  std::string Build() {
    char tmpl[] = "/var/tmp/gander-escape-XXXXXX";
    if (!mkdtemp(tmpl)) return std::string("mkdtemp: ") + strerror(errno);
    root = tmpl;
    chmod(root.c_str(), 0755);
    // Binaries: copies in a 0755 directory of their own, so uid 65534 can run them even when
    // the build tree sits under a 0700 /root, and so no install-prefix heuristic on their
    // location can reach the planted files.
    tools = root / "tools" / "bin";
    fs::create_directories(tools);
    fs::permissions(root / "tools", fs::perms(0755));
    fs::permissions(tools, fs::perms(0755));
    gander = tools / "gander";
    probe = tools / "gander_probe";
    std::error_code ec;
    fs::copy_file(kGanderBuilt, gander, ec);
    if (ec) return "copy " + std::string(kGanderBuilt) + ": " + ec.message();
    fs::copy_file(kProbeBuilt, probe, ec);
    if (ec) return "copy " + std::string(kProbeBuilt) + ": " + ec.message();
    chmod(gander.c_str(), 0755);
    chmod(probe.c_str(), 0755);

    data = root / "data";  // everything the run's user owns
    home = data / "home";
    ws = data / "ws";
    outside = data / "outside";
    for (const auto& d : {data, home, home / ".ssh", home / ".aws", home / ".config" / "goose", ws,
                          ws / "mnt", outside}) {
      fs::create_directories(d);
    }
    chmod(home.c_str(), 0755);
    chmod((home / ".ssh").c_str(), 0700);
    secret_value = "sk-gander-planted-" + RandomHex(24);
    WriteFile(home / ".ssh" / "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n", 0600);
    WriteFile(home / ".aws" / "credentials", "[default]\naws_secret_access_key=planted\n", 0600);
    WriteFile(home / ".config" / "goose" / "secrets.yaml", "OPENAI_API_KEY: planted\n", 0600);
    WriteFile(home / "plain", "an ordinary file in $HOME\n", 0644);
    WriteFile(outside / "host-secret", "a host file outside the workspace\n", 0644);
    WriteFile(ws / "plain", "an ordinary workspace file\n", 0644);
    WriteFile(ws / "not-executable", "#!/bin/sh\necho hi\n", 0644);
    fs::create_symlink(home / ".ssh" / "id_rsa", ws / "key-link");
    fs::create_symlink(outside / "host-secret", ws / "outside-link");
    fs::create_symlink(".ssh/id_rsa", home / "key-link");  // for the workspace == $HOME case
    if (who_ == Who::kNobody) {
      ChownTree(data, kNobodyId, kNobodyId);
      lchown(tools.c_str(), kNobodyId, kNobodyId);  // the binaries stay root's, the dir is theirs
    }
    shm_name = "gander-escape-" + RandomHex(12);
    block_device = FindBlockDevice();

    if (std::string e = StartListeners(); !e.empty()) return e;
    if (std::string e = StartVictim(); !e.empty()) return e;
    leak_fd = open(outside.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return "";
  }

  ~World() {
    if (victim_ > 0) {
      kill(victim_, SIGKILL);
      waitpid(victim_, nullptr, 0);
    }
    for (int fd : {tcp_fd_, udp_fd_, unix_fd_, abstract_fd_, leak_fd}) {
      if (fd >= 0) close(fd);
    }
    if (!shm_name.empty()) unlink(("/dev/shm/" + shm_name).c_str());
    if (!root.empty() && getenv("GANDER_TEST_KEEP") == nullptr) {
      std::error_code ec;
      fs::remove_all(root, ec);
    }
  }

  std::vector<std::string> Env() const {
    return {"PATH=/usr/local/bin:/usr/bin:/bin",
            "HOME=" + home.string(),
            "LANG=C.UTF-8",
            "TZ=UTC",
            "USER=" + std::string(who_ == Who::kNobody ? "nobody" : UserName()),
            "OPENAI_API_KEY=" + secret_value};
  }

  // Placeholders the attempt table uses.
  std::string Expand(std::string s) const {
    const std::map<std::string, std::string> vars = {{"{HOME}", home.string()},
                                                     {"{WS}", ws.string()},
                                                     {"{OUT}", outside.string()},
                                                     {"{PORT}", std::to_string(tcp_port)},
                                                     {"{UDP}", std::to_string(udp_port)},
                                                     {"{SOCK}", unix_path},
                                                     {"{ABSTRACT}", abstract_name},
                                                     {"{VICTIM}", std::to_string(victim_)},
                                                     {"{SECRET}", secret_value},
                                                     {"{TOOLS}", tools.string()},
                                                     {"{SHMNAME}", shm_name},
                                                     {"{BLOCKDEV}", block_device}};
    for (const auto& [k, v] : vars) {
      for (size_t pos; (pos = s.find(k)) != std::string::npos;) s.replace(pos, k.size(), v);
    }
    return s;
  }

  // Did the host UDP listener receive the probe's datagram? (drains it)
  bool UdpReceived() {
    char buf[64];
    bool got = false;
    while (true) {
      ssize_t n = recv(udp_fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0) break;
      got = true;
    }
    return got;
  }

  bool VictimAlive() const { return victim_ > 0 && kill(victim_, 0) == 0; }

  Who who() const { return who_; }

  fs::path root, tools, gander, probe, data, home, ws, outside;
  std::string secret_value, unix_path, abstract_name, shm_name, block_device;
  int tcp_port = 0, udp_port = 0, leak_fd = -1;

 private:
  std::string StartListeners() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    tcp_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (bind(tcp_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(tcp_fd_, 128) != 0)
      return std::string("tcp listener: ") + strerror(errno);
    getsockname(tcp_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    tcp_port = ntohs(a.sin_port);

    a.sin_port = 0;
    udp_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (bind(udp_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      return std::string("udp listener: ") + strerror(errno);
    len = sizeof a;
    getsockname(udp_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    udp_port = ntohs(a.sin_port);

    unix_path = (outside / "host.sock").string();
    sockaddr_un u{};
    u.sun_family = AF_UNIX;
    strncpy(u.sun_path, unix_path.c_str(), sizeof u.sun_path - 1);
    unix_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (bind(unix_fd_, reinterpret_cast<sockaddr*>(&u), sizeof u) != 0 ||
        listen(unix_fd_, 128) != 0)
      return std::string("unix listener: ") + strerror(errno);
    chmod(unix_path.c_str(), 0777);

    abstract_name = "gander-escape-" + RandomHex(12);
    sockaddr_un ab{};
    ab.sun_family = AF_UNIX;
    memcpy(ab.sun_path + 1, abstract_name.data(), abstract_name.size());
    abstract_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t ablen =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + abstract_name.size());
    if (bind(abstract_fd_, reinterpret_cast<sockaddr*>(&ab), ablen) != 0 ||
        listen(abstract_fd_, 128) != 0)
      return std::string("abstract listener: ") + strerror(errno);
    return "";
  }

  // A host process of the run's user, in a user namespace of its own: the target of `kill`
  // (signal 0) and of `setns` into its user namespace.
  std::string StartVictim() {
    std::string our_userns = fs::read_symlink("/proc/self/ns/user").string();
    Argv argv = AsUser(who_);
    for (const char* a : {"/usr/bin/unshare", "--user", "--map-root-user", "/bin/sleep", "3601"})
      argv.push_back(a);
    victim_ = fork();
    if (victim_ == 0) {
      int devnull = open("/dev/null", O_RDWR);
      dup2(devnull, 0);
      dup2(devnull, 1);
      close_range(3, ~0U, 0);
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      char* env[] = {nullptr};
      execve(cargv[0], cargv.data(), env);
      _exit(127);
    }
    std::string ns_link = "/proc/" + std::to_string(victim_) + "/ns/user";
    bool ready = WaitUntil(
        [&] {
          std::error_code ec;
          auto ns = fs::read_symlink(ns_link, ec);
          std::string comm = ReadFileOr("/proc/" + std::to_string(victim_) + "/comm", "");
          return !ec && ns.string() != our_userns && comm == "sleep\n";
        },
        10);
    return ready ? "" : "the victim process (unshare --user sleep) did not start";
  }

  // A disk of this machine (not a loop or zram device), e.g. /dev/vda; "" when none.
  static std::string FindBlockDevice() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/sys/block", ec)) {
      std::string name = e.path().filename();
      if (name.rfind("loop", 0) == 0 || name.rfind("zram", 0) == 0 || name.rfind("ram", 0) == 0)
        continue;
      fs::path dev = fs::path("/dev") / name;
      struct stat st {};
      if (stat(dev.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) return dev.string();
    }
    return "";
  }

  Who who_;
  pid_t victim_ = -1;
  int tcp_fd_ = -1, udp_fd_ = -1, unix_fd_ = -1, abstract_fd_ = -1;
};

// ---------------------------------------------------------------------------------------------
// Fixtures

// Common base: builds the world for the user of the parameter and runs gander and the probe.
class SandboxTest {
 protected:
  // Returns "" or the reason to skip.
  std::string Prepare(Who who) {
    who_ = who;
    if (who == Who::kNobody && geteuid() != 0) {
      return "the uid 65534 run needs root to switch users (running as uid " +
             std::to_string(geteuid()) + ")";
    }
    if (access(kGanderBuilt, X_OK) != 0) return std::string("gander is not built: ") + kGanderBuilt;
    world_ = std::make_unique<World>(who);
    if (std::string e = world_->Build(); !e.empty()) {
      ADD_FAILURE() << "fixture: " << e;
      return "fixture failed: " + e;
    }
    return "";
  }

  // Prepare, then what `mode` needs: "" or the reason to skip.
  std::string PrepareIn(Who who, SandboxMode mode) {
    if (std::string why = Prepare(who); !why.empty()) return why;
    return MissingForMode(who, mode);
  }

  World& w() { return *world_; }

  RunOptions Opts(const fs::path& cwd) const {
    RunOptions o;
    o.cwd = cwd.string();
    o.env = world_->Env();
    return o;
  }

  // `gander run [flags] --workspace WS -- COMMAND...` as the run's user.
  Argv GanderArgv(const Argv& flags, const Argv& command, const fs::path& workspace) const {
    Argv argv = AsUser(who_);
    argv.push_back(world_->gander.string());
    argv.push_back("run");
    // No metrics collector: these tests read the audit log gander writes itself, and a
    // collector started here would outlive the test (tests/integration/collector covers it).
    if (std::find(flags.begin(), flags.end(), "--collector") == flags.end()) {
      argv.push_back("--collector");
      argv.push_back("off");
    }
    for (const auto& f : flags) argv.push_back(f);
    argv.push_back("--workspace");
    argv.push_back(workspace.string());
    argv.push_back("--");
    for (const auto& c : command) argv.push_back(c);
    return argv;
  }

  Argv ProbeCommand(const Argv& attempt) const {
    Argv argv = {world_->probe.string()};
    for (const auto& a : attempt) argv.push_back(world_->Expand(a));
    return argv;
  }

  // `pipe_stdin`: stdin stays open until the run ends (else /dev/null: an EOF at once, which
  // gander answers with SIGTERM 1 s after the extension started).
  RunResult Gander(const Argv& flags, const Argv& command, const fs::path& workspace,
                   int leak_fd = -1, bool stderr_tty = false, bool pipe_stdin = false) {
    RunOptions o = Opts(workspace);
    o.leak_fd = leak_fd;
    o.stderr_tty = stderr_tty;
    o.pipe_stdin = pipe_stdin;
    Argv argv = GanderArgv(flags, command, workspace);
    last_command_ = Quote(argv);
    return RunCommand(argv, o);
  }

  // The probe without gander, as the same user, optionally behind a wrapper.
  RunResult Direct(const Argv& wrapper, const Argv& attempt, int leak_fd = -1,
                   bool stderr_tty = false) {
    RunOptions o = Opts(world_->ws);
    o.leak_fd = leak_fd;
    o.stderr_tty = stderr_tty;
    Argv argv = AsUser(who_);
    for (const auto& a : wrapper) argv.push_back(a);
    for (const auto& a : ProbeCommand(attempt)) argv.push_back(a);
    last_command_ = Quote(argv);
    return RunCommand(argv, o);
  }

  std::string Context(const RunResult& r) const {
    return "command: " + last_command_ + "\n" + r.Describe();
  }

  // A unique number usable as a `sleep` argument and findable in /proc/*/cmdline.
  static std::string Marker() {
    static std::mt19937 rng(std::random_device{}());
    return std::to_string(3000000 + rng() % 1000000) + "." +
           std::to_string(100000 + rng() % 900000);
  }

  // Fails (and cleans up, by pid) when a process carrying the marker is still alive after a
  // bounded wait.
  void ExpectNoSurvivors(const std::string& marker, const std::string& context) {
    bool gone = WaitUntil([&] { return ProcessesWithMarker(marker).empty(); }, 5);
    std::vector<pid_t> left = ProcessesWithMarker(marker);
    EXPECT_TRUE(gone) << left.size() << " sandbox process(es) survived (marker " << marker << ")\n"
                      << context;
    KillAll(left);
  }

  // Starts `sh -c 'sleep M & sleep M & sleep M; wait'` under gander, SIGKILLs gander once all
  // are running, and expects none of them to survive.
  void CheckSandboxDiesWithGander(const Argv& flags) {
    std::string m = Marker();
    RunOptions o = Opts(world_->ws);
    o.pipe_stdin = true;
    Argv argv = GanderArgv(
        flags, {"/bin/sh", "-c", "sleep " + m + " & sleep " + m + " & sleep " + m + "; wait"},
        world_->ws);
    Child gander(argv, o);
    bool started = WaitUntil([&] { return ProcessesWithMarker(m).size() >= 4; }, 15);
    if (!started) KillAll(ProcessesWithMarker(m));
    ASSERT_TRUE(started) << "the sandboxed sleeps did not start: " << Quote(argv);
    ASSERT_EQ(kill(gander.pid(), SIGKILL), 0);
    RunResult r = gander.Wait(10);
    ExpectNoSurvivors(m, "command: " + Quote(argv) + "\n" + r.Describe());
  }

  // Starts a SIGTERM-ignoring extension, closes stdin, and expects gander to SIGKILL it and be
  // gone (waited for; the 15 s bound only ends a hang).
  void CheckStdinEofEscalates(const Argv& flags) {
    std::string m = Marker();
    RunOptions o = Opts(world_->ws);
    o.pipe_stdin = true;
    Argv argv = GanderArgv(flags, {world_->probe.string(), "ignore-term", m}, world_->ws);
    Child gander(argv, o);
    ASSERT_TRUE(gander.WaitForStderr("probe: ignoring SIGTERM", 15)) << Quote(argv);
    gander.CloseStdin();
    RunResult r = gander.Wait(15);
    std::string context = "command: " + Quote(argv) + "\n" + r.Describe();
    EXPECT_FALSE(r.timed_out) << "gander did not end after stdin EOF\n" << context;
    EXPECT_EQ(r.status, 128 + SIGKILL) << "an extension ignoring SIGTERM must end by SIGKILL\n"
                                       << context;
    EXPECT_EQ(r.out, "") << context;
    ExpectNoSurvivors(m, context);
  }

  // The sandbox init (gander's child), once the extension runs, must hold no copy of gander (its
  // ~10 MB image, heap, environment, the secrets' values) but be gander-init's few KiB: its
  // VmSize, read from the test (the init's /proc is outside a --no-namespaces extension's view),
  // under 1 MiB. Waits for the init's execve, an event (the 15 s only bound a hang).
  void CheckInitHoldsNoCopyOfGander(const Argv& flags) {
    std::string m = Marker();
    RunOptions o = Opts(world_->ws);
    o.pipe_stdin = true;
    Argv argv = GanderArgv(flags, {"/bin/sleep", m}, world_->ws);
    Child gander(argv, o);
    ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithMarker(m).empty(); }, 15)) << Quote(argv);
    const std::string children = "/proc/" + std::to_string(gander.pid()) + "/task/" +
                                 std::to_string(gander.pid()) + "/children";
    std::string status;
    auto small = [&] {
      std::istringstream kids(ReadFileOr(children, ""));
      for (pid_t pid; kids >> pid;) {
        status = ReadFileOr("/proc/" + std::to_string(pid) + "/status", "");
        size_t at = status.find("VmSize:");
        if (at != std::string::npos && std::stol(status.substr(at + 7)) < 1024) return true;
      }
      return false;
    };
    bool ok = WaitUntil(small, 15);
    gander.CloseStdin();
    RunResult r = gander.Wait(15);
    EXPECT_TRUE(ok) << "the init is still a copy of gander:\n" << status << Quote(argv);
    ExpectNoSurvivors(m, r.Describe());
  }

  // The extension leaves a grandchild in a session of its own (setsid after a double fork, so
  // it is reparented to the sandbox's reaper and outside the extension's process group), waits
  // until that grandchild runs, then either exits (kill_gander false: a normal end) or sleeps
  // on until the test SIGKILLs gander. Nothing with the marker may outlive the run. Repeated:
  // the race this covers (reparenting against the reaper's last look) lost about half the time.
  void CheckEscapedGrandchildDies(const Argv& flags, bool kill_gander, int rounds) {
    for (int round = 0; round < rounds; ++round) {
      std::string m = Marker();
      std::string flag = "started-" + m;
      std::string script = "(setsid sh -c 'echo up > " + flag + "; exec sleep " + m + "' &); " +
                           "(setsid sh -c '(sleep " + m + " &)' &); " + "while [ ! -s " + flag +
                           " ]; do sleep 0.01; done; " +
                           (kill_gander ? "exec sleep " + m : "exit 0");
      RunOptions o = Opts(world_->ws);
      o.pipe_stdin = true;
      Argv argv = GanderArgv(flags, {"/bin/sh", "-c", script}, world_->ws);
      Child gander(argv, o);
      std::string context;
      if (kill_gander) {
        // gander, its init, the extension's sleep and the two grandchildren's.
        bool started = WaitUntil(
            [&] { return fs::exists(world_->ws / flag) && ProcessesWithMarker(m).size() >= 5; },
            30);
        if (!started) KillAll(ProcessesWithMarker(m));
        ASSERT_TRUE(started) << "the sandboxed sleeps did not start: " << Quote(argv);
        ASSERT_EQ(kill(gander.pid(), SIGKILL), 0);
        RunResult r = gander.Wait(30);
        context = "command: " + Quote(argv) + "\n" + r.Describe();
      } else {
        RunResult r = gander.Wait(60);
        context = "command: " + Quote(argv) + "\n" + r.Describe();
        EXPECT_EQ(r.status, 0) << context;
        EXPECT_TRUE(fs::exists(world_->ws / flag)) << "the grandchild never ran\n" << context;
      }
      // Poll for the processes to vanish, with a generous cap: on a loaded machine the reaper's
      // kill loop may take a moment; a survivor never vanishes.
      bool gone = WaitUntil([&] { return ProcessesWithMarker(m).empty(); }, 30);
      std::vector<pid_t> left = ProcessesWithMarker(m);
      std::string stats;
      for (pid_t p : left) stats += ReadFileOr("/proc/" + std::to_string(p) + "/stat", "?\n");
      KillAll(left);
      ASSERT_TRUE(gone) << left.size() << " process(es) outlived the run in round " << round
                        << ":\n"
                        << stats << " (marker " << m << ")\n"
                        << context;
    }
  }

  Who who_ = Who::kCurrent;
  std::unique_ptr<World> world_;
  std::string last_command_;
};

inline const Argv kFullFlags = {"--require", "full"};

// ---------------------------------------------------------------------------------------------
// The attempts

enum class Control {
  kDirect,          // the unsandboxed attempt succeeds for any user
  kRootElseUserns,  // as root directly; as 65534 inside `unshare -Urm` (needs a capability)
  kRootOnly,        // only root can succeed unsandboxed (capability in the initial userns)
  kNone,            // no unsandboxed equivalent (the target exists only inside the sandbox)
};

// In degraded mode (no namespaces: Landlock + seccomp only), an attempt is
//   kRequired: on the brief's list, or denied by what the contract gives seccomp / layer 1
//   kDesign:   denied by DESIGN.md's promises (Landlock scoping, the connect broker)
enum class Degraded { kNotApplicable, kRequired, kDesign };

struct Attempt {
  const char* name;
  Argv args;  // probe arguments; {HOME}, {WS}, {OUT}, {TOOLS}, ... are expanded
  Control control = Control::kDirect;
  const char* why_no_control = "";  // for kRootOnly / kNone
  Degraded degraded = Degraded::kNotApplicable;
  bool expect_sigsys = false;    // must be killed by SIGSYS rather than fail with an errno
  const char* host_absent = "";  // a host path that must not exist after the sandboxed run
  bool judged_on_host = false;   // judged by host_absent only: the target may be private inside
                                 // the sandbox (a write there is not an escape)
  bool udp = false;              // judged by the host UDP listener, not the probe's status
  bool leak_fd = false;          // pass an inherited fd (9) to gander / the direct run
  bool stderr_tty = false;       // stderr is a pty, the controlling terminal of gander / the
                                 // direct run (the terminal an extension could inject into)
  bool degraded_only = false;    // an escape only where there are no namespaces
  bool hold_stdin = false;       // runs longer than the second gander waits after stdin's EOF
};

// clang-format off
inline const std::vector<Attempt>& Attempts() {
  constexpr auto kReq = Degraded::kRequired;
  constexpr auto kDesign = Degraded::kDesign;
  static const std::vector<Attempt> kAttempts = {
      // Files the default profile hides.
      {.name = "read_ssh_key", .args = {"read", "{HOME}/.ssh/id_rsa"}, .degraded = kReq},
      {.name = "list_ssh_dir", .args = {"list", "{HOME}/.ssh"}, .degraded = kReq},
      {.name = "read_aws_credentials", .args = {"read", "{HOME}/.aws/credentials"},
       .degraded = kReq},
      {.name = "read_goose_secrets", .args = {"read", "{HOME}/.config/goose/secrets.yaml"},
       .degraded = kReq},
      {.name = "read_key_via_workspace_symlink", .args = {"read", "{WS}/key-link"},
       .degraded = kReq},
      {.name = "read_outside_via_workspace_symlink", .args = {"read", "{WS}/outside-link"},
       .degraded = kReq},
      {.name = "read_outside_workspace", .args = {"read", "{OUT}/host-secret"}, .degraded = kReq},
      // Inside, pid 1 is the sandbox's init: its root must not be the host's root.
      {.name = "read_key_via_proc1_root", .args = {"read", "/proc/1/root{HOME}/.ssh/id_rsa"},
       .control = Control::kNone,
       .why_no_control = "/proc/1 means the sandbox's init only inside the sandbox"},
      {.name = "read_real_root_home", .args = {"read", "/root/.profile"},
       .control = Control::kRootOnly, .why_no_control = "/root is mode 0700", .degraded = kReq},
      {.name = "read_raw_block_device", .args = {"read", "{BLOCKDEV}"}, .control = Control::kNone,
       .why_no_control = "opening a disk needs root, and the host may refuse even root "
                         "(device cgroup, VM); inside, /dev must simply have no disk",
       .degraded = kReq},
      {.name = "write_outside_workspace", .args = {"write", "{OUT}/escaped"}, .degraded = kReq,
       .host_absent = "{OUT}/escaped"},
      {.name = "write_ssh_authorized_keys", .args = {"write", "{HOME}/.ssh/authorized_keys"},
       .degraded = kReq, .host_absent = "{HOME}/.ssh/authorized_keys"},
      // The command's own install prefix is readable, never writable.
      {.name = "write_into_command_prefix", .args = {"write", "{TOOLS}/planted-by-probe"},
       .degraded = kReq, .host_absent = "{TOOLS}/planted-by-probe"},
      // A host tmpfs shared by every process: persistence and a channel between sandboxes.
      {.name = "write_dev_shm", .args = {"write", "/dev/shm/{SHMNAME}"}, .degraded = kReq,
       .host_absent = "/dev/shm/{SHMNAME}", .judged_on_host = true},
      {.name = "inherited_fd", .args = {"fds"}, .degraded = kReq, .leak_fd = true},
      // Secrets in the environment (its own, and any /proc/PID/environ it can read).
      {.name = "env_openai_api_key", .args = {"env", "OPENAI_API_KEY", "{SECRET}"},
       .degraded = kReq},
      // Network and IPC.
      {.name = "tcp_host_loopback", .args = {"tcp", "127.0.0.1", "{PORT}"}, .degraded = kDesign},
      {.name = "udp_host_loopback", .args = {"udp", "127.0.0.1", "{UDP}"}, .degraded = kDesign,
       .udp = true},
      {.name = "unix_host_socket", .args = {"unix", "{SOCK}"}},
      // Egress: UDP past the DNS stub, a DNS query carrying data, raw and netlink sockets.
      {.name = "udp_remote", .args = {"udp", "192.0.2.1", "53"}, .control = Control::kNone,
       .why_no_control = "192.0.2.1 (TEST-NET-1) is unroutable: a sent datagram is the escape"},
      {.name = "dns_exfil_made_up_name", .args = {"dns-exfil"}, .control = Control::kNone,
       .why_no_control = "the host's resolver may be unreachable from this machine"},
      {.name = "packet_socket", .args = {"packet"}, .control = Control::kRootOnly,
       .why_no_control = "AF_PACKET needs CAP_NET_RAW"},
      // The floor compares socket()'s family as 32 bits, as the kernel reads it.
      {.name = "vsock_family_high_bits", .args = {"vsock-high-bits"}, .degraded = kReq},
      {.name = "unix_family_high_bits", .args = {"unix-high-bits", "{SOCK}"}, .degraded = kReq},
      // An MPTCP socket: with namespaces it only reaches the empty netns (the attempt is made
      // without them only).
      {.name = "mptcp_protocol_high_bits", .args = {"mptcp-high-bits"}, .degraded = kReq,
       .degraded_only = true},
      // The family flip between the broker's copy and the kernel's read, at a host listener.
      {.name = "connect_family_flip_race", .args = {"family-race", "127.0.0.1", "{PORT}", "1000"},
       .degraded = kReq, .hold_stdin = true},
      // Inbound listeners on the host's network (with namespaces they are in the sandbox's
      // own netns: made there, not an escape).
      {.name = "tcp_listen_autobind_host", .args = {"listen-autobind"}, .degraded = kReq,
       .degraded_only = true},
      {.name = "tcp_bind_any_host", .args = {"bind-any"}, .degraded = kReq,
       .degraded_only = true},
      // Code no grant names, run from memory.
      {.name = "memfd_execveat", .args = {"memfd-exec"}, .degraded = kReq},
      {.name = "netlink_sees_host_interfaces", .args = {"netlink"}, .control = Control::kNone,
       .why_no_control = "the host may have no interface but lo"},
      {.name = "abstract_host_socket", .args = {"abstract", "{ABSTRACT}"}, .degraded = kDesign},
      // Other processes.
      {.name = "signal_host_process", .args = {"kill", "{VICTIM}"}, .degraded = kDesign},
      {.name = "setns_host_userns", .args = {"setns", "/proc/{VICTIM}/ns/user"}},
      {.name = "ptrace", .args = {"ptrace"}, .degraded = kReq},
      {.name = "process_vm", .args = {"process_vm"}, .degraded = kReq},
      {.name = "forkbomb", .args = {"forkbomb", std::to_string(kForkbombChildren)}},
      // Syscalls the default filter denies, and what dropped capabilities stop.
      {.name = "nested_userns", .args = {"userns"}, .degraded = kReq},
      {.name = "mount", .args = {"mount", "{WS}/mnt"}, .control = Control::kRootElseUserns,
       .degraded = kReq},
      {.name = "umount_home", .args = {"umount", "{HOME}"}, .control = Control::kNone,
       .why_no_control = "$HOME is a mount point only inside the sandbox"},
      {.name = "chroot", .args = {"chroot", "{WS}"}, .control = Control::kRootElseUserns,
       .degraded = kReq},
      {.name = "bpf", .args = {"bpf"}, .control = Control::kRootOnly,
       .why_no_control = "kernel.unprivileged_bpf_disabled stops unprivileged users, even in a "
                         "user namespace",
       .degraded = kReq},
      {.name = "io_uring", .args = {"io_uring"}, .degraded = kReq},
      {.name = "keyctl", .args = {"keyctl"}, .degraded = kReq},
      {.name = "perf_event_open", .args = {"perf"}, .degraded = kReq},
      {.name = "open_by_handle_at", .args = {"open_by_handle", "{WS}/plain"},
       .control = Control::kRootOnly,
       .why_no_control = "open_by_handle_at needs CAP_DAC_READ_SEARCH in the initial user "
                         "namespace",
       .degraded = kReq},
      {.name = "tiocsti", .args = {"tiocsti"}, .degraded = kReq, .stderr_tty = true},
      {.name = "x32_abi", .args = {"x32"}, .degraded = kReq, .expect_sigsys = true},
      {.name = "int80_i386_abi", .args = {"int80"}, .degraded = kReq, .expect_sigsys = true},
  };
  return kAttempts;
}
// clang-format on

inline const Attempt& FindAttempt(const std::string& name) {
  for (const auto& a : Attempts()) {
    if (name == a.name) return a;
  }
  static const Attempt kMissing{.name = "missing", .args = {}, .control = Control::kNone};
  ADD_FAILURE() << "no attempt named " << name;
  return kMissing;
}

inline std::vector<std::string> AttemptNames(bool degraded_only) {
  std::vector<std::string> names;
  for (const auto& a : Attempts()) {
    if (!degraded_only && a.degraded_only) continue;
    if (!degraded_only || a.degraded != Degraded::kNotApplicable) names.push_back(a.name);
  }
  return names;
}

using AttemptParam = std::tuple<Who, std::string>;

inline std::string AttemptParamName(const ::testing::TestParamInfo<AttemptParam>& info) {
  return WhoName(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
}

inline std::string WhoParamName(const ::testing::TestParamInfo<Who>& info) {
  return WhoName(info.param);
}

// The flag that runs without namespaces. The brief calls it --no-namespaces and allows another
// name; the help text decides.
inline std::string DegradedFlag(const fs::path& gander) {
  static std::string cached = [&] {
    RunResult help = RunCommand({gander.string(), "run", "--help"}, RunOptions{});
    std::string text = help.out + help.err;
    for (const char* f : {"--no-namespaces", "--no-namespace", "--no-userns", "--degraded",
                          "--no-ns", "--without-namespaces"}) {
      std::string flag = f;
      size_t pos = text.find(flag);
      while (pos != std::string::npos) {
        char next = pos + flag.size() < text.size() ? text[pos + flag.size()] : ' ';
        if (!(isalnum(static_cast<unsigned char>(next)) || next == '-')) return flag;
        pos = text.find(flag, pos + 1);
      }
    }
    return std::string();
  }();
  return cached;
}

// Checks the outcome of one attempt made inside the sandbox.
inline void ExpectAttemptFailed(const Attempt& a, World& world, const RunResult& r,
                                const std::string& context) {
  if (getenv("GANDER_TEST_VERBOSE")) std::cout << context << "\n";
  EXPECT_FALSE(r.timed_out) << context;
  EXPECT_EQ(r.out, "") << "gander or the sandbox wrote to stdout\n" << context;
  if (a.udp) {
    EXPECT_FALSE(world.UdpReceived()) << "the host UDP listener received the probe's datagram\n"
                                      << context;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << context;
  } else if (a.judged_on_host) {
    EXPECT_TRUE(r.status == 0 || r.status == 1) << context;
  } else if (a.expect_sigsys) {
    EXPECT_EQ(r.status, kSigsysStatus) << "a foreign-ABI syscall must kill the process with "
                                          "SIGSYS (exit 159)\n"
                                       << context;
  } else {
    EXPECT_EQ(r.status, 1) << "the attempt must run and fail (probe exit 1); 0 means it "
                              "SUCCEEDED, other values mean the probe did not run as planned\n"
                           << context;
    EXPECT_NE(r.err.find("probe: "), std::string::npos) << "the probe did not run\n" << context;
  }
  if (*a.host_absent) {
    fs::path p = world.Expand(a.host_absent);
    EXPECT_FALSE(fs::exists(fs::symlink_status(p))) << p << " appeared on the host\n" << context;
  }
}

// The same attempt without gander must succeed, or the sandboxed failure proves nothing.
inline void CheckControl(const Attempt& a, Who who,
                         std::function<RunResult(const Argv&, const Argv&, int, bool)> direct,
                         World& world) {
  Argv wrapper;
  switch (a.control) {
    case Control::kNone:
      std::cout << "[ note ] no unsandboxed control for " << a.name << ": " << a.why_no_control
                << "\n";
      return;
    case Control::kRootOnly:
      if (who != Who::kCurrent || geteuid() != 0) {
        std::cout << "[ note ] no unsandboxed control for " << a.name << " as " << WhoName(who)
                  << ": " << a.why_no_control << "\n";
        return;
      }
      break;
    case Control::kRootElseUserns:
      if (geteuid() != 0 || who == Who::kNobody) {
        wrapper = {"/usr/bin/unshare", "--user", "--map-root-user", "--mount", "--"};
        std::cout << "[ note ] control for " << a.name << " as " << WhoName(who)
                  << " runs inside `unshare -Urm` (needs a capability)\n";
      }
      break;
    case Control::kDirect:
      break;
  }
  RunResult r = direct(wrapper, a.args, a.leak_fd ? world.leak_fd : -1, a.stderr_tty);
  std::string context = "unsandboxed control: " + r.Describe();
  if (a.udp) {
    bool got = world.UdpReceived();
    if (!got)
      GTEST_SKIP() << "inconclusive: the unsandboxed UDP datagram did not arrive\n" << context;
    return;
  }
  if (std::string(a.name) == "int80_i386_abi" && r.status == 128 + SIGSEGV) {
    GTEST_SKIP() << "the kernel has no IA32 emulation (int $0x80 faults unsandboxed)\n" << context;
  }
  if (r.status != 0) {
    GTEST_SKIP() << "inconclusive: the attempt also fails WITHOUT gander for " << WhoName(who)
                 << " (host configuration?), so the sandboxed failure proves nothing\n"
                 << context;
  }
}

// Attempts whose target this machine may not have.
inline std::string MissingTarget(const Attempt& a, const World& w) {
  if (a.name == std::string("read_raw_block_device") && w.block_device.empty())
    return "no disk block device found under /sys/block";
  if (a.name == std::string("read_real_root_home") && access("/root/.profile", F_OK) != 0 &&
      errno == ENOENT)
    return "/root/.profile does not exist";
  return "";
}

}  // namespace gander::escape_suite
