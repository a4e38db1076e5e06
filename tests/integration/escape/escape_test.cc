// The escape suite: every way out of the default profile we know of, tried by gander_probe
// from inside `gander run`, as the current user and as uid/gid 65534.
//
// Each attempt is made twice: through gander (it must fail) and without gander, as the same
// user (it must succeed, so a test cannot pass because the probe or the fixture is broken).
// Where the unsandboxed attempt cannot succeed for that user, the test says so in its output.
// The fixture plants what an extension would go after: a fake $HOME with ~/.ssh/id_rsa and
// ~/.aws/credentials, an OPENAI_API_KEY in gander's environment, a workspace symlink to the
// key, a host TCP and UDP listener on 127.0.0.1, a host unix and abstract socket, a host
// process (in its own user namespace) to signal and join, and an inherited descriptor.
//
// Kernel features are probed first; a missing one skips with the reason, never passes.
// The fixtures (World, SandboxTest) and the attempt table live in escape_fixture.h, shared with
// the audit-log suite (audit_log_test.cc).
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
#include <sys/resource.h>
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
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "escape_attempts.h"

namespace {

using namespace gander::escape_suite;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// Escape attempts under the full default profile

class EscapeTest : public AttemptTest, public ::testing::TestWithParam<AttemptParam> {
 protected:
  void SetUp() override {
    Who who = std::get<0>(GetParam());
    if (std::string why = PrepareIn(who, SandboxMode::kNamespaces); !why.empty()) {
      GTEST_SKIP() << why;
    }
  }
};

TEST_P(EscapeTest, AttemptFailsInsideSandbox) {
  const Attempt& a = FindAttempt(std::get<1>(GetParam()));
  if (std::string why = MissingTarget(a, w()); !why.empty()) GTEST_SKIP() << why;
  RunResult r = RunAttempt(a, kFullFlags, a.hold_stdin);
  ExpectAttemptFailed(a, w(), r, Context(r));
  if (a.name == std::string("signal_host_process") || a.name == std::string("setns_host_userns")) {
    EXPECT_TRUE(w().VictimAlive());
  }
  CheckAttemptControl(a);
}

INSTANTIATE_TEST_SUITE_P(Escape, EscapeTest, EveryUserAndAttempt(false), AttemptParamName);

// ---------------------------------------------------------------------------------------------
// Things that must keep working inside the sandbox (so the failures above are not a sandbox
// that fails at everything)

class SandboxBasicsTest : public SandboxTest, public ::testing::TestWithParam<Who> {
 protected:
  void SetUp() override {
    if (std::string why = PrepareIn(GetParam(), SandboxMode::kNamespaces); !why.empty())
      GTEST_SKIP() << why;
  }

  void ExpectSucceeds(const Argv& flags, const Argv& attempt, const fs::path& workspace) {
    RunResult r = Gander(flags, ProbeCommand(attempt), workspace);
    EXPECT_EQ(r.status, 0) << "positive control failed inside the sandbox\n" << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
  }

