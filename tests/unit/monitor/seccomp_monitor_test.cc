// Decisions on seccomp notifications, without a kernel: fake target memory and /proc.
#include "monitor/seccomp_monitor.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <map>
#include <vector>

namespace gander::monitor {
namespace {

class FakeMemory final : public TargetMemory {
 public:
  std::map<uint64_t, std::string> strings;  // address -> bytes (NUL added on read)
  std::map<uint64_t, uint64_t> words;       // address -> 8-byte value

  std::optional<std::string> ReadString(pid_t, uint64_t address, size_t max,
                                        bool* truncated) override {
    auto it = strings.find(address);
    if (it == strings.end()) return std::nullopt;
    *truncated = it->second.size() >= max;
    return it->second.substr(0, max);
  }
  bool ReadBytes(pid_t, uint64_t address, void* out, size_t size) override {
    auto it = words.find(address);
    if (it == words.end() || size > sizeof(uint64_t)) return false;
    std::memcpy(out, &it->second, size);
    return true;
  }
};

class FakeProcesses final : public Processes {
 public:
  std::unique_ptr<ProcessView> View(pid_t) override {
    auto view = std::make_unique<FixedProcessView>();
    view->cwd_path = "/home/u/proj";
    view->fds = {{7, "/home/u"}};
    return view;
  }
  ProcessIdentity Identify(pid_t tid) override { return {tid, 2, "/usr/bin/node"}; }
  std::map<std::string, std::string> links;
  std::optional<std::string> ReadLinkInView(pid_t, const std::string& path) override {
    ++view_reads;
    auto it = links.find(path);
    if (it == links.end()) return std::nullopt;
    return it->second;
  }
  // With `root_handle`, a root is "opened" (a real fd, to have one) and links are read there.
  bool root_handle = false;
  int roots_opened = 0, view_reads = 0, root_reads = 0;
  UniqueFd OpenRoot(pid_t) override {
    if (!root_handle) return {};
    ++roots_opened;
    return UniqueFd(open("/", O_PATH | O_CLOEXEC));
  }
  std::optional<std::string> ReadLinkInRoot(int, const std::string& path) override {
    ++root_reads;
    auto it = links.find(path);
    if (it == links.end()) return std::nullopt;
    return it->second;
  }
};

class NoKernel final : public Unotify {
 public:
  Result<Notification> Receive() override { return Error{ENOENT, "none"}; }
  bool Send(uint64_t, const Response&) override { return true; }
};

int Nr(const char* name) { return seccomp_syscall_resolve_name(name); }

class SeccompMonitorTest : public ::testing::Test {
 protected:
  SeccompMonitorTest() : queue_(64) {
    policies::ExpandedPolicy policy;
    policy.exec = {"/usr"};
    policy.read = {"/etc"};
    policy.write = {"/home/u/proj"};
    policy.private_ = {"/tmp", "/home/u"};
    policy.deny = {"/home/u/.ssh", "/etc/shadow"};
    config_.extension = "fs";
    config_.rules = ClassifierRules::From(policy, "/home/u/proj");
    config_.denials = policies::DeniedSyscalls({});
  }
  SeccompMonitor Make() { return SeccompMonitor(kernel_, memory_, processes_, config_, queue_); }
  Notification Call(const char* name, std::initializer_list<uint64_t> args) {
    Notification n;
    n.id = 1;
    n.pid = 4242;
    n.nr = Nr(name);
    int i = 0;
    for (uint64_t a : args) n.args[i++] = a;
    return n;
  }
  static const events::FileEvent& File(const events::Event& e) {
    return std::get<events::FileEvent>(e.payload);
  }

