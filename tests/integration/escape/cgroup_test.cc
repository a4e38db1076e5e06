// The run's cgroup (issue 16, items 3 and 4; sandbox/cgroup_limit.h):
//  - limits.memory binds what RLIMIT_DATA does not see: MAP_SHARED anonymous memory, a memfd
//    and a file in a private tmpfs, each past the limit, are stopped (OOM-killed or ENOMEM),
//    with namespaces, without, and under gVisor (runsc's cgroup from linux.resources);
//  - as uid 65534 no cgroup can be had here (no delegation): gander says so on stderr at
//    start, and with --require refuses to start;
//  - without a pid namespace the cgroup is killed at the end: a double-forked setsid
//    grandchild that ignores SIGTERM and SIGHUP is gone after the extension's normal end and
//    after gander is SIGKILLed, and no cgroup directory is left (the next start sweeps it);
//    one whose init was SIGKILLed with gander is killed by the next start's sweep.
// Waiting is on events: FIFOs for the hand-shakes, pidfds for deaths (with a cap that only
// guards against a hang).
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "escape_fixture.h"

namespace {

using namespace gander::escape_suite;  // NOLINT(google-build-using-namespace)

enum class Mode { kNamespaces, kNoNamespaces, kGvisor };
using CgroupParam = std::tuple<Who, Mode>;

std::string ParamName(const ::testing::TestParamInfo<CgroupParam>& info) {
  Mode m = std::get<1>(info.param);
  return WhoName(std::get<0>(info.param)) + (m == Mode::kGvisor         ? "_gvisor"
                                             : m == Mode::kNoNamespaces ? "_no_namespaces"
                                                                        : "_namespaces");
}

// The cgroup directories of a gander run (gander-run-PID-*), wherever sandbox/cgroup_limit.cc
// makes them for a process in our cgroups.
std::vector<fs::path> RunCgroupDirs(pid_t gander) {
  std::vector<fs::path> parents = {"/sys/fs/cgroup/gander", "/sys/fs/cgroup/unified/gander"};
  std::istringstream lines(ReadFileOr("/proc/self/cgroup", ""));
  for (std::string line; std::getline(lines, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    std::string controllers = line.substr(a + 1, b - a - 1);
    for (const char* c : {"memory", "pids", "freezer"}) {
      if (controllers == c) parents.push_back(fs::path("/sys/fs/cgroup") / c / line.substr(b + 2));
    }
  }
  std::vector<fs::path> out;
  const std::string prefix = "gander-run-" + std::to_string(gander) + "-";
  for (const auto& parent : parents) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(parent, ec)) {
      if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path());
    }
  }
  return out;
}

// runsc's own cgroup directories for a gander (its container id, gander-PID-NAME), at each
// hierarchy's root, where runsc makes them for gander in the root cgroup.
std::vector<fs::path> RunscCgroupDirs(pid_t gander) {
  std::vector<fs::path> out;
  const std::string prefix = "gander-" + std::to_string(gander) + "-";
  std::error_code ec;
  for (const auto& hierarchy : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    std::error_code inner;
    for (const auto& e : fs::directory_iterator(hierarchy.path(), inner)) {
      if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path());
    }
  }
  return out;
}

// True while a process of the runsc sandbox gander PID started runs (its container id,
// gander-PID-NAME, is in every runsc process's command line).
bool RunscAlive(pid_t gander) {
  const std::string id = "gander-" + std::to_string(gander) + "-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string cmdline = ReadFileOr(e.path() / "cmdline", "");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(id) != std::string::npos) return true;
  }
  return false;
}

std::string Join(const std::vector<fs::path>& paths) {
  std::string s;
  for (const auto& p : paths) s += p.string() + "\n";
  return s;
}