  void ExpectFails(const Argv& flags, const Argv& attempt, const fs::path& workspace) {
    RunResult r = Gander(flags, ProbeCommand(attempt), workspace);
    EXPECT_EQ(r.status, 1) << "attempt did not fail as planned (0 = it SUCCEEDED)\n" << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
  }
};

TEST_P(SandboxBasicsTest, PositiveControlsSucceed) {
  ExpectSucceeds(kFullFlags, {"write", "{WS}/written-in-sandbox"}, w().ws);
  EXPECT_EQ(ReadFileOr(w().ws / "written-in-sandbox", "<missing>"), "written by gander_probe\n");
  struct stat st {};
  if (stat((w().ws / "written-in-sandbox").c_str(), &st) == 0) {
    uid_t want = who_ == Who::kNobody ? kNobodyId : geteuid();
    EXPECT_EQ(st.st_uid, want) << "a file written in the workspace must keep the caller's owner";
  }
  ExpectSucceeds(kFullFlags, {"read", "{WS}/plain"}, w().ws);
  ExpectSucceeds(kFullFlags, {"list", "{WS}"}, w().ws);
  ExpectSucceeds(kFullFlags, {"read", "/usr/lib/os-release"}, w().ws);
  ExpectSucceeds(kFullFlags, {"read", "/etc/passwd"}, w().ws);
  ExpectSucceeds(kFullFlags, {"exec", "/bin/sh", "-c", "exit 0"}, w().ws);
  ExpectSucceeds(kFullFlags, {"env", "PATH"}, w().ws);
  ExpectSucceeds(kFullFlags, {"env", "HOME"}, w().ws);
  // $HOME and /tmp are private, empty and writable.
  ExpectSucceeds(kFullFlags, {"write", "{HOME}/scratch"}, w().ws);
  EXPECT_FALSE(fs::exists(w().home / "scratch")) << "$HOME must be a private tmpfs";
  ExpectSucceeds(kFullFlags, {"write", "/tmp/gander-probe-scratch"}, w().ws);
  ExpectFails(kFullFlags, {"read", "{HOME}/plain"}, w().ws);
}

TEST_P(SandboxBasicsTest, ReadOnlySystemPaths) {
  // /etc is read-only inside; nothing is written on the host either way (probe runs
  // sandboxed only).
  ExpectFails(kFullFlags, {"write", "/etc/gander-escape-test"}, w().ws);
  EXPECT_FALSE(fs::exists("/etc/gander-escape-test"));
  ExpectFails(kFullFlags, {"write", "/usr/gander-escape-test"}, w().ws);
  EXPECT_FALSE(fs::exists("/usr/gander-escape-test"));
}

// /proc/sys and /proc/sysrq-trigger act on the host kernel; as root with namespaces uid 0 inside
// is host uid 0, so where Landlock is missing only the mount keeps them from being written. The
// mount is read-only (seen in the sandbox's own mountinfo), and a write fails.
TEST_P(SandboxBasicsTest, ProcSysIsMountedReadOnly) {
  RunResult r = Gander(kFullFlags, {"/bin/cat", "/proc/self/mountinfo"}, w().ws);
  ASSERT_EQ(r.status, 0) << Context(r);
  for (const char* target : {"/proc/sys", "/proc/sysrq-trigger"}) {
    if (access(target, F_OK) != 0) {
      std::cout << "[ note ] " << target << ": this kernel has none (nothing to protect)\n";
      continue;
    }
    bool found = false;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string id, parent, dev, root, mountpoint, options;
      fields >> id >> parent >> dev >> root >> mountpoint >> options;
      if (mountpoint != target) continue;
      found = true;
      EXPECT_TRUE(options == "ro" || options.starts_with("ro,")) << line;
    }
    EXPECT_TRUE(found) << target << " is not a mount of its own in the sandbox\n" << r.out;
  }
  ExpectFails(kFullFlags, {"write", "/proc/sys/kernel/hostname"}, w().ws);
  if (access("/proc/sysrq-trigger", F_OK) == 0) {
    ExpectFails(kFullFlags, {"write", "/proc/sysrq-trigger"}, w().ws);
  }
}

// The host root and the staging root the sandbox was built in are gone from the sandbox's
// mount table, not only covered: one detaching unmount takes both (child_setup.cc,
// BuildRoot). What is left is one tree: a single mount at "/", every other mount's parent in
// the table, no staging directory's name as a mount point.
TEST_P(SandboxBasicsTest, HostRootIsDetached) {
  RunResult r = Gander(kFullFlags, {"/bin/cat", "/proc/self/mountinfo"}, w().ws);
  ASSERT_EQ(r.status, 0) << Context(r);
  std::set<std::string> ids;
  std::vector<std::pair<std::string, std::string>> parents;  // (mount point, parent id)
  int roots = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, mountpoint;
    fields >> id >> parent >> dev >> root >> mountpoint;
    ids.insert(id);
    if (mountpoint == "/") {
      ++roots;
    } else {
      parents.emplace_back(mountpoint, parent);
    }
    EXPECT_FALSE(mountpoint.starts_with("/oldroot") || mountpoint.starts_with("/newroot")) << line;
  }
  EXPECT_EQ(roots, 1) << r.out;
  EXPECT_GT(parents.size(), 3u) << r.out;
  for (const auto& [mountpoint, parent] : parents) {
    EXPECT_TRUE(ids.contains(parent))
        << mountpoint << " hangs from mount " << parent << ", which is not in the sandbox's table\n"
        << r.out;
  }
  ExpectFails(kFullFlags, {"list", "/oldroot"}, w().ws);
}

