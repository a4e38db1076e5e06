// The gVisor backend's pure parts: the OCI config from a mount plan, runsc's argv, and the
// strace lines mapped onto gander's events (launcher/gvisor/).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "launcher/gvisor/bundle.h"
#include "launcher/gvisor/runsc.h"
#include "launcher/gvisor/strace.h"

namespace gander::launcher::gvisor {
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
                                      "run", "--bundle=/r/bundle", "c1"}));
  options.platform = "kvm";
  options.strace_syscalls = {"openat", "execve"};
  EXPECT_EQ(
      RunscRunArgv(options, "/r/state", "/r/bundle", "c1", "/r/log"),
      (std::vector<std::string>{"runsc", "--rootless", "--network=none", "--root=/r/state",
                                "--platform=kvm", "--strace", "--strace-syscalls=openat,execve",
                                "--debug-log=/r/log", "run", "--bundle=/r/bundle", "c1"}));
}

TEST(RunscArgvTest, HostNetworkWithTheBrokerFilter) {
  RunscOptions options;
  options.broker_filter = {sock_filter{0x06, 0, 0, 0x7fff0000}};  // any program: broker mode
  EXPECT_EQ(RunscRunArgv(options, "/r/state", "/r/bundle", "c1", ""),
            (std::vector<std::string>{"runsc", "--rootless", "--network=host", "--root=/r/state",
                                      "run", "--bundle=/r/bundle", "c1"}));
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
          .home = "/home/u",
          .workspace = "/home/u/ws",
          .files = true,
          .tool_calls = nullptr};
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
  auto e = mapper.Map(*ParseStraceLine(kOpenFailed));
  ASSERT_TRUE(e);
  const auto& f = std::get<monitor::FileEvent>(e->payload);
  EXPECT_EQ(f.path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(f.path_class, monitor::PathClass::kDenied);
  EXPECT_EQ(f.path_label, "~/.ssh");
  EXPECT_EQ(f.access, monitor::FileAccess::kRead);
  EXPECT_EQ(f.result, monitor::Verdict::kDenied);
  EXPECT_EQ(f.error, 2);
  EXPECT_EQ(e->sandbox_pid, 2);
}

TEST(StraceTest, RelativePathsResolveAgainstTheDirfdAndPlainReadsOfGrantsAreQuiet) {
  StraceMapper mapper(Config());
  // A write outside, relative to the cwd gVisor prints after AT_FDCWD.
  auto out = mapper.Map(*ParseStraceLine(
      "I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /var, 0x1 lib/x, "
      "O_WRONLY|O_CREAT|O_TRUNC, 0o666) = 0 (0x0) errno=2 (no such file or directory) (1µs)"));
  ASSERT_TRUE(out);
  const auto& f = std::get<monitor::FileEvent>(out->payload);
  EXPECT_EQ(f.path, "/var/lib/x");
  EXPECT_EQ(f.access, monitor::FileAccess::kCreate);
  EXPECT_EQ(f.path_class, monitor::PathClass::kOutside);
  EXPECT_EQ(f.result, monitor::Verdict::kDenied);
  // Reading /etc (a grant) and writing the workspace are no news.
  EXPECT_FALSE(mapper.Map(*ParseStraceLine(
      "I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /, 0x1 /etc/passwd, O_RDONLY, "
      "0o0) = 3 (0x3) (1µs)")));
  EXPECT_FALSE(mapper.Map(*ParseStraceLine(
      "I1 2 3 strace.go:608] [   5:   5] sh X openat(AT_FDCWD /home/u/ws, 0x1 a.txt, "
      "O_WRONLY|O_CREAT, 0o666) = 3 (0x3) (1µs)")));
  // A path holding ", " stays whole.
  auto comma = mapper.Map(*ParseStraceLine(
      "I1 2 3 strace.go:608] [   5:   5] sh X mkdirat(AT_FDCWD /, 0x1 /opt/a, b, 0o777) = 0 "
      "(0x0) errno=2 (x) (1µs)"));
  ASSERT_TRUE(comma);
  EXPECT_EQ(std::get<monitor::FileEvent>(comma->payload).path, "/opt/a, b");
}

TEST(StraceTest, ExecKeepsArgvNeverTheEnvironment) {
  StraceMapper mapper(Config());
  auto e = mapper.Map(*ParseStraceLine(kExec));
  ASSERT_TRUE(e);
  const auto& p = std::get<monitor::ProcessEvent>(e->payload);
  EXPECT_EQ(p.action, monitor::ProcessAction::kExec);
  EXPECT_EQ(p.path, "/usr/bin/cat");
  EXPECT_EQ(p.argv, (std::vector<std::string>{"cat", "/etc/host, name", "a\"b"}));
  for (const auto& arg : p.argv) EXPECT_EQ(arg.find("s3cret"), std::string::npos);
}

TEST(StraceTest, ExitGroupIsAnExitEvent) {
  StraceMapper mapper(Config());
  auto e = mapper.Map(*ParseStraceLine(kExit));
  ASSERT_TRUE(e);
  const auto& p = std::get<monitor::ProcessEvent>(e->payload);
  EXPECT_EQ(p.action, monitor::ProcessAction::kExit);
  EXPECT_EQ(p.exit_code, 1);
}

TEST(StraceTest, FeedReassemblesLinesCutAnywhere) {
  StraceMapper mapper(Config());
  std::string log = std::string(kOpenEntry) + "\n" + kOpenFailed + "\n" + kExec + "\n" + kExit +
                    "\nI1 2 3 main.go:1] other\n";
  std::vector<monitor::Event> events;
  for (size_t i = 0; i < log.size(); i += 7)
    mapper.Feed(std::string_view(log).substr(i, 7), events);
  EXPECT_EQ(events.size(), 3u);
  EXPECT_EQ(mapper.lines(), 3u);
  EXPECT_FALSE(mapper.started());
  mapper.Feed("I1130 12:20:46.646861 2852 loader.go:689] Process should have started...\n", events);
  EXPECT_TRUE(mapper.started());
}

TEST(StraceTest, FilesOffTracesOnlyExecAndExit) {
  EXPECT_EQ(TracedSyscalls(false), (std::vector<std::string>{"execve", "execveat", "exit_group"}));
  auto all = TracedSyscalls(true);
  EXPECT_NE(std::find(all.begin(), all.end(), "openat"), all.end());
}

}  // namespace
}  // namespace gander::launcher::gvisor