class CgroupTest : public SandboxTest, public ::testing::TestWithParam<CgroupParam> {
 protected:
  void SetUp() override {
    Who who = std::get<0>(GetParam());
    if (std::string why = Prepare(who); !why.empty()) GTEST_SKIP() << why;
    if (mode() == Mode::kGvisor) {
      if (system("command -v runsc >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "runsc (gVisor) is not installed: apt-get install runsc";
      }
    } else if (std::string why = mode() == Mode::kNamespaces ? MissingForFullSandbox(who)
                                                             : MissingForDegradedSandbox();
               !why.empty()) {
      GTEST_SKIP() << why;
    }
    if (system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
    // The tmpfs may hold far more than the memory limit: what stops the file is the cgroup.
    policy_ = w().root / "cgroup.yaml";
    WriteFile(policy_,
              "version: 1\nextends: default\nlimits: {memory: 64MiB, tmpfs_size: 512MiB}\n", 0644);
  }
  Mode mode() const { return std::get<1>(GetParam()); }
  bool root() const { return std::get<0>(GetParam()) == Who::kCurrent && geteuid() == 0; }
  Argv Flags(bool require = false) const {
    Argv flags = {"--policy", policy_.string()};
    if (mode() == Mode::kGvisor) flags.insert(flags.end(), {"--backend", "gvisor"});
    if (mode() == Mode::kNoNamespaces) flags.push_back("--no-namespaces");
    if (require) flags.insert(flags.end(), {"--require", "basic"});
    return flags;
  }

  // Runs `python` (which prints "survived" if its 256 MiB all fit) under a 64 MiB limit.
  void ExpectStopped(const std::string& python) {
    // stdin held open: at an EOF gander would stop a slow run after 1 s (exit 143).
    RunResult r = Gander(Flags(), {"/bin/sh", "-c", "python3 -c '" + python + "'; echo rc=$? >&2"},
                         w().ws, -1, false, true);
    const std::string warning = "limits.memory is not enforced";
    if (!root()) {
      // No delegated cgroup here: said at start, and the allocation goes through.
      EXPECT_NE(r.err.find(warning), std::string::npos) << Context(r);
      RunResult refused = Gander(Flags(true), {"/bin/true"}, w().ws);
      EXPECT_NE(refused.status, 0) << Context(refused);
      EXPECT_NE(refused.err.find("--require: " + warning), std::string::npos) << Context(refused);
      return;
    }
    EXPECT_EQ(r.err.find(warning), std::string::npos) << Context(r);
    EXPECT_EQ(r.out.find("survived"), std::string::npos) << Context(r);
    EXPECT_EQ(r.err.find("survived"), std::string::npos) << Context(r);
    // OOM-killed (sh sees 137; under gVisor the whole sandbox goes: gander's status is 137)
    // or refused (MemoryError, ENOMEM, ENOSPC from a tmpfs write: python exits 1).
    bool killed = r.err.find("rc=137") != std::string::npos || r.status == 137;
    bool refused = r.err.find("rc=1\n") != std::string::npos &&
                   (r.err.find("MemoryError") != std::string::npos ||
                    r.err.find("Cannot allocate memory") != std::string::npos);
    if (mode() == Mode::kGvisor && r.err.find("no-memfd") != std::string::npos) refused = true;
    EXPECT_TRUE(killed || refused) << Context(r);
  }
  fs::path policy_;
};

// 256 MiB of shared anonymous memory, every page touched: RLIMIT_DATA does not count it.
TEST_P(CgroupTest, SharedAnonymousMemoryStopsAtTheLimit) {
  ExpectStopped(
      "import mmap\n"
      "m = mmap.mmap(-1, 256 << 20, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)\n"
      "for i in range(0, 256 << 20, 4096): m[i] = 1\n"
      "print(\"survived\")\n");
}

// 256 MiB written into a memfd (sealed non-executable: the filter refuses other memfds).
// gVisor 20221219 knows no MFD_NOEXEC_SEAL (EINVAL) and its floor refuses a memfd without it:
// there no memfd can be made at all ("no-memfd", python exits 1), which is the answer there.
TEST_P(CgroupTest, MemfdStopsAtTheLimit) {
  ExpectStopped(
      "import os, sys\n"
      "try: fd = os.memfd_create(\"big\", os.MFD_CLOEXEC | 8)\n"
      "except OSError:\n"
      "  try: fd = os.memfd_create(\"big\", os.MFD_CLOEXEC)\n"
      "  except OSError as e: print(\"no-memfd\", e, file=sys.stderr); sys.exit(1)\n"
      "chunk = b\"x\" * (1 << 20)\n"
      "for i in range(256): os.write(fd, chunk)\n"
      "print(\"survived\")\n");
}

// 256 MiB into a private tmpfs of 512 MiB: tmpfs pages are charged to the cgroup. Without a
// mount namespace the private paths are host directories (page cache, reclaimable): no tmpfs.
class CgroupTmpfsTest : public CgroupTest {};

TEST_P(CgroupTmpfsTest, PrivateTmpfsFileStopsAtTheLimit) {
  ExpectStopped(
      "chunk = b\"x\" * (1 << 20)\n"
      "f = open(\"/tmp/big\", \"wb\", buffering=0)\n"
      "for i in range(256): f.write(chunk)\n"
      "print(\"survived\")\n");
}

// A double-forked setsid grandchild that ignores SIGTERM and SIGHUP. It writes its pid to
// `pid_fifo` and waits for a line on `ack_fifo` before the extension goes on: `then`.
// Returns the grandchild's pidfd in our namespace.
class CgroupTreeTest : public CgroupTest {
 protected:
  void SetUp() override {
    CgroupTest::SetUp();
    if (IsSkipped()) return;
    if (!root()) GTEST_SKIP() << "the run's cgroup needs root here (no systemd delegation)";
  }

  // How the run ends: the extension exits; gander is SIGKILLed (its init kills the cgroup);
  // or gander and its init both are, as `pkill -9 gander` does (the init stopped first, so it
  // cannot act on gander's death): then the grandchild outlives them until the next start.
  // kKillAndFreeze: the run's freezer cgroup FROZEN, then gander and its init killed, as a
  // gander killed between its freeze and its thaw leaves it (nothing in it can die until
  // thawed). Frozen before the kills: an empty directory could be swept by a parallel test's
  // start before it was frozen; a frozen one only by the code under test.
  enum class End { kNormal, kKillGander, kKillGanderAndInit, kKillAndFreeze };

  void Check(End end) {
    const bool kill_gander = end != End::kNormal;
    const std::string m = Marker();
    fs::path pid_fifo = w().ws / ("pid-" + m), ack_fifo = w().ws / ("ack-" + m);
    ASSERT_EQ(mkfifo(pid_fifo.c_str(), 0600), 0);
    ASSERT_EQ(mkfifo(ack_fifo.c_str(), 0600), 0);
    std::string grandchild =
        "trap \"\" TERM HUP; echo $$ > " + pid_fifo.filename().string() + "; exec sleep " + m;
    std::string script = "(setsid sh -c '" + grandchild + "' &); read line < " +
                         ack_fifo.filename().string() + "; " +
                         (kill_gander ? "exec sleep " + m + "0" : "exit 0");
    RunOptions o = Opts(w().ws);
    o.pipe_stdin = true;
    Argv argv = GanderArgv(Flags(), {"/bin/sh", "-c", script}, w().ws);
    Child gander(argv, o);
    // Waits until the grandchild has written its pid (the FIFO's writer).
    long inner = ReadPid(pid_fifo);
    ASSERT_GT(inner, 0) << Quote(argv);
    // Retried (a hang bound): while the grandchild's shell execs its sleep, its cmdline reads
    // empty for a moment (the new mm has no arguments yet), so one scan can miss it.
    pid_t host = 0;
    WaitUntil([&] { return (host = HostPid(m, static_cast<pid_t>(inner))) > 0; }, 10);
    ASSERT_GT(host, 0) << "no process " << inner << " with marker " << m;
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, host, 0));
    ASSERT_GE(pidfd, 0);
    // It sleeps (a hang bound): a watched syscall after gander's death (its execve, the
    // loader's openat of libc) fails, no supervisor answering the filter, and ends it first.
    auto asleep = [&] {
      std::string call = ReadFileOr("/proc/" + std::to_string(host) + "/syscall", "");
      return call.starts_with(std::to_string(SYS_clock_nanosleep) + " ") ||
             call.starts_with(std::to_string(SYS_nanosleep) + " ");
    };
    for (int i = 0; i < 6000 && !asleep(); ++i) usleep(1000);
    ASSERT_TRUE(asleep()) << "the grandchild " << host << " never slept";
    {
      std::ofstream ack(ack_fifo);
      ack << "go\n";
    }
    std::string context;
    if (kill_gander) {
      std::vector<pid_t> inits = Children(gander.pid());
      const bool kill_init = end == End::kKillGanderAndInit || end == End::kKillAndFreeze;
      ASSERT_FALSE(kill_init && inits.empty()) << "gander " << gander.pid() << " has no child";
      if (end == End::kKillAndFreeze) {
        std::vector<fs::path> freezers;
        for (const fs::path& dir : RunCgroupDirs(gander.pid())) {
          if (fs::exists(dir / "freezer.state")) freezers.push_back(dir / "freezer.state");
        }
        if (freezers.empty()) GTEST_SKIP() << "no cgroup v1 freezer holds the run here";
        for (const fs::path& state : freezers) std::ofstream(state) << "FROZEN";
        // FREEZING until every task is (a hang bound, not a timing).
        auto frozen = [&] { return ReadFileOr(freezers.front(), "").starts_with("FROZEN"); };
        for (int i = 0; i < 6000 && !frozen(); ++i) usleep(1000);
        ASSERT_TRUE(frozen()) << "the run's freezer never froze";
      } else if (kill_init) {
        ASSERT_FALSE(inits.empty()) << "gander " << gander.pid() << " has no child";
        for (pid_t init : inits) {
          kill(init, SIGSTOP);
          // Stopped for real before gander dies (a hang bound, not a timing).
          for (int i = 0; i < 6000 && State(init) != 'T'; ++i) usleep(1000);
          ASSERT_EQ(State(init), 'T') << "gander's child " << init << " did not stop";
        }
      }
      ASSERT_EQ(kill(gander.pid(), SIGKILL), 0);
      context = gander.Wait(60).Describe();
      if (kill_init) {
        for (pid_t init : inits) kill(init, SIGKILL);
        if (mode() == Mode::kNoNamespaces && end != End::kKillAndFreeze) {
          // Nobody is left to kill it: the test would prove nothing if it were gone already.
          pollfd p{pidfd, POLLIN, 0};
          EXPECT_EQ(poll(&p, 1, 0), 0) << "the grandchild died with its init\n" << context;
        }
      }
    } else {
      RunResult r = gander.Wait(60);
      context = r.Describe();
      EXPECT_EQ(r.status, 0) << context;
    }
    if (kill_gander) {
      // Nobody removed its cgroup: the next start kills what is left in it and removes it.
      RunResult next = Gander(Flags(), {"/bin/true"}, w().ws);
      EXPECT_EQ(next.status, 0) << Context(next);
    }
    pollfd p{pidfd, POLLIN, 0};
    int ready = poll(&p, 1, 60000);  // a hang guard, not a timing
    if (ready == 0) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    close(pidfd);
    EXPECT_EQ(ready, 1) << "the grandchild " << host << " outlived the run\n" << context;
    std::vector<fs::path> left = RunCgroupDirs(gander.pid());
    EXPECT_TRUE(left.empty()) << "left behind:\n" << Join(left) << context;
  }