// The workspace IS $HOME: the deny list still hides ~/.ssh, ~/.aws and goose's secrets.
TEST_P(SandboxBasicsTest, WorkspaceIsHome) {
  const fs::path& home = w().home;
  for (const Argv& attempt : std::vector<Argv>{{"read", "{HOME}/.ssh/id_rsa"},
                                               {"list", "{HOME}/.ssh"},
                                               {"read", "{HOME}/key-link"},
                                               {"read", "{HOME}/.aws/credentials"},
                                               {"read", "{HOME}/.config/goose/secrets.yaml"},
                                               {"write", "{HOME}/.ssh/authorized_keys"},
                                               {"read", "/proc/self/root{HOME}/.ssh/id_rsa"}}) {
    SCOPED_TRACE(Quote(attempt));
    ExpectFails(kFullFlags, attempt, home);
  }
  EXPECT_FALSE(fs::exists(home / ".ssh" / "authorized_keys"));
  EXPECT_EQ(ReadFileOr(home / ".ssh" / "id_rsa", ""),
            "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n");
  // The rest of $HOME is the workspace: readable; writable only with --allow-home-write (and
  // then only what exists: no new entry at the top of ~), and writes land on the host.
  ExpectSucceeds(kFullFlags, {"read", "{HOME}/plain"}, home);
  ExpectFails(kFullFlags, {"write", "{HOME}/written-in-sandbox"}, home);
  EXPECT_FALSE(fs::exists(home / "written-in-sandbox"));
  Argv opt_in = kFullFlags;
  opt_in.push_back("--allow-home-write");
  ExpectSucceeds(opt_in, {"write", "{HOME}/plain"}, home);
  EXPECT_EQ(ReadFileOr(home / "plain", ""), "written by gander_probe\n");
  // Controls: the same reads work without gander.
  for (const char* f : {"{HOME}/.ssh/id_rsa", "{HOME}/key-link", "{HOME}/.aws/credentials"}) {
    RunResult r = Direct({}, {"read", f});
    EXPECT_EQ(r.status, 0) << "unsandboxed control\n" << Context(r);
  }
}

INSTANTIATE_TEST_SUITE_P(Escape, SandboxBasicsTest, ::testing::Values(Who::kCurrent, Who::kNobody),
                         WhoParamName);

// ---------------------------------------------------------------------------------------------
// Degraded mode: no namespaces, Landlock + seccomp only

class DegradedEscapeTest : public AttemptTest, public ::testing::TestWithParam<AttemptParam> {
 protected:
  void SetUp() override {
    if (std::string why = Prepare(std::get<0>(GetParam())); !why.empty()) GTEST_SKIP() << why;
    if (std::string why = MissingForDegradedSandbox(); !why.empty()) GTEST_SKIP() << why;
    flag_ = DegradedFlag(w().gander);
    ASSERT_FALSE(flag_.empty()) << "`gander run --help` names no flag to run without namespaces "
                                   "(looked for --no-namespaces and similar)";
  }
  Argv Flags() const { return {flag_, "--require", "landlock"}; }
  std::string flag_;
};

TEST_P(DegradedEscapeTest, AttemptFailsWithoutNamespaces) {
  const Attempt& a = FindAttempt(std::get<1>(GetParam()));
  if (std::string why = MissingTarget(a, w()); !why.empty()) GTEST_SKIP() << why;
  RunResult r = RunAttempt(a, Flags(), a.hold_stdin);
  std::string context = Context(r);
  if (a.degraded == Degraded::kDesign) {
    context = "(expectation from DESIGN.md layers 3/5, not the CLI contract)\n" + context;
  }
  ExpectAttemptFailed(a, w(), r, context);
  CheckAttemptControl(a);
}

INSTANTIATE_TEST_SUITE_P(Escape, DegradedEscapeTest, EveryUserAndAttempt(true), AttemptParamName);

