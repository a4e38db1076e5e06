// The audit log, end to end: every escape attempt of the suite, made by gander_probe under
// `gander run --audit-log FILE`, must leave the matching line in FILE (docs/audit-log.md):
//   - a file attempt: a `file` event with the resolved path, its class (`denied` under a deny
//     rule such as ~/.ssh, `outside` for what the sandbox does not show, ...), the access, the
//     result, and pid/exe naming the probe;
//   - a refused syscall: a `syscall` event, action `denied`, with the name, the errno and the
//     probe as exe, written while the extension runs.
// Where an attempt cannot appear as such, the case says why and asserts what does appear
// (e.g. a foreign-ABI call is killed by the filter before any notification: only the exit
// event with signal 31 shows it).
//
// Also here: noise stays out of the enforce-mode log and `--mode learn` logs every file event
// and counts every syscall; `--files off|all`; the live magic-link and dirfd resolution; and
// the path-swap race (one thread rewrites the path buffer while another opens it: the key is
// never read, and the log holds what the monitor read, each path with its own class).
//
// Same users as the escape suite (current user, and uid 65534 when run as root), same world
// (escape_fixture.h). Every log read here is also checked against the schema.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "escape_fixture.h"

namespace {

using namespace gander::escape_suite;  // NOLINT(google-build-using-namespace)
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Reading and checking an audit log

bool IsWithinDir(const std::string& path, const std::string& dir) {
  return path.size() >= dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

// A JSON string member, "<null>" when null, "<missing>" when absent or not a string.
std::string Str(const json& o, const char* key) {
  if (!o.is_object() || !o.contains(key)) return "<missing>";
  const json& v = o.at(key);
  if (v.is_null()) return "<null>";
  return v.is_string() ? v.get<std::string>() : "<not a string>";
}

// An integer member, or nullopt when null, absent or not an integer.
std::optional<int64_t> Int(const json& o, const char* key) {
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

AuditLog ReadAuditLog(const fs::path& path) {
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
std::string SchemaProblems(const json& e) {
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
void ExpectWellFormed(const AuditLog& log, const std::string& context) {
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

const std::map<std::string, int>& ErrnoNumbers() {
  static const std::map<std::string, int> kErrnos = {{"EPERM", EPERM},
                                                     {"EACCES", EACCES},
                                                     {"EAFNOSUPPORT", EAFNOSUPPORT},
                                                     {"ENOSYS", ENOSYS},
                                                     {"ENOENT", ENOENT}};
  return kErrnos;
}

// x86_64 numbers of the syscalls the cases expect, to check `nr`.
const std::map<std::string, long>& SyscallNumbers() {
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

const std::set<std::string> kOpenSyscalls = {"open", "openat", "openat2", "creat"};

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

struct AuditCase {
  const char* attempt;
  std::vector<FileExpect> files{};
  std::vector<DenialExpect> denials{};
  int exit_signal = 0;    // the probe is killed by this signal
  Argv flags{};           // extra `gander run` flags (--mode learn where only learn shows it)
  const char* note = "";  // why the attempt does not appear as such; printed with the result
};

// clang-format off
const std::vector<AuditCase>& AuditCases() {
  constexpr const char* kLearn = "--mode";
  static const std::vector<AuditCase> kCases = {
      {.attempt = "read_ssh_key", .files = {{"{HOME}/.ssh/id_rsa", "denied", "read"}}},
      {.attempt = "list_ssh_dir", .files = {{"{HOME}/.ssh", "denied", "read"}}},
      {.attempt = "read_aws_credentials", .files = {{"{HOME}/.aws/credentials", "denied", "read"}}},
      {.attempt = "read_goose_secrets",
       .files = {{"{HOME}/.config/goose/secrets.yaml", "denied", "read"}}},
      // A symlink in the workspace is followed one step in the sandbox's view (through
      // /proc/PID/root), so the event names what the link reaches; raw_path keeps the link.
      {.attempt = "read_key_via_workspace_symlink",
       .files = {{"{HOME}/.ssh/id_rsa", "denied", "read", "denied", "{WS}/key-link"}}},
      {.attempt = "read_outside_via_workspace_symlink",
       .files = {{"{OUT}/host-secret", "outside", "read", "denied", "{WS}/outside-link"}}},
      {.attempt = "read_outside_workspace", .files = {{"{OUT}/host-secret", "outside", "read"}}},
      // Every process of the sandbox shares one root: /proc/1/root/X is X.
      {.attempt = "read_key_via_proc1_root",
       .files = {{"{HOME}/.ssh/id_rsa", "denied", "read", "denied",
                  "/proc/1/root{HOME}/.ssh/id_rsa"}}},
      {.attempt = "read_real_root_home", .files = {{"/root/.profile", "outside", "read"}}},
      // /dev is the sandbox's own (class system, out of the enforce-mode log); the disk is not
      // in it. Shown in --mode learn; its class is not asserted.
      {.attempt = "read_raw_block_device",
       .files = {{"{BLOCKDEV}", std::nullopt, "read", std::nullopt}}, .flags = {kLearn, "learn"},
       .note = "/dev paths class as the sandbox's own /dev: shown only in --mode learn"},
      {.attempt = "write_outside_workspace", .files = {{"{OUT}/escaped", "outside", "create"}}},
      {.attempt = "write_ssh_authorized_keys",
       .files = {{"{HOME}/.ssh/authorized_keys", "denied", "create"}}},
      // The command's directory is a read-only grant: the mount view refuses the write (EROFS).
      {.attempt = "write_into_command_prefix",
       .files = {{"{TOOLS}/planted-by-probe", "allowed_read_only", "create"}}},
      // /dev/shm inside is the sandbox's own tmpfs: the write succeeds there and is no escape
      // (the suite judges it on the host). Shown in --mode learn as the sandbox's own.
      {.attempt = "write_dev_shm",
       .files = {{"/dev/shm/{SHMNAME}", "system", "create", "allowed"}},
       .flags = {kLearn, "learn"},
       .note = "the sandbox's own /dev/shm: shown only in --mode learn"},
      {.attempt = "inherited_fd",
       .note = "no path is opened: the probe looks for open descriptors with fcntl (not "
               "watched); gander closes fd 9 before the extension starts"},
      {.attempt = "env_openai_api_key",
       .note = "the environment is not a file syscall; /proc/PID/environ reads are /proc, the "
               "sandbox's own, out of the enforce-mode log"},
      {.attempt = "tcp_host_loopback",
       .note = "127.0.0.1 not named by the policy, nothing listening on it in the sandbox: "
               "refused (ECONNREFUSED) with a network event, checked by the egress tests"},
      {.attempt = "udp_host_loopback",
       .note = "network events are reserved for the egress broker; the sandbox has its own "
               "network namespace"},
      {.attempt = "udp_remote",
       .note = "a network event (denied, udp, ECONNREFUSED); network lines are checked by the "
               "egress integration test, not this table"},
      {.attempt = "dns_exfil_made_up_name",
       .note = "the stub answers REFUSED without asking anyone; a dns network event"},
      {.attempt = "packet_socket", .denials = {{.name = "socket", .errno_name = "EAFNOSUPPORT"}}},
      {.attempt = "vsock_family_high_bits",
       .denials = {{.name = "socket", .errno_name = "EAFNOSUPPORT"}}},
      {.attempt = "netlink_sees_host_interfaces",
       .note = "netlink is allowed: it sees the sandbox's own namespace (lo only)"},
      {.attempt = "unix_family_high_bits",
       .note = "socket(AF_UNIX | 1 << 32) is allowed with namespaces; the host socket's path is "
               "not in the sandbox's mount view"},
      {.attempt = "connect_family_flip_race",
       .note = "with namespaces 127.0.0.1 is the sandbox's own loopback: refused there"},
      {.attempt = "memfd_execveat",
       .denials = {{.name = "memfd_create", .errno_name = "EACCES"}}},
      {.attempt = "unix_host_socket",
       .note = "connect(2) is not watched (network events are reserved); the socket's path is "
               "not in the sandbox's mount view"},
      {.attempt = "abstract_host_socket",
       .note = "connect(2) is not watched; abstract sockets live in the sandbox's own network "
               "namespace"},
      {.attempt = "signal_host_process",
       .note = "kill(2) is not watched; the host pid does not exist in the sandbox's pid "
               "namespace (ESRCH)"},
      {.attempt = "setns_host_userns",
       .note = "setns is never reached: the host pid is not in the sandbox's /proc, so the "
               "open of /proc/PID/ns/user fails first (a /proc path, the sandbox's own). "
               "SetnsDenialIsLogged makes the call itself"},
      {.attempt = "ptrace",
       .denials = {{.name = "ptrace", .in_main = false, .at_least = 3}}},
      {.attempt = "process_vm",
       .denials = {{.name = "process_vm_readv"}, {.name = "process_vm_writev"}}},
      {.attempt = "forkbomb",
       .note = "fork is allowed; the process limit (EAGAIN from the kernel) is no seccomp "
               "denial"},
      // clone3 is refused with ENOSYS without a report (policies/denied_syscalls.cc: its flags
      // are out of the filter's reach and libc falls back to clone), so the clone3 attempt
      // leaves no line; unshare is made in a forked child.
      {.attempt = "nested_userns",
       .denials = {{.name = "unshare", .in_main = false}, {.name = "clone"}}},
      {.attempt = "mount",
       .denials = {{.name = "mount"}, {.name = "fsopen"}, {.name = "open_tree"}}},
      {.attempt = "umount_home", .denials = {{.name = "umount2"}}},
      {.attempt = "chroot", .denials = {{.name = "chroot", .in_main = false}}},
      {.attempt = "bpf", .denials = {{.name = "bpf", .at_least = 2}}},
      {.attempt = "io_uring", .denials = {{.name = "io_uring_setup"}}},
      {.attempt = "keyctl", .denials = {{.name = "add_key"}, {.name = "keyctl"}}},
      {.attempt = "perf_event_open", .denials = {{.name = "perf_event_open"}}},
      {.attempt = "open_by_handle_at",
       .denials = {{.name = "name_to_handle_at"}, {.name = "open_by_handle_at"}}},
      {.attempt = "tiocsti",
       .note = "gander's stderr is a terminal, but the extension's stderr is a pipe to gander's "
               "relay and the sandbox has no /dev/tty or /dev/ptmx: every try fails before "
               "any ioctl, so nothing reaches the filter"},
      {.attempt = "x32_abi", .exit_signal = SIGSYS,
       .note = "a foreign-ABI call is killed by the filter's bad-arch action, never notified: "
               "only the exit event (signal 31) shows it"},
      {.attempt = "int80_i386_abi", .exit_signal = SIGSYS,
       .note = "a foreign-ABI call is killed by the filter's bad-arch action, never notified: "
               "only the exit event (signal 31) shows it"},
  };
  return kCases;
}
// clang-format on

const AuditCase* FindAuditCase(const std::string& attempt) {
  for (const auto& c : AuditCases()) {
    if (attempt == c.attempt) return &c;
  }
  return nullptr;
}

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
// Every attempt of the escape suite, in the audit log

class AuditEscapeTest : public AuditFixture, public ::testing::TestWithParam<AttemptParam> {
 protected:
  void SetUp() override {
    Who who = std::get<0>(GetParam());
    if (std::string why = Prepare(who); !why.empty()) GTEST_SKIP() << why;
    if (std::string why = MissingForFullSandbox(who); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(AuditEscapeTest, AttemptAppearsInAuditLog) {
  const Attempt& a = FindAttempt(std::get<1>(GetParam()));
  const AuditCase* c = FindAuditCase(a.name);
  ASSERT_NE(c, nullptr) << "the escape suite's attempt " << a.name
                        << " has no case in AuditCases(): say what it must leave in the log";
  if (std::string why = MissingTarget(a, w()); !why.empty()) GTEST_SKIP() << why;
  LoggedRun run =
      Logged(c->flags, a.args, a.leak_fd ? w().leak_fd : -1, a.stderr_tty, a.hold_stdin);
  if (c->exit_signal == SIGSYS && run.result.status == 128 + SIGSEGV &&
      a.name == std::string("int80_i386_abi")) {
    GTEST_SKIP() << "the kernel has no IA32 emulation (int $0x80 faults)\n" << run.context;
  }
  // The attempt failed, as in the escape suite.
  ExpectAttemptFailed(a, w(), run.result, run.context);
  if (*c->note) std::cout << "[ note ] " << a.name << ": " << c->note << "\n";

  int64_t main_pid = ExpectProbeExec(run, a.args);
  ExpectExit(run);
  if (c->exit_signal) {
    EXPECT_EQ(run.result.status, 128 + c->exit_signal) << run.context;
  }
  for (const FileExpect& f : c->files) {
    SCOPED_TRACE("file " + f.path);
    ExpectFileEvent(run, f, main_pid);
  }
  for (const DenialExpect& d : c->denials) {
    SCOPED_TRACE("denial " + d.name);
    ExpectDenial(run, d, main_pid);
  }
  // Nothing else was refused: an unexpected denial would be the filter breaking the probe.
  for (const json* e : run.log.SyscallsWith("denied")) {
    std::string name = Str(e->at("syscall"), "name");
    bool expected = false;
    for (const auto& d : c->denials) expected |= d.name == name;
    EXPECT_TRUE(expected) << "unexpected denial " << e->dump() << "\n" << run.context;
  }
  // In enforce mode, the only file lines are the attempt's own: no noise.
  if (c->flags.empty()) {
    for (const json* e : run.log.Files()) {
      std::string path = Str(e->at("file"), "path");
      bool expected = false;
      for (const auto& f : c->files) expected |= w().Expand(f.path) == path;
      EXPECT_TRUE(expected) << "unexpected file event " << e->dump() << "\n" << run.context;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Audit, AuditEscapeTest,
                         ::testing::Combine(::testing::Values(Who::kCurrent, Who::kNobody),
                                            ::testing::ValuesIn(AttemptNames(false))),
                         AttemptParamName);

// ---------------------------------------------------------------------------------------------
// Further file and denial cases, the modes and the --files levels

class AuditTest : public AuditFixture, public ::testing::TestWithParam<Who> {
 protected:
  void SetUp() override {
    if (std::string why = Prepare(GetParam()); !why.empty()) GTEST_SKIP() << why;
    if (std::string why = MissingForFullSandbox(GetParam()); !why.empty()) GTEST_SKIP() << why;
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

// SandboxBasicsTest.ReadOnlySystemPaths in the log: /etc and /usr are read-only grants, and
// the mount view refuses the write (EROFS).
TEST_P(AuditTest, WritesIntoReadOnlySystemPathsAreLogged) {
  for (const char* target : {"/etc/gander-audit-test", "/usr/gander-audit-test"}) {
    SCOPED_TRACE(target);
    LoggedRun run = Logged({}, {"write", target});
    EXPECT_EQ(run.result.status, 1) << run.context;
    EXPECT_FALSE(fs::exists(target));
    int64_t pid = ExpectProbeExec(run, {"write", target});
    ExpectFileEvent(run, {target, "allowed_read_only", "create", "denied"}, pid);
  }
}

// A workspace path read and written, a granted file read: no file line in enforce mode; each
// one in learn mode, with the census of every syscall. The start line names the accounting.
TEST_P(AuditTest, PositiveControlsStayOutOfEnforceLogAndAppearInLearnMode) {
  const std::string os_release = "/usr/lib/os-release";
  const std::string written = (w().ws / "written-by-audit-test").string();
  const std::vector<Argv> attempts = {{"read", os_release}, {"write", written}};
  for (const Argv& attempt : attempts) {
    SCOPED_TRACE(Quote(attempt));
    LoggedRun run = Logged({}, attempt);
    EXPECT_EQ(run.result.status, 0) << run.context;
    ExpectProbeExec(run, attempt);
    ExpectExit(run);
    EXPECT_TRUE(run.log.Files().empty()) << "enforce mode must keep allowed work out of the log\n"
                                         << run.context;
    EXPECT_TRUE(run.log.SyscallsWith("denied").empty()) << run.context;
    ASSERT_EQ(run.log.Lifecycle("start").size(), 1u) << run.context;
    std::string start = run.log.Lifecycle("start")[0];
    EXPECT_NE(start.find("syscall accounting watched"), std::string::npos)
        << "the start line names the accounting\n"
        << run.context;
    EXPECT_NE(start.find(Probe()), std::string::npos) << "the start line names the command\n"
                                                      << run.context;
    // Outside learn mode only the watched (and denied) syscalls are counted.
    std::map<std::string, int64_t> counted = run.log.Counted();
    EXPECT_GE(counted["openat"], 1) << run.context;
    EXPECT_GE(counted["execve"], 1) << run.context;
    for (const char* unwatched : {"read", "write", "close", "mmap", "brk"}) {
      EXPECT_EQ(counted.count(unwatched), 0u) << unwatched << " is neither watched nor denied\n"
                                              << run.context;
    }
  }

  fs::remove(written);
  for (const Argv& attempt : attempts) {
    SCOPED_TRACE("learn: " + Quote(attempt));
    LoggedRun run = Logged({"--mode", "learn"}, attempt);
    EXPECT_EQ(run.result.status, 0) << run.context;
    int64_t pid = ExpectProbeExec(run, attempt);
    ExpectExit(run);
    if (attempt[0] == "read") {
      ExpectFileEvent(run, {os_release, "allowed_read_only", "read", "allowed"}, pid);
    } else {
      ExpectFileEvent(run, {written, "workspace", "create", "allowed"}, pid);
    }
    // The probe's own exec is a file event in learn mode too.
    bool exec_seen = false;
    for (const json* e : FilesFor(run, Probe())) {
      exec_seen |= Str(e->at("file"), "access") == "exec";
    }
    EXPECT_TRUE(exec_seen) << "learn mode logs every file event, the exec included\n"
                           << run.context;
    ASSERT_EQ(run.log.Lifecycle("start").size(), 1u) << run.context;
    EXPECT_NE(run.log.Lifecycle("start")[0].find("syscall accounting census"), std::string::npos)
        << run.context;
    std::map<std::string, int64_t> counted = run.log.Counted();
    EXPECT_GE(counted["openat"], 1) << run.context;
    EXPECT_GE(counted["execve"], 1) << run.context;
    // Every syscall is counted: the probe writes its report to stderr and exits.
    for (const char* any : {"write", "exit_group"}) {
      EXPECT_GE(counted[any], 1) << "the census counts every syscall, " << any << " too\n"
                                 << run.context;
    }
    for (const json* e : run.log.SyscallsWith("counted")) {
      EXPECT_TRUE(e->at("syscall").at("name").is_string()) << e->dump();
    }
  }
}

// --mode monitor trials a policy tighter than the default profile: what only the trial
// refuses succeeds and is logged as would_deny with the trial's class; what the default
// profile refuses stays refused. The same policy enforced refuses both.
TEST_P(AuditTest, MonitorModeLogsWouldDenyAndEnforcesOnlyTheDefault) {
  // No `extends`: no /etc, and /usr/lib/os-release under an extra deny rule.
  const fs::path policy = w().data / "trial.yaml";
  std::ofstream(policy) << "version: 1\n"
                           "filesystem:\n"
                           "  exec: [/usr, /bin, /lib, /lib64, \"${WORKSPACE}\"]\n"
                           "  write: [\"${WORKSPACE}\"]\n"
                           "  private: [/tmp, \"${HOME}\"]\n"
                           "  deny: [~/.ssh, /usr/lib/os-release]\n";
  fs::permissions(policy, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const Argv monitor = {"--policy", policy.string(), "--mode", "monitor"};
  struct Trial {
    std::string path, cls;
  };
  for (const Trial& t : {Trial{"/etc/passwd", "outside"}, Trial{"/usr/lib/os-release", "denied"}}) {
    SCOPED_TRACE(t.path);
    LoggedRun run = Logged(monitor, {"read", t.path});
    EXPECT_EQ(run.result.status, 0) << "monitor mode must not apply the trial's restrictions\n"
                                    << run.context;
    int64_t pid = ExpectProbeExec(run, {"read", t.path});
    ExpectFileEvent(run, {t.path, t.cls, "read", "would_deny"}, pid);
    ASSERT_EQ(run.log.Lifecycle("start").size(), 1u) << run.context;
    EXPECT_NE(run.log.Lifecycle("start")[0].find("mode monitor"), std::string::npos) << run.context;

    LoggedRun enforced = Logged({"--policy", policy.string()}, {"read", t.path});
    EXPECT_EQ(enforced.result.status, 1) << "enforced, the trial policy refuses it\n"
                                         << enforced.context;
    ExpectFileEvent(enforced, {t.path, t.cls, "read", "denied"},
                    ExpectProbeExec(enforced, {"read", t.path}));
  }
  // The default profile's own deny rules stay enforced.
  const std::string key = (w().home / ".ssh" / "id_rsa").string();
  LoggedRun run = Logged(monitor, {"read", key});
  EXPECT_EQ(run.result.status, 1) << run.context;
  ExpectFileEvent(run, {key, "denied", "read", "denied"}, ExpectProbeExec(run, {"read", key}));
}

// A workspace that is $HOME is read-only (sandbox/home_guard.h), and with --allow-home-write its
// protected paths stay read-only: in --mode monitor the log must say what the sandbox did (the
// write was refused: denied), not `allowed` because the policy on trial names the workspace.
// In every mode; the first run was logged `allowed` before the classifier saw the home guard.
TEST_P(AuditTest, MonitorModeJudgesAHomeWorkspaceAsEnforceDoes) {
  const fs::path home = w().home;
  WriteFile(home / "notes.txt", "mine\n", 0644);
  WriteFile(home / ".bashrc", "# mine\n", 0644);
  if (who_ == Who::kNobody) ChownTree(home, kNobodyId, kNobodyId);
  std::vector<Argv> modes = {kFullFlags};
  if (MissingForDegradedSandbox().empty()) {
    modes.push_back({"--no-namespaces", "--require", "landlock"});
  }
  if (system("command -v runsc >/dev/null 2>&1") == 0) modes.push_back({"--backend", "gvisor"});
  for (const Argv& mode : modes) {
    for (bool opt_in : {false, true}) {
      const std::string target = (home / (opt_in ? ".bashrc" : "notes.txt")).string();
      SCOPED_TRACE(Quote(mode) + (opt_in ? " --allow-home-write " : " ") + target);
      fs::path file = w().data / ("audit-home-" + std::to_string(++runs_) + ".jsonl");
      Argv all = mode;
      for (const char* f : {"--mode", "monitor", "--audit-log"}) all.push_back(f);
      all.push_back(file.string());
      if (opt_in) all.push_back("--allow-home-write");
      LoggedRun run;
      run.result = Gander(all, ProbeCommand({"write", target}), home);
      run.log = ReadAuditLog(file);
      run.context = Context(run.result) + "\n" + run.log.Dump();
      EXPECT_EQ(run.result.status, 1) << "the write is refused in monitor mode too\n"
                                      << run.context;
      EXPECT_EQ(ReadFileOr(target, ""), opt_in ? "# mine\n" : "mine\n") << run.context;
      bool seen = false;
      for (const json* e : run.log.Files()) {
        const json& f = e->at("file");
        if (Str(f, "path") != target || Str(f, "access") != "create") continue;  // O_CREAT
        seen = true;
        EXPECT_EQ(Str(e->at("file"), "result"), "denied") << e->dump() << "\n" << run.context;
      }
      EXPECT_TRUE(seen) << "no create event for " << target << "\n" << run.context;
    }
  }
}

// Every process of the sandbox leaves exec and exit events: a child the probe runs exits 3,
// with its own pid and executable; the probe's own exit is the launcher's, logged once. Under
// --files off too.
TEST_P(AuditTest, ChildProcessesLeaveExecAndExitEvents) {
  for (const Argv& flags : {Argv{}, Argv{"--files", "off"}}) {
    SCOPED_TRACE(Quote(flags));
    const Argv attempt = {"exec", "/bin/sh", "-c", "exit 3"};
    LoggedRun run = Logged(flags, attempt);
    EXPECT_EQ(run.result.status, 1) << "the child's exit 3 fails the probe\n" << run.context;
    int64_t probe_pid = ExpectProbeExec(run, attempt);
    const json* sh = run.log.Exec("/bin/sh");
    ASSERT_NE(sh, nullptr) << "no exec event for the child\n" << run.context;
    EXPECT_EQ(Str(*sh, "exe"), Probe()) << "the exec is made by the forked probe\n" << run.context;
    int64_t child_pid = Int(*sh, "pid").value_or(0);
    EXPECT_NE(child_pid, probe_pid) << run.context;
    std::vector<const json*> exits = run.log.Exits();
    ASSERT_EQ(exits.size(), 2u) << "the child's exit and the probe's\n" << run.context;
    const json& child = *exits[0];
    EXPECT_EQ(Int(child, "pid"), child_pid) << run.context;
    EXPECT_EQ(Int(child.at("process"), "exit_code"), 3) << run.context;
    EXPECT_EQ(Str(child.at("process"), "path"), fs::canonical("/bin/sh").string()) << run.context;
    EXPECT_EQ(Str(child, "exe"), fs::canonical("/bin/sh").string()) << run.context;
    ExpectExit(run);
  }
}

// --files off: no file events at all, but the denials are still reported.
TEST_P(AuditTest, FilesOffLogsNoFileEventsButDenials) {
  LoggedRun read = Logged({"--files", "off"}, {"read", "{HOME}/.ssh/id_rsa"});
  EXPECT_EQ(read.result.status, 1) << read.context;
  EXPECT_TRUE(read.log.Files().empty()) << read.context;
  ExpectExit(read);

  LoggedRun keyctl = Logged({"--files", "off"}, {"keyctl"});
  EXPECT_EQ(keyctl.result.status, 1) << keyctl.context;
  EXPECT_TRUE(keyctl.log.Files().empty()) << keyctl.context;
  // Exec is watched whatever `files` says: the process event is there, the file event not.
  EXPECT_NE(keyctl.log.Exec(Probe()), nullptr) << keyctl.context;
  for (const char* name : {"add_key", "keyctl"}) {
    int found = 0;
    for (const json* e : keyctl.log.SyscallsWith("denied")) {
      if (Str(e->at("syscall"), "name") != name) continue;
      ++found;
      EXPECT_EQ(Str(*e, "exe"), Probe()) << e->dump() << "\n" << keyctl.context;
      EXPECT_EQ(Str(e->at("syscall"), "errno_name"), "EPERM") << keyctl.context;
      EXPECT_GT(Int(*e, "pid").value_or(0), 0) << keyctl.context;
    }
    EXPECT_EQ(found, 1) << name << "\n" << keyctl.context;
  }
  ExpectExit(keyctl);
}

// --files all adds the stat family: a stat of the key is a file event with access "stat";
// with the default (opens) it is not.
TEST_P(AuditTest, FilesAllAddsStatOfOutsidePaths) {
  const std::string key = (w().home / ".ssh" / "id_rsa").string();
  const std::string outside = (w().outside / "host-secret").string();
  const std::set<std::string> stat_family = {"stat", "lstat", "newfstatat", "statx"};

  for (const std::string& target : {key, outside}) {
    SCOPED_TRACE(target);
    LoggedRun all = Logged({"--files", "all"}, {"stat", target});
    EXPECT_EQ(all.result.status, 1) << "the stat must fail inside\n" << all.context;
    int64_t pid = ExpectProbeExec(all, {"stat", target});
    std::vector<const json*> events = FilesFor(all, target);
    const json* stat = nullptr;
    for (const json* e : events) {
      if (stat_family.count(Str(e->at("file"), "syscall"))) stat = e;
    }
    ASSERT_NE(stat, nullptr) << "no stat-family file event for " << target << "\n" << all.context;
    const json& f = stat->at("file");
    EXPECT_EQ(Str(f, "access"), "stat") << stat->dump();
    EXPECT_EQ(Str(f, "class"), target == key ? "denied" : "outside") << stat->dump();
    EXPECT_EQ(Str(f, "result"), "denied") << stat->dump();
    EXPECT_EQ(Str(f, "raw_path"), target) << stat->dump();
    EXPECT_EQ(Str(*stat, "exe"), Probe()) << stat->dump();
    EXPECT_EQ(Int(*stat, "pid").value_or(-1), pid) << stat->dump();

    LoggedRun opens = Logged({}, {"stat", target});
    EXPECT_EQ(opens.result.status, 1) << opens.context;
    EXPECT_TRUE(FilesFor(opens, target).empty())
        << "the stat family is watched only with --files all\n"
        << opens.context;
  }
}

// setns itself (the suite's setns attempt never gets that far: see its case).
TEST_P(AuditTest, SetnsDenialIsLogged) {
  LoggedRun run = Logged({}, {"setns", "/proc/self/ns/user"});
  EXPECT_EQ(run.result.status, 1) << run.context;
  int64_t pid = ExpectProbeExec(run, {"setns", "/proc/self/ns/user"});
  ExpectDenial(run, {.name = "setns"}, pid);
}

// The resolution tricks of the issue, live (the unit tests cover them with a fake /proc): the
// key reached through a dirfd, through /proc/self/fd/N/.., through /proc/self/root and through
// /proc/self/cwd/.. must each be logged as the key, class denied.
void AuditFixture::ExpectResolvesToKey(const Trick& t) {
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

TEST_P(AuditTest, DirfdAndMagicLinkPathsResolveToTheKey) {
  for (const Trick& t : std::vector<Trick>{
           {{"openat", "{WS}", "../home/.ssh/id_rsa"}, "../home/.ssh/id_rsa"},
           {{"magic", "fd-dotdot", "{WS}", "../home/.ssh/id_rsa"}, ""},
           {{"read", "/proc/self/root{HOME}/.ssh/id_rsa"}, "/proc/self/root{HOME}/.ssh/id_rsa"},
           {{"read", "/proc/self/cwd/../home/.ssh/id_rsa"}, "/proc/self/cwd/../home/.ssh/id_rsa"},
       }) {
    ExpectResolvesToKey(t);
  }
}

// The same through /proc/<own pid>/root (the pid the process has inside its pid namespace),
// which monitor/path_resolver.h replaces like /proc/self.
TEST_P(AuditTest, OwnPidProcRootResolvesToTheKey) {
  ExpectResolvesToKey({{"magic", "ownpid-root", "{HOME}/.ssh/id_rsa"}, ""});
}

// A thread's open is the process's: `pid` is "the process, as the host sees it".
TEST_P(AuditTest, EventsFromAThreadNameTheProcess) {
  LoggedRun run = Logged({}, {"thread-read", "{HOME}/.ssh/id_rsa"});
  EXPECT_EQ(run.result.status, 1) << run.context;
  int64_t pid = ExpectProbeExec(run, {"thread-read", "{HOME}/.ssh/id_rsa"});
  ExpectFileEvent(run, {"{HOME}/.ssh/id_rsa", "denied", "read", "denied"}, pid);
}

// With a pid namespace (isolation full) each event of a sandboxed process carries the pid it
// has inside (`sandbox_pid`).
TEST_P(AuditTest, EventsCarryTheSandboxPid) {
  LoggedRun run = Logged({}, {"read", "{HOME}/.ssh/id_rsa"});
  ASSERT_NE(run.log.Lifecycle("start").size(), 0u) << run.context;
  ASSERT_NE(run.log.Lifecycle("start")[0].find("isolation full"), std::string::npos) << run.context;
  std::vector<const json*> events = FromProbe(run.log.Files());
  ASSERT_FALSE(events.empty()) << run.context;
  for (const json* e : events) {
    EXPECT_GT(Int(*e, "sandbox_pid").value_or(0), 0) << "sandbox_pid\n" << e->dump();
    EXPECT_NE(Int(*e, "sandbox_pid"), Int(*e, "pid")) << e->dump();
  }
}

// "Denials are never silent", live: while the extension still runs (it waits after its
// attempts), the refused syscall and the refused open are already in the log.
TEST_P(AuditTest, EventsAreWrittenWhileTheExtensionRuns) {
  fs::path file = w().data / "audit-live.jsonl";
  Argv flags = kFullFlags;
  flags.push_back("--audit-log");
  flags.push_back(file.string());
  RunOptions o = Opts(w().ws);
  o.pipe_stdin = true;
  Argv argv = GanderArgv(flags, ProbeCommand({"deny-and-wait", "{HOME}/.ssh/id_rsa"}), w().ws);
  Child gander(argv, o);
  ASSERT_TRUE(gander.WaitForStderr("probe: waiting", 30)) << Quote(argv);
  const std::string key = (w().home / ".ssh" / "id_rsa").string();
  bool denial = false, open = false;
  AuditLog log;
  WaitUntil(
      [&] {
        log = ReadAuditLog(file);
        denial = open = false;
        for (const json* e : log.SyscallsWith("denied")) {
          denial |= Str(e->at("syscall"), "name") == "keyctl" && Str(*e, "exe") == Probe();
        }
        for (const json* e : log.Files()) {
          open |= Str(e->at("file"), "path") == key && Str(e->at("file"), "class") == "denied";
        }
        return denial && open;
      },
      10);
  bool still_running = kill(gander.pid(), 0) == 0 && log.Lifecycle("stop").empty();
  EXPECT_TRUE(denial) << "the keyctl denial is not in the log while the extension runs\n"
                      << log.Dump();
  EXPECT_TRUE(open) << "the refused open of the key is not in the log while the extension runs\n"
                    << log.Dump();
  EXPECT_TRUE(still_running) << "the extension must still be running\n" << log.Dump();
  gander.CloseStdin();  // EOF: gander ends the extension
  RunResult r = gander.Wait(15);
  AuditLog final_log = ReadAuditLog(file);
  ExpectWellFormed(final_log,
                   "command: " + Quote(argv) + "\n" + r.Describe() + "\n" + final_log.Dump());
}

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

INSTANTIATE_TEST_SUITE_P(Audit, AuditTest, ::testing::Values(Who::kCurrent, Who::kNobody),
                         WhoParamName);
INSTANTIATE_TEST_SUITE_P(Audit, AuditRaceTest, ::testing::Values(Who::kCurrent, Who::kNobody),
                         WhoParamName);

}  // namespace