  // The state letter of `pid` in /proc/PID/stat (R, S, T, Z, ...), or 0.
  static char State(pid_t pid) {
    std::string stat = ReadFileOr("/proc/" + std::to_string(pid) + "/stat", "");
    size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
  }

  // The children of `pid`, from each of its threads.
  static std::vector<pid_t> Children(pid_t pid) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& task :
         fs::directory_iterator(fs::path("/proc") / std::to_string(pid) / "task", ec)) {
      std::istringstream in(ReadFileOr(task.path() / "children", ""));
      for (long child; in >> child;) out.push_back(static_cast<pid_t>(child));
    }
    return out;
  }

  static long ReadPid(const fs::path& fifo) {
    int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    std::string text;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 60000) <= 0) break;  // a hang guard: nothing came
      char buf[64];
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) break;  // the writer closed
      text.append(buf, static_cast<size_t>(n));
      if (text.find('\n') != std::string::npos) break;
    }
    close(fd);
    return text.empty() ? -1 : std::atol(text.c_str());
  }

  // The host pid of the process with `marker` whose innermost pid is `inner`.
  static pid_t HostPid(const std::string& marker, pid_t inner) {
    for (pid_t pid : ProcessesWithMarker(marker)) {
      std::istringstream status(ReadFileOr("/proc/" + std::to_string(pid) + "/status", ""));
      for (std::string line; std::getline(status, line);) {
        if (!line.starts_with("NSpid:")) continue;
        if (std::stol(line.substr(line.find_last_of(" \t") + 1)) == inner) return pid;
      }
    }
    return 0;
  }
};