class DegradedBasicsTest : public SandboxTest, public ::testing::TestWithParam<Who> {
 protected:
  void SetUp() override {
    if (std::string why = Prepare(GetParam()); !why.empty()) GTEST_SKIP() << why;
    if (std::string why = MissingForDegradedSandbox(); !why.empty()) GTEST_SKIP() << why;
    flag_ = DegradedFlag(w().gander);
    ASSERT_FALSE(flag_.empty()) << "`gander run --help` names no flag to run without namespaces";
  }
  Argv Flags() const { return {flag_, "--require", "landlock"}; }
  std::string flag_;
};

TEST_P(DegradedBasicsTest, PositiveControlsSucceed) {
  for (const Argv& attempt : std::vector<Argv>{{"write", "{WS}/written-in-sandbox"},
                                               {"read", "{WS}/plain"},
                                               {"read", "/usr/lib/os-release"},
                                               {"exec", "/bin/sh", "-c", "exit 0"}}) {
    RunResult r = Gander(Flags(), ProbeCommand(attempt), w().ws);
    EXPECT_EQ(r.status, 0) << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
  }
  EXPECT_TRUE(fs::exists(w().ws / "written-in-sandbox"));
}

// --require fails closed: below the level, the command never starts.
TEST_P(DegradedBasicsTest, RequireFullRefusesToStartWithoutNamespaces) {
  RunResult r =
      Gander({flag_, "--require", "full"}, ProbeCommand({"write", "{WS}/must-not-exist"}), w().ws);
  EXPECT_NE(r.status, 0) << Context(r);
  EXPECT_TRUE(r.status == 2 || r.status == 125) << "a refusal is a usage/policy (2) or sandbox "
                                                   "setup (125) error\n"
                                                << Context(r);
  EXPECT_EQ(r.out, "") << Context(r);
  EXPECT_FALSE(fs::exists(w().ws / "must-not-exist")) << "the command ran\n" << Context(r);
}

// DESIGN.md: the sandbox tree must die with gander "even when gander itself is SIGKILLed". Without
// a PID namespace that takes more than PDEATHSIG on the direct child.
TEST_P(DegradedBasicsTest, SandboxDiesWithGanderOnSigkill) { CheckSandboxDiesWithGander(Flags()); }

TEST_P(DegradedBasicsTest, StdinEofEscalatesToSigkill) { CheckStdinEofEscalates(Flags()); }

TEST_P(DegradedBasicsTest, InitHoldsNoCopyOfGander) { CheckInitHoldsNoCopyOfGander(Flags()); }

// Without a pid namespace the reaper is a child subreaper: a setsid grandchild (double fork)
// must die at the extension's normal end and when gander is SIGKILLed (issue 16, item 3).
TEST_P(DegradedBasicsTest, EscapedGrandchildDiesAtNormalExit) {
  CheckEscapedGrandchildDies(Flags(), /*kill_gander=*/false, 8);
}

TEST_P(DegradedBasicsTest, SigtermToGanderTearsItsSandboxDownFirst) {
  CheckSigtermTearsDown(Flags());
}

TEST_P(DegradedBasicsTest, SigtermWhileGanderStartsTearsDownToo) {
  for (int us : {0, 500, 1000, 2000, 3000, 5000, 8000}) CheckSigtermTearsDown(Flags(), us);
}

TEST_P(DegradedBasicsTest, SigtermWhileTheInitHangsInItsSetUp) {
  CheckSigtermWhileInitHangs(Flags(), /*network=*/false);
  CheckSigtermWhileInitHangs(Flags(), /*network=*/true);
}

TEST_P(DegradedBasicsTest, EscapedGrandchildDiesWithGanderOnSigkill) {
  CheckEscapedGrandchildDies(Flags(), /*kill_gander=*/true, 4);
}

INSTANTIATE_TEST_SUITE_P(Escape, DegradedBasicsTest, ::testing::Values(Who::kCurrent, Who::kNobody),
                         WhoParamName);

// ---------------------------------------------------------------------------------------------
// Lifecycle, exit status and stdout hygiene

class LifecycleTest : public SandboxTest, public ::testing::TestWithParam<Who> {
 protected:
  void SetUp() override {
    if (std::string why = PrepareIn(GetParam(), SandboxMode::kNamespaces); !why.empty())
      GTEST_SKIP() << why;
  }
};

TEST_P(LifecycleTest, SandboxDiesWithGanderOnSigkill) { CheckSandboxDiesWithGander(kFullFlags); }

