#include "launcher/doctor.h"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sandbox/cgroup_limit.h"
#include "sandbox/gvisor/probe.h"
#include "sandbox/isolation.h"
#include "sandbox/seccomp_filter.h"

namespace gander::launcher {
namespace {

const char* YesNo(bool v) { return v ? "yes" : "no"; }

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "/usr/bin/gander";
}

int DoctorJson(const sandbox::KernelFeatures& f, bool seccomp, sandbox::IsolationLevel level,
               std::ostream& out) {
  nlohmann::json j;
  j["kernel"] = f.release;
  j["uid"] = getuid();
  j["user_namespaces"] = f.user_namespaces;
  if (!f.user_namespaces) j["user_namespaces_detail"] = f.user_namespaces_detail;
  j["landlock_abi"] = f.landlock_abi;
  j["seccomp_filter"] = seccomp;
  j["seccomp_notify"] = f.seccomp_user_notif;
  j["pid_max_per_namespace"] = f.pid_max_per_namespace;
  j["notes"] = f.notes;
  const sandbox::CgroupPlace cgroup = sandbox::HostCgroupPlace();
  j["run_cgroup"] = sandbox::CgroupKindName(cgroup.kind);
  if (!cgroup.why_not.empty()) j["run_cgroup_detail"] = cgroup.why_not;
  j["isolation_level"] = sandbox::LevelName(level);
  j["egress"] = sandbox::EgressModeName(
      sandbox::EgressModeOf(f.user_namespaces, f.landlock_abi, f.seccomp_user_notif));
  const AppArmorUserns apparmor = ReadAppArmorUserns();
  std::string advice = AppArmorUsernsAdvice(apparmor, f.user_namespaces, SelfExe());
  j["apparmor_userns_restricted"] = !advice.empty();
  if (apparmor.restricted) j["apparmor_profile_loaded"] = apparmor.profile_loaded;
  if (!advice.empty()) j["apparmor_advice"] = advice;
  out << j.dump(2) << "\n";
  return level == sandbox::IsolationLevel::kFull ? 0 : 1;
}

}  // namespace