// Without namespaces the sandbox may read its own (the run's) cgroup, never a hierarchy's
// root: before, gander in the root cgroup granted the whole hierarchy, cgroup.procs listing
// every host pid. With namespaces the fresh mounts are rooted at the run's cgroup.
TEST_P(CgroupTreeTest, OnlyTheRunsOwnCgroupIsReadable) {
  RunResult r = Gander(Flags(),
                       {"/bin/sh", "-c",
                        "for f in /sys/fs/cgroup/pids/cgroup.procs "
                        "/sys/fs/cgroup/freezer/cgroup.procs; do "
                        "n=$(cat $f 2>/dev/null | wc -l); echo $f=$n >&2; done"},
                       w().ws);
  EXPECT_EQ(r.status, 0) << Context(r);
  // Only the sandbox's own processes (the init, sh, cat, wc: a handful), never the host's.
  for (const char* file :
       {"/sys/fs/cgroup/pids/cgroup.procs=", "/sys/fs/cgroup/freezer/cgroup.procs="}) {
    size_t at = r.err.find(file);
    ASSERT_NE(at, std::string::npos) << Context(r);
    EXPECT_LT(std::atoi(r.err.c_str() + at + strlen(file)), 10) << Context(r);
  }
}

TEST_P(CgroupTreeTest, EscapedGrandchildDiesAtNormalEnd) { Check(End::kNormal); }
TEST_P(CgroupTreeTest, EscapedGrandchildDiesWhenGanderIsKilled) { Check(End::kKillGander); }
TEST_P(CgroupTreeTest, EscapedGrandchildOfAKilledInitDiesAtTheNextStart) {
  Check(End::kKillGanderAndInit);
}
TEST_P(CgroupTreeTest, AFreezerLeftFrozenIsThawedAndEmptiedAtTheNextStart) {
  Check(End::kKillAndFreeze);
}