  NoKernel kernel_;
  FakeMemory memory_;
  FakeProcesses processes_;
  SeccompMonitorConfig config_;
  events::BoundedEventQueue queue_;
};

TEST_F(SeccompMonitorTest, DeniedSyscallIsReportedThenRefused) {
  auto monitor = Make();
  std::vector<events::Event> events;
  Response r = monitor.Decide(Call("ptrace", {16, 1}), events);
  EXPECT_FALSE(r.continue_syscall);
  EXPECT_EQ(r.error, EPERM);
  ASSERT_EQ(events.size(), 1u);
  const auto& s = std::get<events::SyscallEvent>(events[0].payload);
  EXPECT_EQ(s.name, "ptrace");
  EXPECT_EQ(s.action, events::SyscallAction::kDenied);
  EXPECT_EQ(events[0].executable, "/usr/bin/node");
  EXPECT_EQ(events[0].pid, 4242);
}

TEST_F(SeccompMonitorTest, AnUnlistedSyscallIsReportedThenRefusedAfterTheFloor) {
  config_.unlisted = {Nr("mkdir"), Nr("unshare")};
  config_.unlisted_errno = ENOSYS;
  auto monitor = Make();
  std::vector<events::Event> events;
  Response r = monitor.Decide(Call("mkdir", {0, 0755}), events);
  EXPECT_FALSE(r.continue_syscall);
  EXPECT_EQ(r.error, ENOSYS);
  ASSERT_EQ(events.size(), 1u);
  const auto& s = std::get<events::SyscallEvent>(events[0].payload);
  EXPECT_EQ(s.name, "mkdir");
  EXPECT_EQ(s.error, ENOSYS);
  EXPECT_EQ(s.action, events::SyscallAction::kDenied);
  // The floor's answer first: unshare(CLONE_NEWUSER) is EPERM, plain unshare the list's ENOSYS.
  EXPECT_EQ(monitor.Decide(Call("unshare", {CLONE_NEWUSER}), events).error, EPERM);
  EXPECT_EQ(monitor.Decide(Call("unshare", {0}), events).error, ENOSYS);
  EXPECT_EQ(events.size(), 3u);
}

TEST_F(SeccompMonitorTest, ConditionalDenialFollowsTheArguments) {
  auto monitor = Make();
  std::vector<events::Event> events;
  // A plain fork-like clone continues (census mode sends every clone here)...
  EXPECT_TRUE(monitor.Decide(Call("clone", {SIGCHLD}), events).continue_syscall);
  EXPECT_TRUE(events.empty());
  // ...one creating a user namespace is refused.
  Response r = monitor.Decide(Call("clone", {CLONE_NEWUSER | SIGCHLD}), events);
  EXPECT_FALSE(r.continue_syscall);
  ASSERT_EQ(events.size(), 1u);
}

TEST_F(SeccompMonitorTest, SocketFamilyIsComparedAsTheIntTheKernelReads) {
  auto monitor = Make();
  std::vector<events::Event> events;
  EXPECT_TRUE(monitor.Decide(Call("socket", {AF_INET, SOCK_STREAM}), events).continue_syscall);
  // The kernel truncates the family to an int: upper bits must not hide AF_VSOCK.
  for (uint64_t family : {uint64_t{AF_VSOCK}, AF_VSOCK | (uint64_t{1} << 32)}) {
    Response r = monitor.Decide(Call("socket", {family, SOCK_STREAM}), events);
    EXPECT_FALSE(r.continue_syscall) << family;
    EXPECT_EQ(r.error, EAFNOSUPPORT);
  }
}

TEST_F(SeccompMonitorTest, OpenOfADeniedPathIsLoggedAndContinued) {
  auto monitor = Make();
  memory_.strings[0x1000] = "../.ssh/id_rsa";  // relative to the cwd /home/u/proj
  std::vector<events::Event> events;
  Response r =
      monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x1000, O_RDONLY}), events);
  EXPECT_TRUE(r.continue_syscall) << "the mount view enforces; the notification observes";
  ASSERT_EQ(events.size(), 1u);
  const events::FileEvent& f = File(events[0]);
  EXPECT_EQ(f.raw_path, "../.ssh/id_rsa");
  EXPECT_EQ(f.path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(f.path_class, events::PathClass::kDenied);
  EXPECT_EQ(f.result, events::Verdict::kDenied);
  EXPECT_EQ(f.access, events::FileAccess::kRead);
}