TEST_P(LifecycleTest, InitHoldsNoCopyOfGander) { CheckInitHoldsNoCopyOfGander(kFullFlags); }

TEST_P(LifecycleTest, StdinEofEscalatesToSigkill) { CheckStdinEofEscalates(kFullFlags); }

TEST_P(LifecycleTest, SigtermToGanderTearsItsSandboxDownFirst) {
  CheckSigtermTearsDown(kFullFlags);
}

TEST_P(LifecycleTest, SigtermWhileGanderStartsTearsDownToo) {
  for (int us : {0, 500, 1000, 2000, 3000, 5000, 8000}) CheckSigtermTearsDown(kFullFlags, us);
}

TEST_P(LifecycleTest, SigtermWhileTheInitHangsInItsSetUp) {
  CheckSigtermWhileInitHangs(kFullFlags, /*network=*/false);
  CheckSigtermWhileInitHangs(kFullFlags, /*network=*/true);
}

TEST_P(LifecycleTest, EscapedGrandchildDiesAtNormalExit) {
  CheckEscapedGrandchildDies(kFullFlags, /*kill_gander=*/false, 3);
}

TEST_P(LifecycleTest, EscapedGrandchildDiesWithGanderOnSigkill) {
  CheckEscapedGrandchildDies(kFullFlags, /*kill_gander=*/true, 2);
}

// Goose sets PDEATHSIG=SIGTERM on gander: a SIGTERM to gander must end the whole sandbox, even a
// tree that ignores SIGTERM.
TEST_P(LifecycleTest, SigtermToGanderEndsTheSandbox) {
  std::string m = Marker();
  RunOptions o = Opts(w().ws);
  o.pipe_stdin = true;
  Argv argv = GanderArgv(
      kFullFlags, {"/bin/sh", "-c", "trap '' TERM; sleep " + m + " & sleep " + m + " & wait"},
      w().ws);
  Child gander(argv, o);
  bool started = WaitUntil([&] { return ProcessesWithMarker(m).size() >= 3; }, 15);
  if (!started) KillAll(ProcessesWithMarker(m));
  ASSERT_TRUE(started) << Quote(argv);
  ASSERT_EQ(kill(gander.pid(), SIGTERM), 0);
  // Waits for gander's exit (the 15 s only bounds a hang: no clock threshold that a loaded
  // machine could miss). The SIGTERM-ignoring tree must be gone with it (ExpectNoSurvivors).
  RunResult r = gander.Wait(15);
  std::string context = "command: " + Quote(argv) + "\n" + r.Describe();
  EXPECT_FALSE(r.timed_out) << "gander did not end on SIGTERM\n" << context;
  EXPECT_EQ(r.out, "") << context;
  ExpectNoSurvivors(m, context);
}

TEST_P(LifecycleTest, StdinEofSigtermsCooperativeExtension) {
  std::string m = Marker();
  RunOptions o = Opts(w().ws);
  o.pipe_stdin = true;
  Argv argv = GanderArgv(kFullFlags, {"/bin/sleep", m}, w().ws);
  Child gander(argv, o);
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithMarker(m).empty(); }, 15)) << Quote(argv);
  gander.CloseStdin();
  RunResult r = gander.Wait(15);  // bounds a hang only
  std::string context = "command: " + Quote(argv) + "\n" + r.Describe();
  EXPECT_FALSE(r.timed_out) << context;
  // SIGTERM, not the SIGKILL that would follow the grace period: the EOF was acted on at once
  // (what the 3.5 s threshold used to stand for, without the clock).
  EXPECT_EQ(r.status, 128 + SIGTERM) << context;
  ExpectNoSurvivors(m, context);
}

