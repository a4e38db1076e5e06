#include "sandbox/isolation.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/enum_names.h"
#include "common/path.h"
#include "sandbox/landlock.h"

namespace gander::sandbox {
namespace {

constexpr const char* kLevelNames[] = {"basic", "seccomp", "landlock", "full"};

std::optional<std::string> ReadSysctl(const char* path) {
  std::optional<std::string> text = ReadFile(path);
  if (!text || text->empty()) return std::nullopt;
  return text->substr(0, text->find('\n'));  // the first line
}

bool WriteSelf(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// In a child: create the namespaces, map ourselves, mount a tmpfs. Exit 0, or a ChildReport
// (the step and its errno) on the pipe and exit 1. Returns the report, nullopt when the
// namespaces work; a failure outside the child is reported as kFork.
std::optional<ChildReport> TryUserNamespaces() {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return ChildReport{ChildStep::kFork, errno, -1};
  // Built before fork: the child allocates nothing (gander may have threads).
  const std::string uid_map = std::to_string(getuid()) + " " + std::to_string(getuid()) + " 1";
  const std::string gid_map = std::to_string(getgid()) + " " + std::to_string(getgid()) + " 1";
  pid_t pid = fork();
  if (pid < 0) return ChildReport{ChildStep::kFork, errno, -1};
  if (pid == 0) {
    close(pipefd[0]);
    ChildStep step = ChildStep::kUnshare;
    bool ok = unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                      CLONE_NEWCGROUP | CLONE_NEWPID) == 0;
    if (ok) {
      step = ChildStep::kIdMaps;
      ok = WriteSelf("/proc/self/setgroups", "deny") && WriteSelf("/proc/self/uid_map", uid_map) &&
           WriteSelf("/proc/self/gid_map", gid_map);
    }
    if (ok) {
      step = ChildStep::kProbeMount;
      ok = mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
           mount("tmpfs", "/tmp", "tmpfs", 0, nullptr) == 0;
    }
    if (!ok) {  // one write: the parent reads once
      unsigned char wire[kChildReportBytes];
      EncodeChildReport({step, errno, -1}, wire);
      (void)!write(pipefd[1], wire, sizeof(wire));
      _exit(1);
    }
    _exit(0);
  }
  close(pipefd[1]);
  unsigned char wire[kChildReportBytes];
  ssize_t n = read(pipefd[0], wire, sizeof(wire));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  if (auto report = DecodeChildReport(wire, n > 0 ? static_cast<size_t>(n) : 0)) return report;
  return ChildReport{ChildStep::kFork, 0, -1};  // died without a word
}

}  // namespace

const char* LevelName(IsolationLevel level) { return kLevelNames[static_cast<int>(level)]; }

Result<IsolationLevel> ParseLevel(const std::string& name) {
  for (int i = 0; i < 4; ++i) {
    if (name == kLevelNames[i]) return static_cast<IsolationLevel>(i);
  }
  return MakeError("unknown isolation level '" + name +
                   "' (expected one of: basic, seccomp, landlock, full)");
}

IsolationLevel LevelOf(bool namespaces, bool landlock, bool seccomp) {
  if (!seccomp) return IsolationLevel::kBasic;
  if (namespaces) return IsolationLevel::kFull;
  return landlock ? IsolationLevel::kLandlock : IsolationLevel::kSeccomp;
}

EgressMode EgressModeOf(bool namespaces, int landlock_abi, bool seccomp_notify) {
  if (!seccomp_notify) return EgressMode::kNone;
  if (namespaces) return EgressMode::kNetnsBroker;
  return landlock_abi >= 4 ? EgressMode::kBrokerOnly : EgressMode::kNone;
}

constexpr EnumName<EgressMode> kEgressModeNames[] = {{EgressMode::kNone, "none"},
                                                     {EgressMode::kBrokerOnly, "broker only"},
                                                     {EgressMode::kNetnsBroker, "netns + broker"}};

const char* EgressModeName(EgressMode mode) { return NameOf(kEgressModeNames, mode); }

KernelFeatures ProbeKernel(bool try_user_namespaces) {
  KernelFeatures f;
  struct utsname uts;
  if (uname(&uts) == 0) f.release = uts.release;
  int major = 0, minor = 0;
  std::sscanf(f.release.c_str(), "%d.%d", &major, &minor);
  f.pid_max_per_namespace = major > 6 || (major == 6 && minor >= 14);

  f.landlock_abi = landlock::ProbeAbi();
  // SECCOMP_GET_ACTION_AVAIL answers without installing anything.
  uint32_t action = SECCOMP_RET_ERRNO;
  f.seccomp_filter = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
  action = SECCOMP_RET_USER_NOTIF;
  f.seccomp_user_notif = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;

  if (auto v = ReadSysctl("/proc/sys/user/max_user_namespaces"); v && *v == "0") {
    f.notes.push_back("user.max_user_namespaces is 0: user namespaces are disabled");
  }
  if (auto v = ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone"); v && *v == "0") {
    f.notes.push_back(
        "kernel.unprivileged_userns_clone is 0 (Debian): unprivileged user "
        "namespaces are disabled");
  }
  if (auto v = ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
      v && *v == "1") {
    f.notes.push_back(
        "kernel.apparmor_restrict_unprivileged_userns is 1 (Ubuntu 23.10+): "
        "an AppArmor profile allowing userns is needed for gander");
  }
  if (try_user_namespaces) {
    f.user_namespaces_failure = TryUserNamespaces();
    f.user_namespaces = !f.user_namespaces_failure;
    if (const auto& failure = f.user_namespaces_failure) {
      f.user_namespaces_detail =
          failure->err == 0 ? std::string("probe child failed") : DescribeChildReport(*failure);
    }
  }
  return f;
}

}  // namespace gander::sandbox