TEST_F(SeccompMonitorTest, DirfdRelativeWriteOutsideIsLogged) {
  auto monitor = Make();
  memory_.strings[0x2000] = "../../etc/passwd";
  std::vector<events::Event> events;
  monitor.Decide(Call("openat", {7, 0x2000, O_WRONLY | O_TRUNC}), events);  // fd 7 = /home/u
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(File(events[0]).path, "/etc/passwd");
  EXPECT_EQ(File(events[0]).access, events::FileAccess::kWrite);
  EXPECT_EQ(File(events[0]).path_class, events::PathClass::kAllowedReadOnly);
}

TEST_F(SeccompMonitorTest, WorkspaceAndSystemReadsStayOutOfTheLog) {
  auto monitor = Make();
  memory_.strings[0x3000] = "notes.txt";
  memory_.strings[0x3100] = "/usr/lib/libc.so.6";
  std::vector<events::Event> events;
  monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x3000, O_RDWR}), events);
  monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x3100, O_RDONLY}), events);
  EXPECT_TRUE(events.empty());
  config_.log_all_files = true;  // learn mode logs everything
  auto learning = Make();
  learning.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x3000, O_RDWR}), events);
  EXPECT_EQ(events.size(), 1u);
}

TEST_F(SeccompMonitorTest, WorkspaceSymlinkIsFollowedToWhatItReaches) {
  auto monitor = Make();
  processes_.links["/home/u/proj/innocent"] = "../.ssh/id_rsa";
  memory_.strings[0x7000] = "innocent";
  std::vector<events::Event> events;
  monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x7000, O_RDONLY}), events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(File(events[0]).raw_path, "innocent");
  EXPECT_EQ(File(events[0]).path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(File(events[0]).path_class, events::PathClass::kDenied);
  EXPECT_EQ(events[0].sandbox_pid, 2);
}

// The root is opened once, at the first check, and every later link is read from it.
TEST_F(SeccompMonitorTest, SymlinksAreReadFromTheRootOpenedOnce) {
  processes_.root_handle = true;
  auto monitor = Make();
  processes_.links["/home/u/proj/innocent"] = "../.ssh/id_rsa";
  memory_.strings[0x7000] = "innocent";
  memory_.strings[0x7100] = "plain";
  std::vector<events::Event> events;
  for (int i = 0; i < 3; ++i) {
    monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x7000, O_RDONLY}), events);
    monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x7100, O_RDONLY}), events);
  }
  EXPECT_EQ(processes_.roots_opened, 1);
  EXPECT_EQ(processes_.root_reads, 6);
  EXPECT_EQ(processes_.view_reads, 0);
  ASSERT_EQ(events.size(), 3u);  // the link to ~/.ssh each time; the plain file is no news
  EXPECT_EQ(File(events[2]).path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(File(events[2]).path_class, events::PathClass::kDenied);
}

// The real /proc: a process's NSpid is read past a Groups line longer than any fixed buffer
// (a user with thousands of supplementary groups), the innermost value of it (a process that
// is pid 1 in a pid namespace of its own). Root only: setgroups and CLONE_NEWPID.
TEST(ProcfsProcesses, IdentifyReadsNSpidPastALongGroupsLine) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (setgroups, CLONE_NEWPID)";
  int ready[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    std::vector<gid_t> groups(4000);
    for (size_t i = 0; i < groups.size(); ++i) groups[i] = static_cast<gid_t>(100000 + i);
    if (setgroups(groups.size(), groups.data()) != 0 || unshare(CLONE_NEWPID) != 0) _exit(1);
    pid_t inner = fork();
    if (inner == 0) {
      pause();
      _exit(0);
    }
    if (inner < 0 || write(ready[1], &inner, sizeof(inner)) != sizeof(inner)) _exit(1);
    waitpid(inner, nullptr, 0);
    _exit(0);
  }
  close(ready[1]);
  pid_t inner = 0;
  ASSERT_EQ(read(ready[0], &inner, sizeof(inner)), static_cast<ssize_t>(sizeof(inner)));
  close(ready[0]);
  ProcfsProcesses processes;
  ProcessIdentity id = processes.Identify(inner);
  kill(inner, SIGKILL);
  waitpid(parent, nullptr, 0);
  EXPECT_EQ(id.pid, inner);
  EXPECT_EQ(id.sandbox_pid, 1);
}

