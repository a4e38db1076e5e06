// The gVisor backend's pure parts: the OCI config from a mount plan, runsc's argv, and the
// strace lines mapped onto gander's events (sandbox/gvisor/).
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <optional>

#include "sandbox/gvisor/bundle.h"
#include "sandbox/gvisor/runsc.h"
#include "sandbox/gvisor/strace.h"

namespace gander::sandbox::gvisor {
namespace {

using Kind = MountOp::Kind;

MountOp Op(Kind kind, std::string source, std::string target, bool writable = false,
           bool executable = false) {
  return {.kind = kind,
          .source = std::move(source),
          .target = std::move(target),
          .writable = writable,
          .executable = executable};
}

TEST(OciConfigTest, MountsEnvironmentLimitsAndCommandFromThePlan) {
  BundleSpec spec;
  spec.root = "/run/x/rootfs";
  spec.mounts = {Op(Kind::kBind, "/usr", "/usr", false, true),
                 Op(Kind::kBind, "/home/u/ws", "/home/u/ws", true, false),
                 Op(Kind::kTmpfs, "", "/tmp"),
                 Op(Kind::kMaskDir, "", "/etc/ssh"),
                 Op(Kind::kMaskFile, "", "/etc/shadow"),
                 Op(Kind::kSymlink, "usr/bin", "/bin"),
                 Op(Kind::kProc, "", "/proc"),
                 Op(Kind::kDev, "", "/dev")};
  spec.argv = {"/usr/bin/node", "server.js", "a \"quoted\"\narg"};
  spec.envp = {"PATH=/usr/bin", "HOME=/home/u"};
  spec.cwd = "/home/u/ws";
  spec.rlimits = {{RLIMIT_NOFILE, 4096}, {RLIMIT_CORE, 0}};
  nlohmann::json c = nlohmann::json::parse(OciConfig(spec));
  EXPECT_EQ(c["root"]["path"], "/run/x/rootfs");
  EXPECT_EQ(c["root"]["readonly"], true);
  EXPECT_EQ(c["process"]["args"][2], "a \"quoted\"\narg");
  EXPECT_EQ(c["process"]["env"], nlohmann::json({"PATH=/usr/bin", "HOME=/home/u"}));
  EXPECT_EQ(c["process"]["cwd"], "/home/u/ws");
  EXPECT_EQ(c["process"]["terminal"], false);
  EXPECT_TRUE(c["process"]["capabilities"]["bounding"].empty());
  EXPECT_EQ(c["process"]["rlimits"][0]["type"], "RLIMIT_NOFILE");
  EXPECT_EQ(c["process"]["rlimits"][0]["hard"], 4096);
  EXPECT_EQ(c["process"]["rlimits"][1]["type"], "RLIMIT_CORE");
  EXPECT_EQ(c["process"]["rlimits"][1]["soft"], 0);
  const auto& m = c["mounts"];
  ASSERT_EQ(m.size(), 7u);  // the symlink is not a mount
  EXPECT_EQ(m[0]["type"], "bind");
  EXPECT_EQ(m[0]["options"], nlohmann::json({"rbind", "ro", "nosuid", "nodev"}));
  EXPECT_EQ(m[1]["options"], nlohmann::json({"rbind", "rw", "nosuid", "nodev", "noexec"}));
  EXPECT_EQ(m[2]["type"], "tmpfs");
  EXPECT_EQ(m[3]["destination"], "/etc/ssh");
  EXPECT_EQ(m[3]["options"][0], "ro");
  EXPECT_EQ(m[4]["source"], "/dev/null");
  EXPECT_EQ(m[5]["type"], "proc");
  EXPECT_EQ(m[6]["destination"], "/dev");
  EXPECT_EQ(RootSymlinks(spec.mounts),
            (std::vector<std::pair<std::string, std::string>>{{"/bin", "usr/bin"}}));
}

TEST(RunscArgvTest, RootlessNoNetworkPrivateRootAndStrace) {
  RunscOptions options;
  EXPECT_EQ(RunscRunArgv(options, "/r/state", "/r/bundle", "c1", ""),
            (std::vector<std::string>{"runsc", "--rootless", "--network=none", "--root=/r/state",
                                      "--cgroupfs", "run", "--bundle=/r/bundle", "c1"}));
  options.platform = "kvm";
  options.strace_syscalls = {"openat", "execve"};
  EXPECT_EQ(RunscRunArgv(options, "/r/state", "/r/bundle", "c1", "/r/log"),
            (std::vector<std::string>{"runsc", "--rootless", "--network=none", "--root=/r/state",
                                      "--cgroupfs", "--platform=kvm", "--strace",
                                      "--strace-syscalls=openat,execve", "--debug-log=/r/log",
                                      "run", "--bundle=/r/bundle", "c1"}));
  options.platform = "";
  options.strace_syscalls = {kStraceAll};  // learn mode: every syscall
  EXPECT_EQ(RunscRunArgv(options, "/r/state", "/r/bundle", "c1", "/r/log"),
            (std::vector<std::string>{"runsc", "--rootless", "--network=none", "--root=/r/state",
                                      "--cgroupfs", "--strace", "--debug-log=/r/log", "run",
                                      "--bundle=/r/bundle", "c1"}));
}

TEST(RunscArgvTest, HostNetworkWithTheBrokerFilter) {
  RunscOptions options;
  options.broker_filter = {sock_filter{0x06, 0, 0, 0x7fff0000}};  // any program: broker mode
  EXPECT_EQ(RunscRunArgv(options, "/r/state", "/r/bundle", "c1", ""),
            (std::vector<std::string>{"runsc", "--rootless", "--network=host", "--root=/r/state",
                                      "--cgroupfs", "run", "--bundle=/r/bundle", "c1"}));
}

TEST(OciConfigTest, TheSyscallAllowlistBecomesOciSeccompForRunsc) {
  BundleSpec spec;
  spec.root = "/r";
  spec.syscalls_allow = std::vector<std::string>{"read", "openat"};
  const nlohmann::json seccomp = nlohmann::json::parse(OciConfig(spec))["linux"]["seccomp"];
  EXPECT_EQ(seccomp["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(seccomp["defaultErrnoRet"], ENOSYS);
  ASSERT_EQ(seccomp["syscalls"].size(), 1u);
  EXPECT_EQ(seccomp["syscalls"][0]["action"], "SCMP_ACT_ALLOW");
  // The listed ones, the implicit ones (policies::kImplicitSyscalls) and clone3, sorted:
  // refused here clone3 would be EPERM (runsc ignores errnoRet) and libc would not fall back
  // to clone, so no thread could start (node aborts); allowed, the sentry answers ENOSYS.
  EXPECT_EQ(seccomp["syscalls"][0]["names"],
            nlohmann::json({"clone3", "execve", "exit", "exit_group", "openat", "read",
                            "restart_syscall", "rt_sigreturn", "sched_yield", "write"}));
  RunscOptions options;
  options.oci_seccomp = true;
  EXPECT_EQ(
      RunscRunArgv(options, "/r/state", "/r/bundle", "c1", ""),
      (std::vector<std::string>{"runsc", "--rootless", "--network=none", "--root=/r/state",
                                "--cgroupfs", "--oci-seccomp", "run", "--bundle=/r/bundle", "c1"}));
}

// Issue 16 item 6: without the floor nested user namespaces, ptrace and io_uring worked inside
// gVisor. Without an allowlist the default allows and each floor entry refuses; with one, the
// floor's names are left out or allowed only for harmless argument values.
TEST(OciConfigTest, TheFloorIsInEveryBundle) {
  BundleSpec spec;
  spec.root = "/r";
  const nlohmann::json seccomp = nlohmann::json::parse(OciConfig(spec))["linux"]["seccomp"];
  EXPECT_EQ(seccomp["defaultAction"], "SCMP_ACT_ALLOW");
  auto refused = [&](const std::string& name, std::optional<uint64_t> flag) {
    for (const auto& rule : seccomp["syscalls"]) {
      if (rule["action"] != "SCMP_ACT_ERRNO" || rule["names"] != nlohmann::json({name})) continue;
      if (!flag && !rule.contains("args")) return true;
      if (flag && rule.contains("args") && rule["args"][0]["index"] == 0 &&
          rule["args"][0]["value"] == *flag && rule["args"][0]["valueTwo"] == *flag &&
          rule["args"][0]["op"] == "SCMP_CMP_MASKED_EQ") {
        return true;
      }
    }
    return false;
  };
  for (const char* name : {"ptrace", "io_uring_setup", "io_uring_enter", "bpf", "keyctl"})
    EXPECT_TRUE(refused(name, std::nullopt)) << name;
  // The sentry refuses mount for want of CAP_SYS_ADMIN, and its strace reports that denial.
  EXPECT_FALSE(refused("mount", std::nullopt));
  EXPECT_TRUE(refused("unshare", uint64_t{CLONE_NEWUSER}));
  EXPECT_TRUE(refused("clone", uint64_t{CLONE_NEWUSER}));
  EXPECT_FALSE(refused("read", std::nullopt));
  // No executable memfd: memfd_create refused where MFD_NOEXEC_SEAL (8, argument 1) is clear.
  bool memfd = false;
  for (const auto& rule : seccomp["syscalls"]) {
    if (rule["names"] == nlohmann::json({"memfd_create"}) && rule["action"] == "SCMP_ACT_ERRNO" &&
        rule["args"][0]["index"] == 1 && rule["args"][0]["value"] == 8 &&
        rule["args"][0]["valueTwo"] == 0) {
      memfd = true;
    }
  }
  EXPECT_TRUE(memfd);

  spec.syscalls_allow = std::vector<std::string>{"read", "ptrace", "unshare"};
  const nlohmann::json allow = nlohmann::json::parse(OciConfig(spec))["linux"]["seccomp"];
  EXPECT_EQ(allow["defaultAction"], "SCMP_ACT_ERRNO");
  for (const auto& rule : allow["syscalls"]) {
    EXPECT_EQ(rule["action"], "SCMP_ACT_ALLOW");
    for (const auto& name : rule["names"]) EXPECT_NE(name, "ptrace");
    if (rule["names"] == nlohmann::json({"unshare"})) {
      // Allowed only where CLONE_NEWUSER (and every other CLONE_NEW* flag) is clear.
      ASSERT_TRUE(rule.contains("args")) << rule.dump();
      uint64_t mask = rule["args"][0]["value"], value = rule["args"][0]["valueTwo"];
      EXPECT_FALSE((CLONE_NEWUSER & mask & ~value) == 0) << rule.dump();
    }
  }
}

TEST(OciConfigTest, HostNetworkDropsTheNetworkNamespace) {
  BundleSpec spec;
  spec.root = "/r";
  auto types = [&] {
    std::vector<std::string> out;
    const nlohmann::json config = nlohmann::json::parse(OciConfig(spec));
    for (const auto& ns : config["linux"]["namespaces"]) {
      out.push_back(ns["type"]);
    }
    return out;
  };
  EXPECT_EQ(types(), (std::vector<std::string>{"pid", "network", "ipc", "uts", "mount"}));
  spec.host_network = true;
  EXPECT_EQ(types(), (std::vector<std::string>{"pid", "ipc", "uts", "mount"}));
}

// Lines as Debian's runsc 20221219 writes them (copied from a run on this machine).
constexpr const char* kOpenFailed =
    "I1130 12:20:46.664111    2852 strace.go:608] [   2:   2] cat X openat(AT_FDCWD /, "
    "0x7f82f6817f78 /home/u/.ssh/id_rsa, O_RDONLY|0x0, 0o0) = 0 (0x0) errno=2 (no such file or "
    "directory) (118.533µs)";
constexpr const char* kOpenEntry =
    "I1130 12:20:46.663962    2852 strace.go:570] [   2:   2] cat E openat(AT_FDCWD /, "
    "0x7f82f6817f78 /nonexist, O_RDONLY|0x0, 0o0)";
constexpr const char* kExec =
    "I1130 12:20:46.656907    2852 strace.go:605] [   2:   2] sh X execve(0x56045ec7d5a0 "
    "/usr/bin/cat, 0x56045ec7d558 [\"cat\", \"/etc/host, name\", \"a\\\"b\"], 0x56045ec7d578 "
    "[\"HOME=/root\", \"TOKEN=s3cret\"]) = 0 (0x0) (806.654µs)";
constexpr const char* kExit =
    "I1130 12:20:46.664531    2852 strace.go:599] [   2:   2] cat X exit_group(0x1) = 0 (0x0) "
    "(2.364µs)";

StraceMapperConfig Config() {
  policies::ExpandedPolicy policy;
  policy.read = {"/etc"};
  policy.exec = {"/usr"};
  policy.private_ = {"/tmp", "/home/u"};
  policy.deny = {"/home/u/.ssh"};
  return {.extension = "ext",
          .rules = monitor::ClassifierRules::From(policy, "/home/u/ws"),
          .trial = std::nullopt,
          .home = "/home/u",
          .workspace = "/home/u/ws",
          .root_symlinks = {{"/lib", "usr/lib"}},
          .files = policies::FilesWatch::kOpens,
          .log_all_files = false,
          .census = false,
          .tool_calls = nullptr};
}

// The events of one line.
std::vector<events::Event> All(StraceMapper& mapper, std::string_view line) {
  std::vector<events::Event> out;
  auto record = ParseStraceLine(line);
  EXPECT_TRUE(record) << line;
  if (record) mapper.Map(*record, out);
  return out;
}

// The event of a line that makes at most one.
std::optional<events::Event> One(StraceMapper& mapper, std::string_view line) {
  auto out = All(mapper, line);
  EXPECT_LE(out.size(), 1u);
  if (out.empty()) return std::nullopt;
  return std::move(out.front());
}

const events::FileEvent& File(const events::Event& e) {
  return std::get<events::FileEvent>(e.payload);
}

TEST(StraceTest, ParsesExitLinesOnly) {
  auto r = ParseStraceLine(kOpenFailed);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pid, 2);
  EXPECT_EQ(r->comm, "cat");
  EXPECT_EQ(r->syscall, "openat");
  EXPECT_EQ(r->error, 2);
  EXPECT_EQ(r->args, "AT_FDCWD /, 0x7f82f6817f78 /home/u/.ssh/id_rsa, O_RDONLY|0x0, 0o0");
  EXPECT_FALSE(ParseStraceLine(kOpenEntry));
  EXPECT_FALSE(ParseStraceLine("I1130 12:20:46.45 2842 main.go:217] Args: [runsc run]"));
  EXPECT_FALSE(ParseStraceLine(""));
}

TEST(StraceTest, ADeniedReadBecomesAFileEvent) {
  StraceMapper mapper(Config());
  auto e = One(mapper, (kOpenFailed));
  ASSERT_TRUE(e);
  const auto& f = std::get<events::FileEvent>(e->payload);
  EXPECT_EQ(f.path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(f.path_class, events::PathClass::kDenied);
  EXPECT_EQ(f.path_label, "~/.ssh");
  EXPECT_EQ(f.access, events::FileAccess::kRead);
  EXPECT_EQ(f.result, events::Verdict::kDenied);
  EXPECT_EQ(f.error, 2);
  EXPECT_EQ(e->sandbox_pid, 2);
}

TEST(StraceTest, RelativePathsResolveAgainstTheDirfdAndPlainReadsOfGrantsAreQuiet) {
  StraceMapper mapper(Config());
  // A write outside, relative to the cwd gVisor prints after AT_FDCWD.
  auto out =
      One(mapper,
          ("I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /var, 0x1 lib/x, "
           "O_WRONLY|O_CREAT|O_TRUNC, 0o666) = 0 (0x0) errno=2 (no such file or directory) (1µs)"));
  ASSERT_TRUE(out);
  const auto& f = std::get<events::FileEvent>(out->payload);
  EXPECT_EQ(f.path, "/var/lib/x");
  EXPECT_EQ(f.access, events::FileAccess::kCreate);
  EXPECT_EQ(f.path_class, events::PathClass::kOutside);
  EXPECT_EQ(f.result, events::Verdict::kDenied);
  // Reading /etc (a grant) and writing the workspace are no news.
  EXPECT_FALSE(
      One(mapper,
          ("I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /, 0x1 /etc/passwd, O_RDONLY, "
           "0o0) = 3 (0x3) (1µs)")));
  EXPECT_FALSE(
      One(mapper, ("I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /home/u/ws, 0x1 a.txt, "
                   "O_WRONLY|O_CREAT, 0o666) = 3 (0x3) (1µs)")));
  // A path holding ", " stays whole.
  auto comma =
      One(mapper,
          ("I1 2 3 strace.go:608] [   5:   5] sh X mkdirat(AT_FDCWD /, 0x1 /opt/a, b, 0o777) = 0 "
           "(0x0) errno=2 (x) (1µs)"));
  ASSERT_TRUE(comma);
  EXPECT_EQ(std::get<events::FileEvent>(comma->payload).path, "/opt/a, b");
}

TEST(StraceTest, ExecKeepsArgvNeverTheEnvironment) {
  StraceMapper mapper(Config());
  auto e = One(mapper, (kExec));
  ASSERT_TRUE(e);
  const auto& p = std::get<events::ProcessEvent>(e->payload);
  EXPECT_EQ(p.action, events::ProcessAction::kExec);
  EXPECT_EQ(p.path, "/usr/bin/cat");
  EXPECT_EQ(p.argv, (std::vector<std::string>{"cat", "/etc/host, name", "a\"b"}));
  for (const auto& arg : p.argv) EXPECT_EQ(arg.find("s3cret"), std::string::npos);
}

TEST(StraceTest, ExitGroupIsAnExitEvent) {
  StraceMapper mapper(Config());
  auto e = One(mapper, (kExit));
  ASSERT_TRUE(e);
  const auto& p = std::get<events::ProcessEvent>(e->payload);
  EXPECT_EQ(p.action, events::ProcessAction::kExit);
  EXPECT_EQ(p.exit_code, 1);
}

TEST(StraceTest, FeedReassemblesLinesCutAnywhere) {
  StraceMapper mapper(Config());
  std::string log = std::string(kOpenEntry) + "\n" + kOpenFailed + "\n" + kExec + "\n" + kExit +
                    "\nI1 2 3 main.go:1] other\n";
  std::vector<events::Event> events;
  for (size_t i = 0; i < log.size(); i += 7)
    mapper.Feed(std::string_view(log).substr(i, 7), events);
  EXPECT_EQ(events.size(), 3u);
  EXPECT_EQ(mapper.lines(), 3u);
  EXPECT_FALSE(mapper.started());
  mapper.Feed("I1130 12:20:46.646861 2852 loader.go:689] Process should have started...\n", events);
  EXPECT_TRUE(mapper.started());
}

TEST(StraceTest, TracedSyscallsFollowTheNativeTableAndWhatRunscKnows) {
  auto has = [](const std::vector<std::string>& v, const char* name) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  auto off = TracedSyscalls(policies::FilesWatch::kOff);
  EXPECT_TRUE(has(off, "execve") && has(off, "exit_group"));
  EXPECT_FALSE(has(off, "openat"));
  EXPECT_TRUE(has(off, "bpf") && has(off, "kexec_load"));  // refusals are always reported
  EXPECT_FALSE(has(off, "clone"));                         // patterned denials are not
  auto opens = TracedSyscalls(policies::FilesWatch::kOpens);
  for (const char* name : {"openat", "renameat2", "fchmodat", "linkat", "symlinkat", "unlinkat"}) {
    EXPECT_TRUE(has(opens, name)) << name;
  }
  EXPECT_FALSE(has(opens, "statx"));
  // Unknown to the Debian runsc: asking for them keeps the sandbox from starting.
  EXPECT_FALSE(has(opens, "openat2"));
  EXPECT_FALSE(has(opens, "fchmodat2"));
  auto all = TracedSyscalls(policies::FilesWatch::kAll);
  EXPECT_TRUE(has(all, "statx") && has(all, "newfstatat") && has(all, "access"));
  EXPECT_FALSE(has(all, "faccessat2"));
}

TEST(StraceTest, SplitsArgumentsAtTheTopLevelOnly) {
  EXPECT_EQ(SplitStraceArgs(""), std::vector<std::string_view>{});
  EXPECT_EQ(SplitStraceArgs("0x1"), std::vector<std::string_view>{"0x1"});
  // A stat buffer's fields and a quoted list hold ", " too.
  EXPECT_EQ(
      SplitStraceArgs("AT_FDCWD /tmp, 0x1 /a, 0x2 {dev=1, ino=2}, 0x0"),
      (std::vector<std::string_view>{"AT_FDCWD /tmp", "0x1 /a", "0x2 {dev=1, ino=2}", "0x0"}));
  EXPECT_EQ(
      SplitStraceArgs(R"(0x1 /bin/x, 0x2 ["x", "a, \"b"], 0x3 ["E=1"])"),
      (std::vector<std::string_view>{"0x1 /bin/x", R"(0x2 ["x", "a, \"b"])", R"(0x3 ["E=1"])"}));
  // An unquoted path holding ", " stays one argument; flags and numbers still split.
  EXPECT_EQ(SplitStraceArgs("0x1 /a, my docs/f, O_RDONLY|O_CLOEXEC, 0o0"),
            (std::vector<std::string_view>{"0x1 /a, my docs/f", "O_RDONLY|O_CLOEXEC", "0o0"}));
}

TEST(StraceTest, RenameGivesBothPathsAgainstTheCwd) {
  StraceMapper mapper(Config());
  // renameat2's second dirfd is printed raw (0xffffff9c is AT_FDCWD): the cwd is the first's.
  auto out = All(mapper,
                 "I1 2 3 strace.go:611] [   3:   3] mv X renameat2(AT_FDCWD /var, 0x7f d/f, "
                 "0xffffff9c, 0x7f d/g, 0x1) = 0 (0x0) errno=30 (read-only file system) (33µs)");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(File(out[0]).path, "/var/d/f");
  EXPECT_EQ(File(out[0]).access, events::FileAccess::kRename);
  EXPECT_EQ(File(out[0]).result, events::Verdict::kDenied);
  EXPECT_EQ(File(out[0]).error, 30);
  EXPECT_EQ(File(out[1]).path, "/var/d/g");
  EXPECT_EQ(File(out[1]).access, events::FileAccess::kCreate);
  EXPECT_EQ(File(out[1]).syscall, "renameat2");
}

TEST(StraceTest, ChmodLinkAndNonAtCallsUseTheRememberedCwd) {
  StraceMapper mapper(Config());
  auto chmod = One(mapper,
                   "I1 2 3 strace.go:605] [   4:   4] chmod X fchmodat(AT_FDCWD /etc, 0x5 passwd, "
                   "0o600) = 0 (0x0) errno=30 (read-only file system) (19µs)");
  ASSERT_TRUE(chmod);
  EXPECT_EQ(File(*chmod).path, "/etc/passwd");
  EXPECT_EQ(File(*chmod).access, events::FileAccess::kChmod);
  EXPECT_EQ(File(*chmod).result, events::Verdict::kDenied);
  // symlinkat(target, newdirfd, linkpath): only the link is a path to check.
  auto link = One(mapper,
                  "I1 2 3 strace.go:605] [   4:   4] ln X symlinkat(0x7f /home/u/.ssh/id_rsa, "
                  "AT_FDCWD /opt, 0x7f lnk) = 0 (0x0) errno=13 (permission denied) (16µs)");
  ASSERT_TRUE(link);
  EXPECT_EQ(File(*link).path, "/opt/lnk");
  EXPECT_EQ(File(*link).access, events::FileAccess::kCreate);
  // mkdir has no dirfd: pid 4's cwd was last printed as /opt.
  auto mkdir = One(mapper,
                   "I1 2 3 strace.go:602] [   4:   4] mkdir X mkdir(0x7f d, 0o777) = 0 (0x0) "
                   "errno=30 (read-only file system) (24µs)");
  ASSERT_TRUE(mkdir);
  EXPECT_EQ(File(*mkdir).path, "/opt/d");
  // Another pid's cwd is unknown: the event keeps the raw path, unresolved.
  auto other = One(mapper,
                   "I1 2 3 strace.go:602] [   9:   9] mkdir X mkdir(0x7f d, 0o777) = 0 (0x0) "
                   "errno=30 (read-only file system) (24µs)");
  ASSERT_TRUE(other);
  EXPECT_FALSE(File(*other).path);
  EXPECT_EQ(File(*other).raw_path, "d");
}

TEST(StraceTest, ADirfdHoldingADirectoryResolvesRelativeOpens) {
  StraceMapper mapper(Config());
  auto e = One(mapper,
               "I1 2 3 strace.go:608] [   2:   2] cat X openat(0x3 /home/u, 0x7f .ssh/id_rsa, "
               "O_RDONLY|0x0, 0o0) = 0 (0x0) errno=2 (no such file or directory) (20µs)");
  ASSERT_TRUE(e);
  EXPECT_EQ(File(*e).path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(File(*e).path_label, "~/.ssh");
  EXPECT_EQ(File(*e).result, events::Verdict::kDenied);
}

TEST(StraceTest, StatProbesAtFilesAllOnly) {
  constexpr const char* kStat =
      "I1 2 3 strace.go:608] [   6:   6] ls X newfstatat(AT_FDCWD /tmp, 0x7f /home/u/.ssh, "
      "0x7fdb {dev=14, ino=477, mode=S_IFDIR|0o700}, 0x0) = 0 (0x0) errno=2 (no such file or "
      "directory) (1µs)";
  StraceMapper opens(Config());
  EXPECT_FALSE(One(opens, kStat));
  StraceMapperConfig config = Config();
  config.files = policies::FilesWatch::kAll;
  StraceMapper all(std::move(config));
  auto e = One(all, kStat);
  ASSERT_TRUE(e);
  EXPECT_EQ(File(*e).path, "/home/u/.ssh");
  EXPECT_EQ(File(*e).access, events::FileAccess::kStat);
  // fstat through AT_EMPTY_PATH (an empty path) concerns a file already open: no event.
  EXPECT_FALSE(One(all,
                   "I1 2 3 strace.go:608] [   6:   6] ls X newfstatat(0x3 /home/u/.ssh/k, 0x7f , "
                   "0x7fdb {dev=14, ino=1}, 0x1000) = 0 (0x0) errno=2 (x) (1µs)"));
}

TEST(StraceTest, SyscallsGvisorRefusedAreDeniedSyscallEvents) {
  StraceMapper mapper(Config());
  auto e = One(mapper,
               "I1 2 3 strace.go:602] [   7:   7] probe X bpf(0x0, 0x0, 0x0) = 0 (0x0) errno=1 "
               "(operation not permitted) (1µs)");
  ASSERT_TRUE(e);
  const auto& s = std::get<events::SyscallEvent>(e->payload);
  EXPECT_EQ(s.name, "bpf");
  EXPECT_EQ(s.nr, 321);  // x86_64
  EXPECT_EQ(s.error, 1);
  EXPECT_EQ(s.action, events::SyscallAction::kDenied);
  EXPECT_EQ(e->sandbox_pid, 7);
  // gVisor's own kernel ran it (mount inside the sandbox): not a refusal.
  EXPECT_FALSE(One(mapper,
                   "I1 2 3 strace.go:611] [   8:   8] mount X mount(0x5 x, 0x5 /mnt, 0x5 tmpfs, "
                   "0x0, <null>) = 0 (0x0) (29µs)"));
  // An ordinary failure is not a refusal either.
  EXPECT_FALSE(One(mapper,
                   "I1 2 3 strace.go:611] [   8:   8] umount2 X umount2(0x5 /nope, 0x0) = 0 (0x0) "
                   "errno=2 (no such file or directory) (2µs)"));
}

TEST(StraceTest, MonitorModeMarksWhatTheTrialWouldRefuse) {
  StraceMapperConfig config = Config();
  policies::ExpandedPolicy trial;  // the trial grants no /etc
  trial.exec = {"/usr"};
  trial.private_ = {"/tmp", "/home/u"};
  trial.deny = {"/home/u/.ssh"};
  config.trial = monitor::ClassifierRules::From(trial, "/home/u/ws");
  StraceMapper mapper(std::move(config));
  auto e = One(mapper,
               "I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /, 0x1 /etc/passwd, "
               "O_RDONLY, 0o0) = 3 (0x3) (1µs)");
  ASSERT_TRUE(e);
  EXPECT_EQ(File(*e).result, events::Verdict::kWouldDeny);
  EXPECT_EQ(File(*e).path_class, events::PathClass::kOutside);
  EXPECT_EQ(File(*e).error, 0);
  // What the trial grants stays quiet, through the root's /lib -> usr/lib too.
  EXPECT_FALSE(One(mapper,
                   "I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /, 0x1 /usr/lib/x.so, "
                   "O_RDONLY, 0o0) = 3 (0x3) (1µs)"));
  EXPECT_FALSE(One(mapper,
                   "I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /, 0x1 /lib/x.so, "
                   "O_RDONLY, 0o0) = 3 (0x3) (1µs)"));
}

TEST(StraceTest, LearnModeLogsEveryFileAndCountsEverySyscall) {
  StraceMapperConfig config = Config();
  config.log_all_files = config.census = true;
  StraceMapper mapper(std::move(config));
  auto e = One(mapper,
               "I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /, 0x1 /etc/passwd, "
               "O_RDONLY, 0o0) = 3 (0x3) (1µs)");
  ASSERT_TRUE(e);  // a plain read of a grant: logged for learning
  EXPECT_EQ(File(*e).path_class, events::PathClass::kAllowedReadOnly);
  EXPECT_FALSE(One(mapper, "I1 2 3 strace.go:596] [   5:   5] sh X getuid() = 0 (0x0) (1µs)"));
  EXPECT_FALSE(One(mapper, "I1 2 3 strace.go:596] [   5:   5] sh X getuid() = 0 (0x0) (1µs)"));
  auto counts = mapper.TakeCounts();
  ASSERT_EQ(counts.size(), 2u);
  const auto& getuid = std::get<events::SyscallEvent>(counts[0].payload);
  EXPECT_EQ(getuid.name, "getuid");
  EXPECT_EQ(getuid.count, 2u);
  EXPECT_EQ(getuid.action, events::SyscallAction::kCounted);
  EXPECT_EQ(std::get<events::SyscallEvent>(counts[1].payload).name, "openat");
  EXPECT_TRUE(mapper.TakeCounts().empty());
}

}  // namespace
}  // namespace gander::sandbox::gvisor