TEST_P(LifecycleTest, StdinEofIsForwarded) {
  RunOptions o = Opts(w().ws);
  o.pipe_stdin = true;
  Argv argv = GanderArgv(kFullFlags, {"/bin/cat"}, w().ws);
  Child gander(argv, o);
  ASSERT_TRUE(gander.WriteStdin("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"));
  gander.CloseStdin();
  RunResult r = gander.Wait(15);
  std::string context = "command: " + Quote(argv) + "\n" + r.Describe();
  EXPECT_EQ(r.status, 0) << "cat exits 0 on EOF when gander forwards it\n" << context;
  EXPECT_EQ(r.out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n") << context;
}

TEST_P(LifecycleTest, ExitStatusPassthrough) {
  RunResult r = Gander(kFullFlags, {"/bin/sh", "-c", "exit 7"}, w().ws);
  EXPECT_EQ(r.status, 7) << Context(r);
  r = Gander(kFullFlags, {w().probe.string(), "crash"}, w().ws);
  EXPECT_EQ(r.status, 128 + SIGSEGV) << Context(r);
  r = Gander(kFullFlags, {"/bin/sh", "-c", "kill -SEGV $$"}, w().ws);
  EXPECT_EQ(r.status, 128 + SIGSEGV) << Context(r);
  r = Gander(kFullFlags, {"/bin/sh", "-c", "exit 0"}, w().ws);
  EXPECT_EQ(r.status, 0) << Context(r);
  EXPECT_EQ(r.out, "") << Context(r);
}

TEST_P(LifecycleTest, CommandNotFoundPrintsNothingOnStdout) {
  for (const char* cmd : {"gander-no-such-command-xyz", "/nonexistent/gander-cmd"}) {
    RunResult r = Gander(kFullFlags, {cmd}, w().ws);
    EXPECT_EQ(r.status, 127) << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
    EXPECT_NE(r.err, "") << "a diagnostic belongs on stderr\n" << Context(r);
  }
}

// A step that fails once the sandbox's root and network are up (its egress sockets handed
// over, so gander is already opening its sinks): here setrlimit, asked for more open files than
// the hard limit, which no process of a new user namespace may raise. The run ends as a start
// failure: 125, the step named on stderr, nothing on stdout, nothing left running.
TEST_P(LifecycleTest, ASetupStepFailingAfterTheNetworkIsUpEndsTheRun) {
  struct rlimit files {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  const fs::path policy = w().ws / "too-many-open-files.yaml";
  WriteFile(policy,
            "version: 1\nextends: default\nlimits:\n  open_files: " +
                std::to_string(files.rlim_max + 1000) + "\n",
            0644);
  std::string m = Marker();
  Argv flags = kFullFlags;
  flags.insert(flags.end(), {"--policy", policy.string()});
  RunResult r = Gander(flags, {"/bin/sleep", m}, w().ws);
  EXPECT_EQ(r.status, 125) << Context(r);
  EXPECT_EQ(r.out, "") << Context(r);
  EXPECT_NE(r.err.find("sandbox set-up failed at 'setrlimit'"), std::string::npos) << Context(r);
  ExpectNoSurvivors(m, Context(r));
}

TEST_P(LifecycleTest, CannotExecute) {
  RunResult r = Gander(kFullFlags, {(w().ws / "not-executable").string()}, w().ws);
  EXPECT_EQ(r.status, 126) << Context(r);
  EXPECT_EQ(r.out, "") << Context(r);
}

// A command that resolves on the host but cannot be executed inside the sandbox: the init's
// execve step fails (ChildStep kExec with its errno, sandbox/child_step.h), and gander exits
// as a shell would: 127 for a missing interpreter, 126 for one that is not a program.
TEST_P(LifecycleTest, ExecFailureInsideTheSandboxMapsToTheShellsExitStatus) {
  const struct {
    const char* name;
    const char* interpreter;
    int status;
  } cases[] = {{"no-interpreter", "/nonexistent/gander-interp", 127},
               {"bad-interpreter", "/etc/hostname", 126}};
  for (const auto& c : cases) {
    fs::path script = w().ws / c.name;
    WriteFile(script, std::string("#!") + c.interpreter + "\n", 0755);
    RunResult r = Gander(kFullFlags, {script.string()}, w().ws);
    EXPECT_EQ(r.status, c.status) << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
    EXPECT_NE(r.err.find("cannot execute " + script.string()), std::string::npos) << Context(r);
  }
}

// Namespaces refused at clone (bubblewrap's --disable-userns: no nested user namespace) is the
// step the fallback reads (ChildStep kClone): the run goes on with Landlock and seccomp and
// says so; --require full refuses instead, with the set-up status.
TEST_P(LifecycleTest, RefusedNamespacesFallBackUnlessFullIsRequired) {
  if (access("/usr/bin/bwrap", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/bwrap to refuse namespaces";
  Argv probe = AsUser(who_);
  for (const char* a : {"/usr/bin/bwrap", "--dev-bind", "/", "/", "--unshare-user",
                        "--disable-userns", "--", "/bin/true"}) {
    probe.push_back(a);
  }
  if (RunResult r = RunCommand(probe, Opts(w().ws)); r.status != 0) {
    GTEST_SKIP() << "bwrap --unshare-user --disable-userns does not run here\n" << r.Describe();
  }
  auto behind_bwrap = [&](const Argv& flags) {
    Argv argv = GanderArgv(flags, {"/bin/sh", "-c", "exit 3"}, w().ws);
    Argv wrapped = AsUser(who_);
    for (const char* a :
         {"/usr/bin/bwrap", "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--"}) {
      wrapped.push_back(a);
    }
    wrapped.insert(wrapped.end(), argv.begin() + static_cast<long>(AsUser(who_).size()),
                   argv.end());
    return RunCommand(wrapped, Opts(w().ws));
  };
  RunResult r = behind_bwrap({});
  EXPECT_EQ(r.status, 3) << "the extension ran, without namespaces\n" << r.Describe();
  EXPECT_NE(r.err.find("user namespaces are not available here"), std::string::npos)
      << r.Describe();
  EXPECT_EQ(r.out, "") << r.Describe();
  r = behind_bwrap(kFullFlags);
  EXPECT_EQ(r.status, 125) << "--require full refuses\n" << r.Describe();
  EXPECT_NE(r.err.find("clone"), std::string::npos) << "the step that failed\n" << r.Describe();
  EXPECT_EQ(r.err.find("user namespaces are not available here"), std::string::npos)
      << r.Describe();
  EXPECT_EQ(r.out, "") << r.Describe();
  // `gander doctor`'s probe child reports the same refusal by its step and errno.
  Argv doctor = AsUser(who_);
  for (const std::string& a :
       {std::string("/usr/bin/bwrap"), std::string("--dev-bind"), std::string("/"),
        std::string("/"), std::string("--unshare-user"), std::string("--disable-userns"),
        std::string("--"), w().gander.string(), std::string("doctor")}) {
    doctor.push_back(a);
  }
  r = RunCommand(doctor, Opts(w().ws));
  EXPECT_NE(r.out.find("user namespaces   no (unshare: " + std::string(std::strerror(ENOSPC))),
            std::string::npos)
      << r.Describe();
}

TEST_P(LifecycleTest, BadPolicyNamesFileLineColumn) {
  fs::path policy = w().data / "bad-policy.yaml";
  WriteFile(policy, "version: 1\nextends: default\nfilesystem:\n  raed: [/usr]\n", 0644);
  if (who_ == Who::kNobody) lchown(policy.c_str(), kNobodyId, kNobodyId);
  std::string where = policy.string() + ":4:3";
  RunResult r = Gander({"--policy", policy.string()}, {"/bin/true"}, w().ws);
  EXPECT_EQ(r.status, 2) << Context(r);
  EXPECT_EQ(r.out, "") << Context(r);
  EXPECT_NE(r.err.find(where), std::string::npos) << "stderr must name " << where << "\n"
                                                  << Context(r);
  EXPECT_NE(r.err.find("raed"), std::string::npos) << "stderr must name the key\n" << Context(r);

  Argv check = AsUser(who_);
  for (const std::string& a :
       {w().gander.string(), std::string("policy"), std::string("check"), policy.string()})
    check.push_back(a);
  RunResult c = RunCommand(check, Opts(w().ws));
  EXPECT_NE(c.status, 0) << Quote(check) << "\n" << c.Describe();
  EXPECT_NE((c.out + c.err).find(where), std::string::npos) << Quote(check) << "\n" << c.Describe();
}

TEST_P(LifecycleTest, UsageErrorsExitTwo) {
  Argv argv = AsUser(who_);
  argv.push_back(w().gander.string());
  argv.push_back("run");
  RunResult r = RunCommand(argv, Opts(w().ws));
  EXPECT_EQ(r.status, 2) << "`gander run` without a command\n" << r.Describe();
  EXPECT_EQ(r.out, "") << r.Describe();
  argv.push_back("--require");
  argv.push_back("bogus-level");
  argv.push_back("--");
  argv.push_back("/bin/true");
  r = RunCommand(argv, Opts(w().ws));
  EXPECT_EQ(r.status, 2) << Quote(argv) << "\n" << r.Describe();
  EXPECT_EQ(r.out, "") << r.Describe();
}

// Every option of the CLI contract's `gander run` synopsis is accepted after `run`, and even
// the most verbose logging keeps stdout clean.
TEST_P(LifecycleTest, RunAcceptsContractOptions) {
  const std::vector<Argv> option_sets = {
      {"--profile", "default"}, {"--name", "escape-suite"}, {"--require", "full"},
      {"--log-level", "debug"}, {"--log-level", "trace"},
  };
  for (const Argv& opts : option_sets) {
    RunResult r = Gander(opts, {"/bin/sh", "-c", "exit 0"}, w().ws);
    EXPECT_EQ(r.status, 0) << Context(r);
    EXPECT_EQ(r.out, "") << Context(r);
  }
  // The global position of --log-level, where the launcher's help shows it.
  Argv argv = AsUser(who_);
  for (const std::string& a :
       {w().gander.string(), std::string("--log-level"), std::string("trace"), std::string("run"),
        std::string("--collector"), std::string("off"),  // no collector left behind
        std::string("--workspace"), w().ws.string(), std::string("--"), std::string("/bin/true")})
    argv.push_back(a);
  RunResult r = RunCommand(argv, Opts(w().ws));
  EXPECT_EQ(r.status, 0) << Quote(argv) << "\n" << r.Describe();
  EXPECT_EQ(r.out, "") << Quote(argv) << "\n" << r.Describe();
}

INSTANTIATE_TEST_SUITE_P(Escape, LifecycleTest, ::testing::Values(Who::kCurrent, Who::kNobody),
                         WhoParamName);

// What the kernel offers, for the log, and checked: what `gander doctor --json` reports (the
// basis of its isolation level and of every skip in this suite) agrees with this test's own
// probes of the same features.
TEST(KernelFeatures, Report) {
  const bool seccomp = SeccompAvailable();
  const int landlock = LandlockAbi();
  const bool userns = CanCreateUserNamespace(Who::kCurrent);
  std::cout << "seccomp: " << (seccomp ? "yes" : "no") << "\n"
            << "landlock ABI: " << landlock << "\n"
            << "user namespace as current user: " << (userns ? "yes" : "no") << "\n";
  if (geteuid() == 0) {
    std::cout << "user namespace as uid 65534: "
              << (CanCreateUserNamespace(Who::kNobody) ? "yes" : "no") << "\n";
  }
  if (access(kGanderBuilt, X_OK) != 0) {
    if (getenv("CI") && std::string(getenv("CI")) == "true") FAIL() << kGanderBuilt << " missing";
    GTEST_SKIP() << kGanderBuilt << " is not built";
  }
  RunResult d = RunCommand({kGanderBuilt, "doctor", "--json"}, RunOptions{});
  std::cout << "gander doctor --json (status " << d.status << "):\n" << d.out << d.err;
  // A flat object: read the few fields by hand (this binary links no JSON library).
  auto field = [&](const std::string& key) -> std::string {
    auto at = d.out.find("\"" + key + "\": ");
    if (at == std::string::npos) return "(missing)";
    at += key.size() + 4;
    auto end = d.out.find_first_of(",\n}", at);
    std::string v = d.out.substr(at, end - at);
    if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
    return v;
  };
  EXPECT_EQ(field("seccomp_filter"), seccomp ? "true" : "false") << d.out;
  EXPECT_EQ(field("landlock_abi"), std::to_string(landlock)) << d.out;
  EXPECT_EQ(field("user_namespaces"), userns ? "true" : "false") << d.out;
  EXPECT_EQ(field("uid"), std::to_string(geteuid())) << d.out;
  // The level follows from the features: all three give the full sandbox.
  if (seccomp && landlock > 0 && userns) {
    EXPECT_EQ(field("isolation_level"), "full") << d.out;
  }
  if (!userns) {
    EXPECT_NE(field("isolation_level"), "full") << d.out;
  }
}

}  // namespace