// The real /proc: a link read from the open root is the link read through /proc/TID/root,
// for a link, a link behind a linked directory, a plain file, a missing path and the root.
TEST(ProcfsProcesses, ALinkReadFromTheOpenRootIsTheLinkReadThroughProcRoot) {
  char dir_template[] = "/tmp/gander-root-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  ASSERT_EQ(symlink("../etc/passwd", (dir + "/link").c_str()), 0);
  ASSERT_EQ(mkdir((dir + "/real").c_str(), 0700), 0);
  ASSERT_EQ(symlink("target", (dir + "/real/inner").c_str()), 0);
  ASSERT_EQ(symlink(dir.c_str(), (dir + "/up").c_str()), 0);  // absolute, through itself
  ASSERT_EQ(close(open((dir + "/file").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
  ProcfsProcesses processes;
  const pid_t self = getpid();
  UniqueFd root = processes.OpenRoot(self);
  ASSERT_TRUE(root);
  for (const std::string& path : {dir + "/link", dir + "/up/real/inner", dir + "/file",
                                  dir + "/missing", dir + "//link", std::string("/")}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(processes.ReadLinkInRoot(root.get(), path), processes.ReadLinkInView(self, path));
  }
  EXPECT_EQ(processes.ReadLinkInRoot(root.get(), dir + "/link"), "../etc/passwd");
  EXPECT_EQ(processes.ReadLinkInRoot(root.get(), dir + "/up/real/inner"), "target");
  EXPECT_EQ(processes.ReadLinkInRoot(root.get(), dir + "/file"), std::nullopt);
  for (const char* name : {"/real/inner", "/real", "/link", "/up", "/file"}) {
    if (std::string(name) == "/real") {
      rmdir((dir + name).c_str());
    } else {
      unlink((dir + name).c_str());
    }
  }
  rmdir(dir.c_str());
}

TEST_F(SeccompMonitorTest, ProcRootOfAnySandboxProcessIsTheRoot) {
  auto monitor = Make();
  memory_.strings[0x7100] = "/proc/1/root/home/u/.ssh/id_rsa";
  std::vector<events::Event> events;
  monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x7100, O_RDONLY}), events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(File(events[0]).path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(File(events[0]).path_class, events::PathClass::kDenied);
}

TEST_F(SeccompMonitorTest, WriteIntoAReadOnlyGrantIsDenied) {
  auto monitor = Make();
  memory_.strings[0x7200] = "/etc/new";
  std::vector<events::Event> events;
  monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x7200, O_WRONLY | O_CREAT}),
                 events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(File(events[0]).result, events::Verdict::kDenied) << "the bind is read-only";
}

TEST_F(SeccompMonitorTest, RenameLogsBothPaths) {
  auto monitor = Make();
  memory_.strings[0x4000] = "/home/u/.ssh/id_rsa";
  memory_.strings[0x4100] = "/home/u/proj/key";
  std::vector<events::Event> events;
  monitor.Decide(Call("renameat2", {static_cast<uint64_t>(AT_FDCWD), 0x4000,
                                    static_cast<uint64_t>(AT_FDCWD), 0x4100, 0}),
                 events);
  ASSERT_EQ(events.size(), 1u) << "the workspace side is not notable; the denied source is";
  EXPECT_EQ(File(events[0]).path, "/home/u/.ssh/id_rsa");
  EXPECT_EQ(File(events[0]).access, events::FileAccess::kRename);
}

