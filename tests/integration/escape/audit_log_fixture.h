// What the audit-log suites share (audit_log_test.cc, audit_race_test.cc): reading an audit log
// and checking it against the schema, the expectations a file or denial event is held to, and
// the fixtures that run gander with --audit-log. Functions are `inline`, in a named namespace.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "escape_attempts.h"

namespace gander::escape_suite {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Reading and checking an audit log

inline bool IsWithinDir(const std::string& path, const std::string& dir) {
  return path.size() >= dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

// A JSON string member, "<null>" when null, "<missing>" when absent or not a string.
inline std::string Str(const json& o, const char* key) {
  if (!o.is_object() || !o.contains(key)) return "<missing>";
  const json& v = o.at(key);
  if (v.is_null()) return "<null>";
  return v.is_string() ? v.get<std::string>() : "<not a string>";
}

// An integer member, or nullopt when null, absent or not an integer.
inline std::optional<int64_t> Int(const json& o, const char* key) {
  if (!o.is_object() || !o.contains(key) || !o.at(key).is_number_integer()) return std::nullopt;
  return o.at(key).get<int64_t>();
}

struct AuditLog {
  fs::path path;
  bool exists = false;
  std::vector<std::string> raw;  // every line, as written
  std::vector<json> events;      // the lines that parsed
  std::vector<std::string> bad;  // the lines that did not

  std::vector<const json*> Kind(const std::string& kind) const {
    std::vector<const json*> out;
    for (const auto& e : events) {
      if (Str(e, "kind") == kind) out.push_back(&e);
    }
    return out;
  }
  std::vector<const json*> Files() const { return Kind("file"); }
  std::vector<const json*> SyscallsWith(const std::string& action) const {
    std::vector<const json*> out;
    for (const json* e : Kind("syscall")) {
      if (Str(e->at("syscall"), "action") == action) out.push_back(e);
    }
    return out;
  }
  // Census counts by syscall name.
  std::map<std::string, int64_t> Counted() const {
    std::map<std::string, int64_t> out;
    for (const json* e : SyscallsWith("counted")) {
      out[Str(e->at("syscall"), "name")] += Int(e->at("syscall"), "count").value_or(0);
    }
    return out;
  }
  std::vector<std::string> Lifecycle(const std::string& what) const {
    std::vector<std::string> out;
    for (const json* e : Kind("lifecycle")) {
      if (Str(e->at("lifecycle"), "what") == what) out.push_back(Str(e->at("lifecycle"), "detail"));
    }
    return out;
  }
  // The exec event of `program` (the first), or null.
  const json* Exec(const std::string& program) const {
    for (const json* e : Kind("process")) {
      const json& p = e->at("process");
      if (Str(p, "action") == "exec" && Str(p, "path") == program) return e;
    }
    return nullptr;
  }
  // The extension's exit: the last exit event (the launcher writes it after everything the
  // monitor recorded, the exits of the extension's children included).
  const json* Exit() const {
    const json* last = nullptr;
    for (const json* e : Kind("process")) {
      if (Str(e->at("process"), "action") == "exit") last = e;
    }
    return last;
  }
  std::vector<const json*> Exits() const {
    std::vector<const json*> out;
    for (const json* e : Kind("process")) {
      if (Str(e->at("process"), "action") == "exit") out.push_back(e);
    }
    return out;
  }

  // The log for a failure message: all of it when short, else the head and the tail.
  std::string Dump() const {
    std::ostringstream s;
    s << "--- audit log " << path.string() << " (" << raw.size() << " lines"
      << (exists ? "" : ", FILE MISSING") << ") ---\n";
    constexpr size_t kHead = 60, kTail = 20;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw.size() > kHead + kTail && i == kHead) {
        s << "... " << raw.size() - kHead - kTail << " lines left out ...\n";
        i = raw.size() - kTail;
      }
      s << raw[i] << "\n";
    }
    s << "--- end of audit log ---";
    return s.str();
  }
};

inline AuditLog ReadAuditLog(const fs::path& path) {
  AuditLog log;
  log.path = path;
  std::ifstream in(path);
  log.exists = static_cast<bool>(in);
  for (std::string line; std::getline(in, line);) {
    log.raw.push_back(line);
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      log.bad.push_back(line);
    } else {
      log.events.push_back(std::move(j));
    }
  }
  return log;
}

