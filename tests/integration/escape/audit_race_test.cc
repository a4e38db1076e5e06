// The path-swap race in the audit log: one thread of gander_probe rewrites the path buffer while
// another opens it. The key is never read, and the log holds what the monitor read, each path
// with its own class. Same users and fixtures as audit_log_test.cc (audit_log_fixture.h).
#include "audit_log_fixture.h"

namespace {

using namespace gander::escape_suite;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// The path-swap race

// What the default profile makes of a path of this world (for the race's torn paths, which
// mix the two paths' bytes): ~/.ssh denied, the workspace, the private $HOME, else outside.
std::string ExpectedClass(const World& w, const std::string& path) {
  if (IsWithinDir(path, (w.home / ".ssh").string())) return "denied";
  if (IsWithinDir(path, w.ws.string())) return "workspace";
  if (IsWithinDir(path, w.home.string())) return "private";
  if (IsWithinDir(path, w.root.string())) return "outside";
  return "?";
}

struct RaceReport {
  long opens = -1, read_a = -1, read_other = -1, failed = -1;
};

RaceReport ParseRace(const std::string& err) {
  RaceReport r;
  static const std::regex kLine(
      R"(probe: race: (\d+) opens, \d+ swaps: (\d+) read A, (\d+) read another file, )"
      R"((\d+) failed)");
  std::smatch m;
  if (std::regex_search(err, m, kLine)) {
    r.opens = std::stol(m[1].str());
    r.read_a = std::stol(m[2].str());
    r.read_other = std::stol(m[3].str());
    r.failed = std::stol(m[4].str());
  }
  return r;
}

class AuditRaceTest : public AuditTest {
 protected:
  // The race under gander; checks the outcome (the key is never read) and the log (each path
  // the monitor read with its own class, raw path = resolved path); returns the run.
  LoggedRun RaceUnderGander(const Argv& flags, const std::string& min_opens) {
    const Argv attempt = {"race", "{WS}/plain", "{HOME}/.ssh/id_rsa", min_opens, "4000"};
    LoggedRun run = Logged(flags, attempt, -1, false, /*hold_stdin=*/true);
    const bool learn = std::find(flags.begin(), flags.end(), "learn") != flags.end();
    RaceReport rep = ParseRace(run.result.err);
    // The probe stops at MIN_OPENS or at its time cap, whichever comes later but never past
    // the cap: on a loaded machine fewer opens are made, which changes no verdict below.
    EXPECT_GT(rep.opens, 0) << "the probe did not report its race\n" << run.context;
    // Enforcement: not one open returned the key's bytes.
    EXPECT_EQ(run.result.status, 1) << "0 = the race read another file than the workspace's\n"
                                    << run.context;
    EXPECT_EQ(rep.read_other, 0) << run.context;
    EXPECT_EQ(run.result.err.find("PRIVATE KEY"), std::string::npos) << run.context;
    EXPECT_GT(rep.read_a, 0) << "the workspace file must stay readable during the race\n"
                             << run.context;
    int64_t pid = ExpectProbeExec(run, attempt);
    ExpectExit(run);
    // The log: every open the monitor saw names what it read, classified on its own.
    int shown = 0;
    for (const json* e : run.log.Files()) {
      const json& f = e->at("file");
      std::string path = Str(f, "path");
      // The race's paths (and every torn mix of them) lie in the world's data directory; the
      // probe's start-up files (learn mode) do not.
      if (Str(f, "syscall") != "openat" || !IsWithinDir(path, w().data.string())) continue;
      // Learn mode shows the host's files and the real home, denied paths aside: what the
      // policy would refuse there (outside, the real home's files) is would_deny.
      const std::string cls = Str(f, "class");
      const char* want = cls == "denied" ? "denied"
                         : cls == "outside" || (learn && cls == "private")
                             ? (learn ? "would_deny" : "denied")
                             : "allowed";
      bool ok = Str(f, "raw_path") == path && cls == ExpectedClass(w(), path) &&
                Str(f, "result") == want && Str(*e, "exe") == Probe() && Int(*e, "pid") == pid;
      if (!ok && shown++ < 5) {
        ADD_FAILURE() << "race event: want raw_path = path, class " << ExpectedClass(w(), path)
                      << ", the probe's pid " << pid << "\n"
                      << e->dump();
      }
    }
    // The monitor saw every open (the census counts each notification).
    EXPECT_GE(run.log.Counted()["openat"], rep.opens) << run.context;
    std::cout << "[ race ] " << rep.opens << " opens: " << rep.read_a << " read the workspace "
              << "file, " << rep.read_other << " another file, " << rep.failed << " failed; "
              << run.log.Files().size() << " file events, "
              << run.log.Lifecycle("events_dropped").size() << " drop notices\n";
    race_ = rep;
    return run;
  }