TEST_F(SeccompMonitorTest, ExecRecordsPathAndArgv) {
  auto monitor = Make();
  memory_.strings[0x5000] = "/usr/bin/node";
  memory_.strings[0x5100] = "node";
  memory_.strings[0x5200] = "server.js";
  memory_.words[0x6000] = 0x5100;
  memory_.words[0x6008] = 0x5200;
  memory_.words[0x6010] = 0;
  std::vector<events::Event> events;
  monitor.Decide(Call("execve", {0x5000, 0x6000, 0}), events);
  ASSERT_EQ(events.size(), 1u);
  const auto& p = std::get<events::ProcessEvent>(events[0].payload);
  EXPECT_EQ(p.path, "/usr/bin/node");
  EXPECT_EQ(p.argv, (std::vector<std::string>{"node", "server.js"}));
}

TEST_F(SeccompMonitorTest, UnreadablePathIsStillAnEvent) {
  auto monitor = Make();
  std::vector<events::Event> events;
  EXPECT_TRUE(
      monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0xdead, O_RDONLY}), events)
          .continue_syscall);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(File(events[0]).error, EFAULT);
  EXPECT_EQ(File(events[0]).path_class, events::PathClass::kUnknown);
}

TEST_F(SeccompMonitorTest, FilesOffWatchesNothingButDenials) {
  config_.files = policies::FilesWatch::kOff;
  auto monitor = Make();
  memory_.strings[0x1000] = "/home/u/.ssh/id_rsa";
  std::vector<events::Event> events;
  monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), 0x1000, O_RDONLY}), events);
  EXPECT_TRUE(events.empty());
  monitor.Decide(Call("bpf", {0, 0, 0}), events);
  EXPECT_EQ(events.size(), 1u);
}

TEST_F(SeccompMonitorTest, LoggedFileEventsCarryTheMetricsPathLabel) {
  config_.home = "/home/u";
  config_.workspace = "/home/u/proj";
  auto monitor = Make();
  memory_.strings[0x1000] = "/home/u/.ssh/keys/id_rsa";  // under the deny rule ~/.ssh
  memory_.strings[0x2000] = "/var/lib/secret/x";         // outside: two components
  std::vector<events::Event> events;
  for (uint64_t address : {0x1000, 0x2000}) {
    monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), address, O_RDONLY}), events);
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(File(events[0]).path_label, "~/.ssh");
  EXPECT_EQ(File(events[1]).path_label, "/var/lib");
}

TEST_F(SeccompMonitorTest, ExitGroupIsAProcessExitExceptTheExtensionsOwn) {
  pid_t extension = 3;  // sandbox pid of the extension; FakeProcesses says every pid is 2
  config_.extension_pid = &extension;
  config_.files = policies::FilesWatch::kOff;  // process events do not depend on `files`
  auto monitor = Make();
  std::vector<events::Event> events;
  EXPECT_TRUE(monitor.Decide(Call("exit_group", {0x103}), events).continue_syscall);
  ASSERT_EQ(events.size(), 1u);
  const auto& exit = std::get<events::ProcessEvent>(events[0].payload);
  EXPECT_EQ(exit.action, events::ProcessAction::kExit);
  EXPECT_EQ(exit.exit_code, 3);  // the status's low byte, as wait reports it
  EXPECT_EQ(exit.path, "/usr/bin/node");
  EXPECT_EQ(events[0].pid, 4242);

  extension = 2;  // now the notifying process is the extension: the launcher reports it
  events.clear();
  EXPECT_TRUE(monitor.Decide(Call("exit_group", {0}), events).continue_syscall);
  EXPECT_TRUE(events.empty());
}

