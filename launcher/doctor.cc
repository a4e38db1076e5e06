#include "launcher/doctor.h"

#include <unistd.h>

#include "launcher/gvisor/probe.h"
#include "launcher/isolation.h"
#include "launcher/seccomp_filter.h"

namespace gander::launcher {
namespace {

const char* YesNo(bool v) { return v ? "yes" : "no"; }

}  // namespace

int Doctor(std::ostream& out) {
  KernelFeatures f = ProbeKernel(/*try_user_namespaces=*/true);
  auto filter = CompileSeccompFilter();
  bool seccomp = f.seccomp_filter && filter.ok();
  IsolationLevel level = LevelOf(f.user_namespaces, f.landlock_abi > 0, seccomp);

  out << "kernel            " << f.release << "\n"
      << "running as        uid " << getuid() << (getuid() == 0 ? " (root)" : "") << "\n"
      << "user namespaces   " << YesNo(f.user_namespaces);
  if (!f.user_namespaces) out << " (" << f.user_namespaces_detail << ")";
  out << "\n"
      << "landlock          ";
  if (f.landlock_abi > 0) {
    out << "ABI " << f.landlock_abi;
    if (f.landlock_abi < 4) out << " (no TCP rules: ABI 4+)";
    if (f.landlock_abi < 6) out << " (no signal/abstract-socket scoping: ABI 6+)";
  } else {
    out << "no (not built in, or not in the lsm= list)";
  }
  out << "\n"
      << "seccomp filter    " << YesNo(seccomp);
  if (filter.ok()) out << " (" << filter->denied_syscalls.size() << " denied syscalls/forms)";
  out << "\n"
      << "seccomp notify    " << YesNo(f.seccomp_user_notif) << "\n"
      << "pid cap for root  " << YesNo(f.pid_max_per_namespace)
      << " (per-namespace pid_max, Linux 6.14+; RLIMIT_NPROC otherwise, which root ignores)\n";
  for (const auto& note : f.notes) out << "note              " << note << "\n";

  out << "\nisolation level   " << LevelName(level) << "\n";
  switch (level) {
    case IsolationLevel::kFull:
      out << "  gander run applies every layer: namespaces (user, mount, pid, net, ipc, uts,\n"
             "  cgroup) with a pivot_root view built from the policy, "
          << (f.landlock_abi > 0 ? "Landlock, " : "") << "seccomp, no capabilities.\n";
      break;
    case IsolationLevel::kLandlock:
      out << "  user namespaces are refused here, so gander run falls back to Landlock and\n"
             "  seccomp: files outside the policy stay unreadable, but there is no private\n"
             "  /tmp, network or pid namespace. seccomp refuses IPv4, IPv6 and unix sockets\n"
             "  (socketpair still works)"
          << (f.landlock_abi >= 4 ? " and Landlock refuses TCP" : "")
          << "; a descendant that leaves its process group may outlive gander.\n";
      break;
    case IsolationLevel::kSeccomp:
      out << "  neither user namespaces nor Landlock are available: only the syscall filter\n"
             "  and the process hygiene apply. The filesystem is NOT confined.\n";
      break;
    case IsolationLevel::kBasic:
      out << "  seccomp is unavailable: only the empty environment, no_new_privs, a new\n"
             "  session and rlimits apply.\n";
      break;
  }
  out << "  `gander run --require LEVEL` refuses to start below LEVEL.\n";
  gvisor::ReportGvisor(out);
  return level == IsolationLevel::kFull ? 0 : 1;
}

}  // namespace gander::launcher