AppArmorUserns ReadAppArmorUserns(const std::string& root) {
  std::string base = root == "/" ? "" : root;
  AppArmorUserns a;
  std::ifstream sysctl(base + "/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  std::string value;
  a.sysctl_present = static_cast<bool>(sysctl);
  a.restricted = sysctl >> value && value == "1";
  a.profile_installed = access((base + "/etc/apparmor.d/gander").c_str(), F_OK) == 0;
  // One line per loaded profile: "NAME (MODE)".
  std::ifstream loaded(base + "/sys/kernel/security/apparmor/profiles");
  for (std::string line; std::getline(loaded, line);) {
    if (line.starts_with("gander (")) a.profile_loaded = true;
  }
  return a;
}

bool AppArmorAllowsUserns(const AppArmorUserns& apparmor) {
  return !apparmor.restricted || apparmor.profile_loaded;
}

std::string AppArmorUsernsAdvice(const AppArmorUserns& apparmor, bool user_namespaces,
                                 const std::string& self) {
  if (!apparmor.restricted || user_namespaces) return "";
  const std::string load = "`sudo apparmor_parser -r /etc/apparmor.d/gander`";
  if (apparmor.profile_loaded) {
    return "AppArmor refuses unprivileged user namespaces here "
           "(kernel.apparmor_restrict_unprivileged_userns=1) and gander's profile is loaded, "
           "but it does not name this gander (" +
           self + "): change the path in /etc/apparmor.d/gander to " + self + " and run " + load +
           ".";
  }
  if (apparmor.profile_installed) {
    return "AppArmor refuses unprivileged user namespaces here "
           "(kernel.apparmor_restrict_unprivileged_userns=1); /etc/apparmor.d/gander is "
           "installed but not loaded: run " +
           load + " (it needs AppArmor 4's apparmor_parser; its path must be " + self + ").";
  }
  return "AppArmor refuses unprivileged user namespaces here "
         "(kernel.apparmor_restrict_unprivileged_userns=1), so gander falls back to Landlock "
         "and seccomp. To lift it for gander only: install the gander package (it ships "
         "/etc/apparmor.d/gander, loaded at install), or copy the profile from "
         "share/gander/apparmor/gander (next to the installed gander) to /etc/apparmor.d/gander "
         "with its path changed to " +
         self +
         " and run `sudo apparmor_parser -r /etc/apparmor.d/gander`. (Setting the sysctl to 0 "
         "lifts it for every program.)";
}

int Doctor(std::ostream& out, bool json, bool probe_kvm) {
  sandbox::KernelFeatures f = sandbox::ProbeKernel(/*try_user_namespaces=*/true);
  auto filter = sandbox::CompileSeccompFilter();
  bool seccomp = f.seccomp_filter && filter.ok();
  sandbox::IsolationLevel level = sandbox::LevelOf(f.user_namespaces, f.landlock_abi > 0, seccomp);
  if (json) return DoctorJson(f, seccomp, level, out);

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
  // The run's cgroup (sandbox/cgroup_limit.h): limits.memory for the whole sandbox, and
  // without a pid namespace what holds the whole process tree.
  const sandbox::CgroupPlace cgroup = sandbox::HostCgroupPlace();
  out << "run cgroup        " << sandbox::CgroupKindName(cgroup.kind);
  if (cgroup.kind == sandbox::CgroupKind::kNone) {
    out << " (" << cgroup.why_not << ")\n"
        << "  limits.memory is only RLIMIT_DATA per process (MAP_SHARED, memfds and tmpfs files "
           "go around it); --require refuses a policy with limits.memory\n";
    if (!f.user_namespaces) {
      out << "  " << sandbox::DescribeShortfall(cgroup, {}, false).tree << "\n";
    }
  } else {
    out << " (limits.memory" << (cgroup.pids ? ", limits.processes" : "")
        << " bind the whole sandbox; what is left in it at the end is killed)\n";
  }
  for (const auto& note : f.notes) out << "note              " << note << "\n";
  const AppArmorUserns apparmor = ReadAppArmorUserns();
  if (auto advice = AppArmorUsernsAdvice(apparmor, f.user_namespaces, SelfExe()); !advice.empty()) {
    out << "apparmor          " << advice << "\n";
  } else if (apparmor.restricted && AppArmorAllowsUserns(apparmor)) {
    out << "apparmor          unprivileged user namespaces are restricted here; gander's profile "
           "is loaded and grants them: full isolation\n";
  }

  out << "\nisolation level   " << sandbox::LevelName(level) << "\n";
  switch (level) {
    case sandbox::IsolationLevel::kFull:
      out << "  gander run applies every layer: namespaces (user, mount, pid, net, ipc, uts,\n"
             "  cgroup) with a pivot_root view built from the policy, "
          << (f.landlock_abi > 0 ? "Landlock, " : "") << "seccomp, no capabilities.\n";
      break;
    case sandbox::IsolationLevel::kLandlock:
      out << "  user namespaces are refused here, so gander run falls back to Landlock and\n"
             "  seccomp: files outside the policy stay unreadable, but there is no private\n"
             "  /tmp, network or pid namespace. seccomp refuses IPv4, IPv6 and unix sockets\n"
             "  (socketpair still works)"
          << (f.landlock_abi >= 4 ? " and Landlock refuses TCP" : "")
          << "; a descendant that leaves its process group may outlive gander.\n";
      break;
    case sandbox::IsolationLevel::kSeccomp:
      out << "  neither user namespaces nor Landlock are available: only the syscall filter\n"
             "  and the process hygiene apply. The filesystem is NOT confined.\n";
      break;
    case sandbox::IsolationLevel::kBasic:
      out << "  seccomp is unavailable: only the empty environment, no_new_privs, a new\n"
             "  session and rlimits apply.\n";
      break;
  }
  out << "  `gander run --require LEVEL` refuses to start below LEVEL.\n";

  sandbox::EgressMode egress =
      sandbox::EgressModeOf(f.user_namespaces, f.landlock_abi, f.seccomp_user_notif);
  out << "\negress            " << sandbox::EgressModeName(egress) << "\n";
  switch (egress) {
    case sandbox::EgressMode::kNetnsBroker:
      out << "  the sandbox's network namespace is empty (only lo); every connect and send goes\n"
             "  to gander's broker, which relays the policy's TCP destinations; DNS is gander's\n"
             "  stub, which answers only the names the policy allows.\n";
      break;
    case sandbox::EgressMode::kBrokerOnly:
      out << "  user namespaces are refused, so there is no empty network namespace behind the\n"
             "  broker: every connect and send still goes to it (it relays the policy's TCP\n"
             "  destinations, refuses the rest) and Landlock refuses the extension's own TCP\n"
             "  connect and bind. Host names work through the DNS stub over TCP for programs\n"
             "  whose resolver honours RES_OPTIONS=use-vc (glibc: Node, curl, Python): the\n"
             "  broker hands their TCP connect to the host's nameserver to the stub. Resolvers\n"
             "  that ignore it (Go's pure-Go resolver, musl) get no DNS: UDP is refused here\n"
             "  (a datagram could leave past the broker); give them address or CIDR rules.\n";
      break;
    case sandbox::EgressMode::kNone:
      out << "  no network for the extension: "
          << (!f.seccomp_user_notif
                  ? "seccomp user notification is unavailable, so there is no broker"
                  : "without user namespaces the broker needs Landlock ABI 4+ (TCP rules)")
          << (f.user_namespaces ? "; the network namespace is empty" : "; socket() is refused")
          << ".\n";
      break;
  }
  sandbox::gvisor::ReportGvisor(out, probe_kvm);
  return level == sandbox::IsolationLevel::kFull ? 0 : 1;
}

}  // namespace gander::launcher