TEST_F(SeccompMonitorTest, TrialPolicyTurnsAllowedIntoWouldDeny) {
  policies::ExpandedPolicy trial;
  trial.exec = {"/usr/bin"};
  trial.write = {"/home/u/proj"};
  config_.trial = ClassifierRules::From(trial, "/home/u/proj");
  config_.log_all_files = true;
  auto monitor = Make();
  memory_.strings[0x1000] = "/etc/hosts";       // enforced: read-only grant; trial: outside
  memory_.strings[0x2000] = "/usr/bin/env";     // both allow
  memory_.strings[0x3000] = "/home/u/.ssh/id";  // enforced: denied
  std::vector<events::Event> events;
  for (uint64_t address : {0x1000, 0x2000, 0x3000}) {
    monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), address, O_RDONLY}), events);
  }
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(File(events[0]).result, events::Verdict::kWouldDeny);
  EXPECT_EQ(File(events[0]).path_class, events::PathClass::kOutside);  // the trial's class
  EXPECT_EQ(File(events[1]).result, events::Verdict::kAllowed);
  EXPECT_EQ(File(events[2]).result, events::Verdict::kDenied);
  EXPECT_EQ(File(events[2]).path_class, events::PathClass::kDenied);
}

TEST_F(SeccompMonitorTest, LearnModesRealHomeIsWouldDenyForReadsOnly) {
  // Enforced: learn mode's widening (the real home writable, the host's files readable); on
  // trial: the policy with its private home.
  policies::ExpandedPolicy wide;
  wide.exec = {"/usr", "/srv", "/home/u"};
  wide.write = {"/home/u/proj", "/home/u"};
  wide.private_ = {"/tmp"};
  wide.deny = {"/home/u/.ssh"};
  config_.trial = config_.rules;
  config_.rules = ClassifierRules::From(wide, "/home/u/proj");
  config_.log_all_files = true;
  auto monitor = Make();
  memory_.strings[0x1000] = "/home/u/notes.txt";  // the user's file: hidden under the trial
  memory_.strings[0x2000] = "/home/u/.cache/x";   // written: the trial's tmpfs takes it too
  memory_.strings[0x3000] = "/srv/data/a.csv";    // outside under the trial
  memory_.strings[0x4000] = "/home/u/.ssh/id";    // denied in both
  std::vector<events::Event> events;
  auto open = [&](uint64_t address, uint64_t flags) {
    monitor.Decide(Call("openat", {static_cast<uint64_t>(AT_FDCWD), address, flags}), events);
  };
  open(0x1000, O_RDONLY);
  open(0x2000, O_WRONLY | O_CREAT);
  open(0x3000, O_RDONLY);
  open(0x4000, O_RDONLY);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(File(events[0]).result, events::Verdict::kWouldDeny);
  EXPECT_EQ(File(events[0]).path_class, events::PathClass::kPrivate);
  EXPECT_EQ(File(events[1]).result, events::Verdict::kAllowed);
  EXPECT_EQ(File(events[2]).result, events::Verdict::kWouldDeny);
  EXPECT_EQ(File(events[2]).path_class, events::PathClass::kOutside);
  EXPECT_EQ(File(events[3]).result, events::Verdict::kDenied);
}

TEST_F(SeccompMonitorTest, CountsEverySyscallItSees) {
  auto monitor = Make();
  std::vector<events::Event> events;
  monitor.Decide(Call("getpid", {}), events);
  monitor.Decide(Call("getpid", {}), events);
  monitor.PublishCounts();
  std::vector<events::Event> published;
  struct Collect : events::EventSink {
    std::vector<events::Event>* out;
    void Publish(const events::Event& e) override { out->push_back(e); }
  } sink;
  sink.out = &published;
  queue_.Drain(sink, std::chrono::seconds(1));
  ASSERT_EQ(published.size(), 1u);
  const auto& s = std::get<events::SyscallEvent>(published[0].payload);
  EXPECT_EQ(s.name, "getpid");
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.action, events::SyscallAction::kCounted);
}

}  // namespace
}  // namespace gander::monitor