// One line against docs/audit-log.md, schema version 1; returns what is wrong, "" when fine.
inline std::string SchemaProblems(const json& e) {
  std::vector<std::string> p;
  auto is_str_or_null = [&](const json& o, const char* k) {
    return o.contains(k) && (o.at(k).is_string() || o.at(k).is_null());
  };
  auto is_int_or_null = [&](const json& o, const char* k) {
    return o.contains(k) && (o.at(k).is_number_integer() || o.at(k).is_null());
  };
  auto one_of = [&](const json& o, const char* k, std::set<std::string> values) {
    return o.contains(k) && o.at(k).is_string() && values.count(o.at(k).get<std::string>()) > 0;
  };
  auto errno_pair = [&](const json& o, const std::string& where) {
    if (!o.contains("errno") || !o.at("errno").is_number_integer()) {
      p.push_back(where + ".errno is not an integer");
      return;
    }
    if (!is_str_or_null(o, "errno_name")) p.push_back(where + ".errno_name is not string/null");
    bool zero = o.at("errno").get<int64_t>() == 0;
    if (zero != o.at("errno_name").is_null())
      p.push_back(where + ": errno_name must be null exactly when errno is 0");
  };
  static const std::regex kTime(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$)");
  if (Int(e, "v") != 1) p.push_back("v is not 1");
  if (!e.contains("time") || !e.at("time").is_string() ||
      !std::regex_match(e.at("time").get<std::string>(), kTime)) {
    p.push_back("time is not RFC 3339 UTC with microseconds");
  }
  if (!one_of(e, "kind",
              {"file", "network", "syscall", "process", "lifecycle", "tool", "redaction"})) {
    p.push_back("unknown kind");
  } else if (!e.at(Str(e, "kind")).is_object()) {
    p.push_back("no object named after the kind");
  }
  if (!e.contains("extension") || !e.at("extension").is_string()) p.push_back("extension");
  if (!is_int_or_null(e, "pid")) p.push_back("pid is not integer/null");
  if (!is_int_or_null(e, "sandbox_pid")) p.push_back("sandbox_pid is not integer/null");
  if (!is_str_or_null(e, "exe")) p.push_back("exe is not string/null");
  if (!e.contains("tool_call") || !e.at("tool_call").is_object() ||
      !one_of(e.at("tool_call"), "state", {"startup", "idle", "one", "concurrent"}) ||
      !is_str_or_null(e.at("tool_call"), "tool") ||
      !is_str_or_null(e.at("tool_call"), "request_id")) {
    p.push_back("tool_call");
  }
  std::string kind = Str(e, "kind");
  if (p.empty() && kind == "file") {
    const json& f = e.at("file");
    if (!f.contains("syscall") || !f.at("syscall").is_string()) p.push_back("file.syscall");
    if (!f.contains("raw_path") || !f.at("raw_path").is_string()) p.push_back("file.raw_path");
    if (!f.contains("raw_path_truncated") || !f.at("raw_path_truncated").is_boolean())
      p.push_back("file.raw_path_truncated");
    if (!is_str_or_null(f, "path")) p.push_back("file.path");
    if (!one_of(f, "class",
                {"workspace", "private", "allowed_write", "allowed_read_only", "system", "outside",
                 "denied", "unknown"}))
      p.push_back("file.class");
    if (!one_of(f, "access",
                {"read", "write", "exec", "create", "delete", "rename", "chmod", "stat", "other"}))
      p.push_back("file.access");
    if (!one_of(f, "result", {"allowed", "denied", "would_deny"})) p.push_back("file.result");
    errno_pair(f, "file");
  } else if (p.empty() && kind == "syscall") {
    const json& s = e.at("syscall");
    if (!is_str_or_null(s, "name")) p.push_back("syscall.name");
    if (!Int(s, "nr")) p.push_back("syscall.nr");
    if (!one_of(s, "action", {"denied", "counted"})) p.push_back("syscall.action");
    if (Int(s, "count").value_or(0) < 1) p.push_back("syscall.count is not >= 1");
    errno_pair(s, "syscall");
  } else if (p.empty() && kind == "process") {
    const json& pr = e.at("process");
    if (!one_of(pr, "action", {"exec", "exit"})) p.push_back("process.action");
    if (!is_str_or_null(pr, "path")) p.push_back("process.path");
    if (!pr.contains("argv") || !pr.at("argv").is_array()) {
      p.push_back("process.argv");
    } else {
      for (const auto& a : pr.at("argv")) {
        if (!a.is_string()) p.push_back("process.argv entry");
      }
    }
    if (!pr.contains("argv_truncated") || !pr.at("argv_truncated").is_boolean())
      p.push_back("process.argv_truncated");
    if (!is_int_or_null(pr, "exit_code")) p.push_back("process.exit_code");
    if (!is_int_or_null(pr, "signal")) p.push_back("process.signal");
    errno_pair(pr, "process");
  } else if (p.empty() && kind == "lifecycle") {
    const json& l = e.at("lifecycle");
    if (!one_of(l, "what",
                {"start", "stop", "events_dropped", "relay", "restart", "secret", "install"}))
      p.push_back("lifecycle.what");
    if (!l.contains("detail") || !l.at("detail").is_string()) p.push_back("lifecycle.detail");
  }
  std::string out;
  for (const auto& s : p) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// The whole log: every line a JSON object of schema 1, one start first, one stop last.
inline void ExpectWellFormed(const AuditLog& log, const std::string& context) {
  ASSERT_TRUE(log.exists) << "no audit log was written\n" << context;
  EXPECT_TRUE(log.bad.empty()) << log.bad.size() << " line(s) are not JSON objects, e.g.\n"
                               << (log.bad.empty() ? "" : log.bad[0]) << "\n"
                               << context;
  int shown = 0;
  for (const auto& e : log.events) {
    std::string problems = SchemaProblems(e);
    if (!problems.empty() && shown++ < 5) {
      ADD_FAILURE() << "schema: " << problems << "\nline: " << e.dump() << "\n" << context;
    }
  }
  ASSERT_FALSE(log.events.empty()) << context;
  EXPECT_EQ(log.Lifecycle("start").size(), 1u) << context;
  EXPECT_EQ(log.Lifecycle("stop").size(), 1u) << context;
  EXPECT_EQ(Str(log.events.front(), "kind"), "lifecycle") << "the first line is the start\n"
                                                          << context;
  EXPECT_EQ(Str(log.events.back(), "kind"), "lifecycle") << "the last line is the stop\n"
                                                         << context;
}

inline const std::map<std::string, int>& ErrnoNumbers() {
  static const std::map<std::string, int> kErrnos = {{"EPERM", EPERM},
                                                     {"EACCES", EACCES},
                                                     {"EAFNOSUPPORT", EAFNOSUPPORT},
                                                     {"ENOSYS", ENOSYS},
                                                     {"ENOENT", ENOENT}};
  return kErrnos;
}

// x86_64 numbers of the syscalls the cases expect, to check `nr`.
inline const std::map<std::string, long>& SyscallNumbers() {
  static const std::map<std::string, long> kNumbers = {
      {"ptrace", SYS_ptrace},
      {"process_vm_readv", SYS_process_vm_readv},
      {"process_vm_writev", SYS_process_vm_writev},
      {"mount", SYS_mount},
      {"umount2", SYS_umount2},
      {"chroot", SYS_chroot},
      {"setns", SYS_setns},
      {"unshare", SYS_unshare},
      {"clone", SYS_clone},
      {"bpf", SYS_bpf},
      {"perf_event_open", SYS_perf_event_open},
      {"keyctl", SYS_keyctl},
      {"add_key", SYS_add_key},
      {"name_to_handle_at", SYS_name_to_handle_at},
      {"open_by_handle_at", SYS_open_by_handle_at},
      {"ioctl", SYS_ioctl},
      {"openat", SYS_openat},
      {"execve", SYS_execve},
#ifdef SYS_io_uring_setup
      {"io_uring_setup", SYS_io_uring_setup},
#endif
#ifdef SYS_fsopen
      {"fsopen", SYS_fsopen},
#endif
#ifdef SYS_open_tree
      {"open_tree", SYS_open_tree},
#endif
  };
  return kNumbers;
}

inline const std::set<std::string> kOpenSyscalls = {"open", "openat", "openat2", "creat"};

// ---------------------------------------------------------------------------------------------
// What each attempt of the suite must leave in the log
struct FileExpect {
  std::string path;                  // the resolved path ({HOME}, {WS}, ... expanded)
  std::optional<std::string> cls{};  // nullopt: not asserted (see the case's note)
  std::string access{};
  std::optional<std::string> result = "denied";
  std::string raw{};  // the raw path, when it differs from `path`
};

struct DenialExpect {
  std::string name;
  std::string errno_name = "EPERM";
  bool in_main = true;  // made by the probe's main process (else by a child it forked)
  int at_least = 1;
};

// ---------------------------------------------------------------------------------------------
// Fixture

// A probe attempt whose path reaches the key by a detour (dirfd, magic link).
struct Trick {
  Argv attempt;
  std::string raw;  // the raw path expected in the log; "" when the probe builds it at run time
};

class AuditFixture : public SandboxTest {
 protected:
  struct LoggedRun {
    RunResult result;
    AuditLog log;
    std::string context;
  };

  // The probe under `gander run --require full --audit-log FILE [flags]`, FILE fresh. With
  // stdin on /dev/null gander ends the extension about a second after the EOF; hold_stdin keeps
  // a pipe open instead, for probes that run longer.
  LoggedRun Logged(const Argv& flags, const Argv& attempt, int leak_fd = -1,
                   bool stderr_tty = false, bool hold_stdin = false) {
    fs::path file = w().data / ("audit-" + std::to_string(++runs_) + ".jsonl");
    Argv all = kFullFlags;
    all.push_back("--audit-log");
    all.push_back(file.string());
    for (const auto& f : flags) all.push_back(f);
    LoggedRun run;
    if (hold_stdin) {
      RunOptions o = Opts(w().ws);
      o.leak_fd = leak_fd;
      o.stderr_tty = stderr_tty;
      o.pipe_stdin = true;
      Argv argv = GanderArgv(all, ProbeCommand(attempt), w().ws);
      last_command_ = Quote(argv);
      Child child(argv, o);
      run.result = child.Wait(o.timeout_s);
    } else {
      run.result = Gander(all, ProbeCommand(attempt), w().ws, leak_fd, stderr_tty);
    }
    run.log = ReadAuditLog(file);
    run.context = Context(run.result) + "\n" + run.log.Dump();
    if (getenv("GANDER_TEST_VERBOSE")) std::cout << run.context << "\n";
    ExpectWellFormed(run.log, run.context);
    return run;
  }

  std::string Probe() const { return world_->probe.string(); }

  // The probe's exec event, checked: path and argv as given; returns its pid (0 when none).
  int64_t ExpectProbeExec(const LoggedRun& run, const Argv& attempt) {
    const json* exec = run.log.Exec(Probe());
    EXPECT_NE(exec, nullptr) << "no process exec event for the probe\n" << run.context;
    if (!exec) return 0;
    Argv want = ProbeCommand(attempt);
    Argv argv;
    for (const auto& a : exec->at("process").at("argv")) argv.push_back(a.get<std::string>());
    EXPECT_EQ(argv, want) << "exec argv\n" << run.context;
    int64_t pid = Int(*exec, "pid").value_or(0);
    EXPECT_GT(pid, 0) << run.context;
    return pid;
  }

  // The exit event matches gander's status (exit code, or 128 + signal).
  void ExpectExit(const LoggedRun& run) {
    const json* exit = run.log.Exit();
    ASSERT_NE(exit, nullptr) << "no process exit event\n" << run.context;
    const json& p = exit->at("process");
    EXPECT_EQ(Str(p, "path"), Probe()) << run.context;
    int status = run.result.status;
    if (status > 128) {
      EXPECT_EQ(Int(p, "signal"), status - 128) << run.context;
      EXPECT_TRUE(p.at("exit_code").is_null()) << run.context;
    } else {
      EXPECT_EQ(Int(p, "exit_code"), status) << run.context;
      EXPECT_TRUE(p.at("signal").is_null()) << run.context;
    }
    EXPECT_EQ(run.log.Lifecycle("stop").size(), 1u) << run.context;
  }

  // Events the probe made (exe = the probe).
  std::vector<const json*> FromProbe(const std::vector<const json*>& events) const {
    std::vector<const json*> out;
    for (const json* e : events) {
      if (Str(*e, "exe") == Probe()) out.push_back(e);
    }
    return out;
  }

  // Finds the file event for `want`; checks class, access, result, syscall and process.
  void ExpectFileEvent(const LoggedRun& run, const FileExpect& want, int64_t main_pid) {
    std::string path = w().Expand(want.path);
    std::string raw = want.raw.empty() ? path : w().Expand(want.raw);
    const json* found = nullptr;
    for (const json* e : run.log.Files()) {
      const json& f = e->at("file");
      if (Str(f, "path") == path && Str(f, "raw_path") == raw && Str(f, "access") == want.access &&
          kOpenSyscalls.count(Str(f, "syscall"))) {
        found = e;
        break;
      }
    }
    ASSERT_NE(found, nullptr) << "no file event (open family) with path " << path << ", raw_path "
                              << raw << ", access " << want.access << "\n"
                              << run.context;
    const json& f = found->at("file");
    if (want.cls) {
      EXPECT_EQ(Str(f, "class"), *want.cls) << found->dump() << "\n" << run.context;
    }
    if (want.result) {
      EXPECT_EQ(Str(f, "result"), *want.result) << found->dump() << "\n" << run.context;
    }
    EXPECT_EQ(Str(*found, "exe"), Probe()) << found->dump() << "\n" << run.context;
    EXPECT_EQ(Int(*found, "pid").value_or(-1), main_pid)
        << "the pid must name the probe (its exec event's pid)\n"
        << found->dump() << "\n"
        << run.context;
  }

  // Finds the denial events for `want`; checks errno, nr and process.
  void ExpectDenial(const LoggedRun& run, const DenialExpect& want, int64_t main_pid) {
    int matched = 0;
    for (const json* e : run.log.SyscallsWith("denied")) {
      const json& s = e->at("syscall");
      if (Str(s, "name") != want.name) continue;
      ++matched;
      SCOPED_TRACE(e->dump());
      EXPECT_EQ(Str(s, "errno_name"), want.errno_name) << run.context;
      EXPECT_EQ(Int(s, "errno"), ErrnoNumbers().at(want.errno_name)) << run.context;
      if (auto nr = SyscallNumbers().find(want.name); nr != SyscallNumbers().end()) {
        EXPECT_EQ(Int(s, "nr"), nr->second) << run.context;
      }
      EXPECT_EQ(Int(s, "count"), 1) << run.context;
      EXPECT_EQ(Str(*e, "exe"), Probe()) << run.context;
      int64_t pid = Int(*e, "pid").value_or(-1);
      EXPECT_GT(pid, 0) << run.context;
      if (want.in_main) {
        EXPECT_EQ(pid, main_pid) << "made by the probe itself\n" << run.context;
      } else {
        EXPECT_NE(pid, main_pid) << "made by a child the probe forked\n" << run.context;
      }
    }
    EXPECT_GE(matched, want.at_least) << "denial events for " << want.name << "\n" << run.context;
  }

  // A path that reaches the planted key by a detour: logged once, as the key.
  void ExpectResolvesToKey(const Trick& t);

  int runs_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The fixture of the audit tests that run once per user (audit_log_test.cc, audit_race_test.cc)

class AuditTest : public AuditFixture, public ::testing::TestWithParam<Who> {
 protected:
  void SetUp() override {
    if (std::string why = PrepareIn(GetParam(), SandboxMode::kNamespaces); !why.empty())
      GTEST_SKIP() << why;
  }

  // All file events for `path` (resolved), any syscall.
  static std::vector<const json*> FilesFor(const LoggedRun& run, const std::string& path) {
    std::vector<const json*> out;
    for (const json* e : run.log.Files()) {
      if (Str(e->at("file"), "path") == path) out.push_back(e);
    }
    return out;
  }
};

// The resolution tricks of the issue, live (the unit tests cover them with a fake /proc): the
// key reached through a dirfd, through /proc/self/fd/N/.., through /proc/self/root and through
// /proc/self/cwd/.. must each be logged as the key, class denied.
inline void AuditFixture::ExpectResolvesToKey(const Trick& t) {
  const std::string key = (w().home / ".ssh" / "id_rsa").string();
  SCOPED_TRACE(Quote(t.attempt));
  LoggedRun run = Logged({}, t.attempt);
  EXPECT_EQ(run.result.status, 1) << run.context;
  int64_t pid = ExpectProbeExec(run, t.attempt);
  std::vector<const json*> events;
  for (const json* e : run.log.Files()) {
    if (Str(e->at("file"), "path") == key) events.push_back(e);
  }
  ASSERT_EQ(events.size(), 1u) << "one file event resolved to " << key << "\n" << run.context;
  const json& f = events[0]->at("file");
  EXPECT_EQ(Str(f, "class"), "denied") << run.context;
  EXPECT_EQ(Str(f, "result"), "denied") << run.context;
  EXPECT_EQ(Str(f, "access"), "read") << run.context;
  if (!t.raw.empty()) {
    EXPECT_EQ(Str(f, "raw_path"), w().Expand(t.raw)) << run.context;
  }
  EXPECT_EQ(Str(*events[0], "exe"), Probe()) << run.context;
  EXPECT_EQ(Int(*events[0], "pid").value_or(-1), pid) << run.context;
}

}  // namespace gander::escape_suite
