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
#include "audit_log_fixture.h"

namespace {

using namespace gander::escape_suite;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// What each attempt of the suite must leave in the log

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
// Every attempt of the escape suite, in the audit log

class AuditEscapeTest : public AuditFixture, public ::testing::TestWithParam<AttemptParam> {
 protected:
  void SetUp() override {
    Who who = std::get<0>(GetParam());
    if (std::string why = PrepareIn(who, SandboxMode::kNamespaces); !why.empty()) {
      GTEST_SKIP() << why;
    }
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

INSTANTIATE_TEST_SUITE_P(Audit, AuditEscapeTest, EveryUserAndAttempt(false), AttemptParamName);

// ---------------------------------------------------------------------------------------------
// Further file and denial cases, the modes and the --files levels

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

INSTANTIATE_TEST_SUITE_P(Audit, AuditTest, ::testing::Values(Who::kCurrent, Who::kNobody),
                         WhoParamName);

}  // namespace
