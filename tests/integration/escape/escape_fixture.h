// Shared by the escape suites (escape_test.cc, audit_log_test.cc, secrets_test.cc, ...): the
// planted world, the SandboxTest base and the flag of the degraded mode; the host helpers are in
// escape_host.h, the table of escape attempts in escape_attempts.h. Functions are `inline`, in a
// named namespace, so a test file that uses only some of them builds cleanly.
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "escape_host.h"

namespace gander::escape_suite {

constexpr const char* kGanderBuilt = GANDER_BIN;
constexpr const char* kProbeBuilt = GANDER_PROBE_BIN;

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

  // Nothing of the run named `name` is left in /tmp or /dev/shm (its private directories, its
  // file secrets).
  static void ExpectNoPrivateDirsLeft(const std::string& name, const std::string& context) {
    for (const char* parent : {"/tmp", "/dev/shm"}) {
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(parent, ec)) {
        EXPECT_FALSE(entry.path().filename().string().starts_with("gander-" + name + "-"))
            << entry.path() << " was left behind\n"
            << context;
      }
    }
  }

  // SIGTERM to gander while its extension runs (Goose's PDEATHSIG when Goose dies, a user's
  // kill): gander ends its sandbox and then itself, in order. Nothing of the sandbox is left the
  // moment gander is gone (no wait: gander waits for its init), and gander's private
  // directories (`--name` makes them this run's: /tmp/gander-NAME-*, /dev/shm/gander-NAME-*)
  // are removed. A gander killed on the spot by the signal leaves both behind.
  // `during_start_us` >= 0: the SIGTERM comes that long after gander was started, while it
  // builds the sandbox (before its supervisor loop takes the signal from a signalfd), rather
  // than once the extension runs; either way the signal ends the extension (128 + SIGTERM).
  void CheckSigtermTearsDown(const Argv& flags, int during_start_us = -1) {
    const std::string m = Marker();
    const std::string name = "sigterm-" + m.substr(0, m.find('.'));
    RunOptions o = Opts(world_->ws);
    o.pipe_stdin = true;
    Argv named = flags;
    named.insert(named.end(), {"--name", name});
    Argv argv = GanderArgv(named, {"/bin/sleep", m}, world_->ws);
    Child gander(argv, o);
    if (during_start_us >= 0) {
      usleep(static_cast<useconds_t>(during_start_us));
    } else {
      // The extension itself: gander's own command line holds the marker too.
      auto extension = [&] {
        std::vector<pid_t> pids = ProcessesWithMarker(m);
        std::erase(pids, gander.pid());
        return !pids.empty();
      };
      bool started = WaitUntil(extension, 15);
      if (!started) KillAll(ProcessesWithMarker(m));
      ASSERT_TRUE(started) << Quote(argv);
    }
    ASSERT_EQ(kill(gander.pid(), SIGTERM), 0);
    RunResult r = gander.Wait(15);
    std::string context = "command: " + Quote(argv) + "\n" + r.Describe();
    EXPECT_FALSE(r.timed_out) << context;
    EXPECT_EQ(r.status, 128 + SIGTERM) << "the extension ends by the SIGTERM\n" << context;
    EXPECT_TRUE(ProcessesWithMarker(m).empty()) << "gander exited before its sandbox\n" << context;
    ExpectNoPrivateDirsLeft(name, context);
    ExpectNoSurvivors(m, context);
  }

  // Traces `init` from this thread and holds it at the entry of its vfork (the extension's
  // fork): after its root, network and egress report, before the seccomp listener. False when it
  // was already past it (it exec'd gander-init or exited): then it is let go. Past it already
  // when caught (the test's thread was slower than the init's set-up), the init waits in
  // gander-init for as long as the extension runs: seen from its executable at the first stop,
  // and, as a bound on a hang, after 20 s without reaching either the fork or an exec.
  static bool HoldAtExtensionFork(pid_t init) {
    if (ptrace(PTRACE_SEIZE, init, 0, PTRACE_O_TRACESYSGOOD) != 0) return false;
    ptrace(PTRACE_INTERRUPT, init, 0, 0);
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    auto let_go = [init] {
      ptrace(PTRACE_DETACH, init, 0, 0);
      return false;
    };
    for (bool first = true;; first = false) {
      int status = 0;
      pid_t got;
      while ((got = waitpid(init, &status, __WALL | WNOHANG)) == 0) {
        if (Clock::now() > deadline) {
          ptrace(PTRACE_INTERRUPT, init, 0, 0);
          if (waitpid(init, &status, __WALL) != init || !WIFSTOPPED(status)) return false;
          return let_go();
        }
        usleep(100);
      }
      if (got != init || !WIFSTOPPED(status)) return false;
      if (first) {
        std::error_code ec;
        fs::path exe = fs::read_symlink("/proc/" + std::to_string(init) + "/exe", ec);
        if (exe.string().find("gander-init") != std::string::npos) return let_go();
      }
      int deliver = 0;
      if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
        __ptrace_syscall_info info{};
        ptrace(PTRACE_GET_SYSCALL_INFO, init, sizeof(info), &info);
        if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_vfork) return true;
        if (info.op == PTRACE_SYSCALL_INFO_ENTRY &&
            (info.entry.nr == SYS_execveat || info.entry.nr == SYS_execve)) {
          return let_go();
        }
      } else if (status >> 16 == 0) {
        deliver = WSTOPSIG(status);  // a signal for the init, not a stop of ours
      }
      ptrace(PTRACE_SYSCALL, init, 0, deliver);
    }
  }

  // After gander was told to end: true when its SIGKILL ended the `init` this thread holds
  // (HoldAtExtensionFork), which, as its tracer, reaps it first, so that gander sees it go.
  // Otherwise (15 s: a bound on a hang, no clock threshold) the test kills it.
  static bool ReapHeldInit(pid_t init) {
    int status = 0;
    if (WaitUntil([&] { return waitpid(init, &status, __WALL | WNOHANG) == init; }, 15)) {
      return true;
    }
    kill(init, SIGKILL);
    waitpid(init, &status, __WALL);
    return false;
  }

  // The sandbox's init hangs while it builds the sandbox (held here at the extension's fork, as
  // a hung FUSE or NFS path would hold a mount or the workspace's chdir) and gander is told to
  // end: it must not wait for the init but kill it, remove its directories and exit
  // 128 + SIGTERM. With `network`, the init has handed over its egress sockets first (gander
  // then waits for the listener); without, gander still waits for the start's first report.
  void CheckSigtermWhileInitHangs(const Argv& flags, bool network) {
    const fs::path policy = world_->root / "hang-policy.yaml";
    std::ofstream(policy) << "version: 1\nextends: default\n"
                          << (network ? "network:\n  allow:\n    - host: example.com\n"
                                        "      ports: [443]\n"
                                      : "");
    chmod(policy.c_str(), 0644);
    bool held = false;
    for (int attempt = 0; attempt < 10 && !held; ++attempt) {
      const std::string m = Marker();
      const std::string name = "hang-" + m.substr(0, m.find('.'));
      RunOptions o = Opts(world_->ws);
      o.pipe_stdin = true;
      Argv named = flags;
      named.insert(named.end(), {"--name", name, "--policy", policy.string()});
      Argv argv = GanderArgv(named, {"/bin/sleep", m}, world_->ws);
      Child gander(argv, o);
      const std::string pid = std::to_string(gander.pid());
      const std::string children = "/proc/" + pid + "/task/" + pid + "/children";
      pid_t init = -1;
      for (int spins = 0; init < 0 && spins < 3'000'000; ++spins) {
        std::istringstream kids(ReadFileOr(children, ""));
        kids >> init;
      }
      ASSERT_GT(init, 0) << "gander started no sandbox: " << Quote(argv);
      held = HoldAtExtensionFork(init);
      ASSERT_EQ(kill(gander.pid(), SIGTERM), 0);
      const bool ended = !held || ReapHeldInit(init);
      RunResult r = gander.Wait(15);
      std::string context = "command: " + Quote(argv) + "\n" + r.Describe();
      EXPECT_TRUE(ended) << "gander waited for its hung init\n" << context;
      EXPECT_FALSE(r.timed_out) << context;
      if (held) {
        EXPECT_EQ(r.status, 128 + SIGTERM) << context;
        EXPECT_NE(r.err.find("told to end"), std::string::npos) << context;
        EXPECT_EQ(r.out, "") << context;
        ExpectNoPrivateDirsLeft(name, context);
      }
      ExpectNoSurvivors(m, context);
    }
    EXPECT_TRUE(held) << "the init was never caught before the extension's fork";
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
    pid_t init = -1;
    auto small = [&] {
      std::istringstream kids(ReadFileOr(children, ""));
      for (pid_t pid; kids >> pid;) {
        status = ReadFileOr("/proc/" + std::to_string(pid) + "/status", "");
        size_t at = status.find("VmSize:");
        // Its name too: gander-init sets it first thing, once the execve is over. The small
        // image shows before that, while the kernel still drops the old one, with the image's
        // close-on-exec fd still open (a slow ASan gander made that window wide).
        if (at != std::string::npos && std::stol(status.substr(at + 7)) < 1024 &&
            ReadFileOr("/proc/" + std::to_string(pid) + "/comm", "") == "gander-init\n") {
          init = pid;
          return true;
        }
      }
      return false;
    };
    bool ok = WaitUntil(small, 15);
    // Its only descriptor: the sync socket its exit report goes out on. None of the
    // extension's stdio, whose EOF must not wait for the init's own exit.
    // (Listing a non-dumpable process's fds takes CAP_SYS_PTRACE: root's, as in CI.)
    std::string fds;
    std::error_code listed;
    for (fs::directory_iterator it("/proc/" + std::to_string(init) + "/fd", listed), end;
         ok && !listed && it != end; it.increment(listed)) {
      std::error_code ec;
      fds +=
          it->path().filename().string() + "->" + fs::read_symlink(it->path(), ec).string() + " ";
    }
    if (listed) fds.clear();
    gander.CloseStdin();
    RunResult r = gander.Wait(15);
    EXPECT_TRUE(ok) << "the init is still a copy of gander:\n" << status << Quote(argv);
    if (ok && geteuid() == 0) {
      EXPECT_TRUE(fds.starts_with("3->socket:[")) << fds << Quote(argv);
      EXPECT_EQ(fds.find(' '), fds.size() - 1) << "more than one fd: " << fds;
    }
    EXPECT_EQ(r.status, 143) << "stdin EOF, then SIGTERM to the sleep\n" << r.Describe();
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

}  // namespace gander::escape_suite
