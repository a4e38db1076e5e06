#include "sandbox/child_step.h"

#include <cerrno>
#include <cstring>

namespace gander::sandbox {
namespace {

constexpr const char* kChildStepNames[] = {
    "wait for the parent",
    "setsid",
    "cgroup namespace",
    "make mounts private",
    "mount staging tmpfs",
    "pivot_root to staging",
    "mount",
    "set pid_max",
    "set vm.memfd_noexec",
    "make /proc/sys read-only",
    "pivot_root",
    "make root read-only",
    "chdir",
    "sethostname",
    "bring up lo",
    "egress sockets",
    "setrlimit",
    "drop capabilities",
    "no_new_privs",
    "landlock",
    "seccomp",
    "seccomp listener",
    "fork",
    "execve",
    "started",
    "exited",
    "unshare",
    "write uid/gid maps",
    "mount inside the namespace",
    "clone",
};
static_assert(std::size(kChildStepNames) == static_cast<size_t>(ChildStep::kLast) + 1);
static_assert(sizeof(ChildReport) == kChildReportBytes);

}  // namespace

const char* ChildStepName(ChildStep step) {
  auto i = static_cast<size_t>(step);
  return i < std::size(kChildStepNames) ? kChildStepNames[i] : "unknown step";
}

void EncodeChildReport(const ChildReport& report, unsigned char (&out)[kChildReportBytes]) {
  const int32_t fields[3] = {static_cast<int32_t>(report.step), report.err, report.detail};
  std::memcpy(out, fields, sizeof(fields));
}

std::optional<ChildReport> DecodeChildReport(const void* data, size_t size) {
  if (size < kChildReportBytes) return std::nullopt;
  int32_t fields[3];
  std::memcpy(fields, data, sizeof(fields));
  if (fields[0] < 0 || fields[0] > static_cast<int32_t>(ChildStep::kLast)) return std::nullopt;
  return ChildReport{static_cast<ChildStep>(fields[0]), fields[1], fields[2]};
}

std::string DescribeChildReport(const ChildReport& report) {
  return std::string(ChildStepName(report.step)) + ": " + std::strerror(report.err);
}

bool NamespacesRefused(ChildStep step, int err) {
  switch (step) {
    case ChildStep::kClone:
      return err == EPERM || err == ENOSPC || err == EINVAL || err == EUSERS;
    case ChildStep::kMountPrivate:
    case ChildStep::kMountBase:
      return err == EPERM || err == EACCES;
    default:
      return false;
  }
}

}  // namespace gander::sandbox