// A gVisor run whose gander is SIGKILLed leaves runsc's own cgroups (runsc never ran
// `delete`): the next gVisor start removes those of gone ganders, as it does the run's.
// (Root only, as CgroupTreeTest: runsc makes cgroups of its own only as root.)
class CgroupGvisorKillTest : public CgroupTreeTest {};

TEST_P(CgroupGvisorKillTest, RunscCgroupsOfAKilledGanderAreSweptAtTheNextStart) {
  RunOptions o = Opts(w().ws);
  o.pipe_stdin = true;
  Argv argv =
      GanderArgv(Flags(), {"/bin/sh", "-c", "touch started && exec /bin/sleep 600"}, w().ws);
  Child gander(argv, o);
  // runsc has made them all once the payload runs (killed in the middle of runsc's set-up, a
  // cgroup can be left that no sweep of gander's can remove); waited for with a hang bound.
  const fs::path started = fs::path(w().ws) / "started";
  for (int i = 0; i < 6000 && !fs::exists(started); ++i) usleep(10'000);
  std::vector<fs::path> made = RunscCgroupDirs(gander.pid());
  ASSERT_FALSE(made.empty()) << "runsc made no cgroup for " << Quote(argv);
  ASSERT_EQ(kill(gander.pid(), SIGKILL), 0);
  std::string context = gander.Wait(60).Describe();
  // The sandbox goes with gander: every runsc process of it gone, then its cgroups (listed
  // again: runsc may have made more after the first one) all empty (a hang bound again).
  auto gone = [&] {
    if (RunscAlive(gander.pid())) return false;
    for (const auto& dir : RunscCgroupDirs(gander.pid())) {
      if (!ReadFileOr(dir / "cgroup.procs", "").empty()) return false;
    }
    return true;
  };
  for (int i = 0; i < 6000 && !gone(); ++i) usleep(10'000);
  ASSERT_TRUE(gone()) << "the sandbox outlived gander:\n" << Join(made) << context;
  made = RunscCgroupDirs(gander.pid());
  ASSERT_FALSE(made.empty()) << "nobody removed them yet";
  RunResult next = Gander(Flags(), {"/bin/true"}, w().ws);
  EXPECT_EQ(next.status, 0) << Context(next);
  std::vector<fs::path> left = RunscCgroupDirs(gander.pid());
  EXPECT_TRUE(left.empty()) << "left behind:\n" << Join(left) << context;
}

INSTANTIATE_TEST_SUITE_P(Cgroup, CgroupGvisorKillTest,
                         ::testing::Combine(::testing::Values(Who::kCurrent),
                                            ::testing::Values(Mode::kGvisor)),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(Cgroup, CgroupTest,
                         ::testing::Combine(::testing::Values(Who::kCurrent, Who::kNobody),
                                            ::testing::Values(Mode::kNamespaces,
                                                              Mode::kNoNamespaces, Mode::kGvisor)),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(Cgroup, CgroupTmpfsTest,
                         ::testing::Combine(::testing::Values(Who::kCurrent, Who::kNobody),
                                            ::testing::Values(Mode::kNamespaces, Mode::kGvisor)),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(Cgroup, CgroupTreeTest,
                         ::testing::Combine(::testing::Values(Who::kCurrent),
                                            ::testing::Values(Mode::kNamespaces,
                                                              Mode::kNoNamespaces)),
                         ParamName);

}  // namespace