  int64_t EventsFor(const LoggedRun& run, const std::string& path, const std::string& cls) {
    int64_t n = 0;
    for (const json* e : FilesFor(run, path)) n += Str(e->at("file"), "class") == cls;
    return n;
  }

  // The same race without gander must read the key (else the race proves nothing).
  void CheckRaceControl() {
    RunResult direct = Direct({}, {"race", "{WS}/plain", "{HOME}/.ssh/id_rsa", "20000", "4000"});
    RaceReport rep = ParseRace(direct.err);
    if (direct.status != 0 || rep.read_other <= 0) {
      const char* ci = std::getenv("CI");
      if (ci && std::string(ci) == "true") {
        FAIL() << "inconclusive: unsandboxed, the race never opened the key\n" << direct.Describe();
      }
      GTEST_SKIP() << "inconclusive: unsandboxed, the race never opened the key\n"
                   << direct.Describe();
    }
  }

  // Runs the race under gander until it was exercised: at least 100 opens that failed (the key,
  // or a torn path) and, when `need_reads`, 100 that read the workspace file; the opens are
  // quadrupled each time (3 tries). Returns false, with the figures, when it never got there:
  // the caller then fails under CI=true and skips (with the reason) elsewhere, never passes.
  bool Exercised(bool need_reads) const {
    return race_.failed >= 100 && (!need_reads || race_.read_a >= 100);
  }
  LoggedRun ExercisedRace(const Argv& flags, long first_opens, bool need_reads) {
    for (long opens = first_opens;; opens *= 4) {
      LoggedRun run = RaceUnderGander(flags, std::to_string(opens));
      if (Exercised(need_reads) || opens >= first_opens * 16) return run;
    }
  }
  // Fails under CI=true, else skips: the race did not get far enough to show anything.
  void RequireExercised(bool need_reads) {
    if (Exercised(need_reads)) return;
    std::string why = "the race was not exercised: " + std::to_string(race_.failed) +
                      " failed opens, " + std::to_string(race_.read_a) +
                      " reads of the workspace file (100 of each needed)";
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL() << why;
    GTEST_SKIP() << why;
  }

  RaceReport race_;
};

// Enforce mode: the key is never read; its path is logged as denied whenever the monitor read
// it; the workspace path, no news in enforce mode, never is.
TEST_P(AuditRaceTest, PathSwapRaceNeverReadsTheKey) {
  CheckRaceControl();  // first: unsandboxed, the same race reads the key
  if (IsSkipped() || HasFailure()) return;
  LoggedRun run = ExercisedRace({}, 20000, /*need_reads=*/false);
  const std::string key = (w().home / ".ssh" / "id_rsa").string();
  const std::string plain = (w().ws / "plain").string();
  EXPECT_EQ(EventsFor(run, plain, "workspace"), 0) << "a workspace open is no news\n"
                                                   << run.context;
  RequireExercised(/*need_reads=*/false);
  if (IsSkipped() || HasFailure()) return;
  // Hundreds of failed opens were the key (or a torn path): the monitor read the key's path
  // for some of them.
  EXPECT_GE(EventsFor(run, key, "denied"), 1) << run.context;
}

// Learn mode: both paths appear, each with its class (the workspace file allowed, the key
// denied).
TEST_P(AuditRaceTest, PathSwapRaceLogsBothPathsInLearnMode) {
  CheckRaceControl();  // the control: unsandboxed, the same race reads the key
  if (IsSkipped() || HasFailure()) return;
  LoggedRun run = ExercisedRace({"--mode", "learn"}, 5000, /*need_reads=*/true);
  const std::string key = (w().home / ".ssh" / "id_rsa").string();
  const std::string plain = (w().ws / "plain").string();
  bool dropped = !run.log.Lifecycle("events_dropped").empty();
  RequireExercised(/*need_reads=*/true);
  if (IsSkipped() || HasFailure()) return;
  // The probe opens the workspace file once before the race (to learn its content): that is
  // one event; hundreds of successful opens during the race must add more.
  EXPECT_GE(EventsFor(run, plain, "workspace"), 2)
      << (dropped ? "(events were dropped)\n" : "") << run.context;
  EXPECT_GE(EventsFor(run, key, "denied"), 1)
      << (dropped ? "(events were dropped)\n" : "") << run.context;
  // Learn mode logs every open: one event per open of the race, plus the probe's first.
  if (!dropped) {
    EXPECT_GE(static_cast<long>(run.log.Files().size()), race_.opens + 1) << run.context;
  }
}

INSTANTIATE_TEST_SUITE_P(Audit, AuditRaceTest, ::testing::Values(Who::kCurrent, Who::kNobody),
                         WhoParamName);

}  // namespace
