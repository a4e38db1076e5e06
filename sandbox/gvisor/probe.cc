#include "sandbox/gvisor/probe.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>

#include "common/unique_fd.h"
#include "sandbox/gvisor/runsc.h"

namespace gander::sandbox::gvisor {
namespace {

// The first line `runsc --version` prints, or "".
std::string RunscVersion() {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen("runsc --version 2>/dev/null", "r"), pclose);
  if (!pipe) return "";
  std::array<char, 256> line{};
  if (!fgets(line.data(), line.size(), pipe.get())) return "";
  std::string text = line.data();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

ProbeResult TryRunsc(const std::string& platform) {
  BundleSpec spec;
  for (const char* dir : {"/usr", "/bin", "/lib", "/lib64", "/etc"}) {
    if (access(dir, F_OK) == 0) {
      spec.mounts.push_back({.kind = MountOp::Kind::kBind,
                             .source = dir,
                             .target = dir,
                             .writable = false,
                             .executable = true});
    }
  }
  spec.mounts.push_back({.kind = MountOp::Kind::kProc,
                         .source = "proc",
                         .target = "/proc",
                         .writable = false,
                         .executable = false});
  spec.mounts.push_back({.kind = MountOp::Kind::kDev,
                         .source = "tmpfs",
                         .target = "/dev",
                         .writable = false,
                         .executable = false});
  spec.argv = {"/bin/true"};
  spec.envp = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  UniqueFd null(open("/dev/null", O_RDWR | O_CLOEXEC));
  RunscOptions options;
  options.platform = platform;
  auto run = StartGvisor(spec, options, null.get(), null.get(), null.get(), "doctor");
  if (!run) return {false, run.error().Describe()};
  // ptrace starts in well under a second here; KVM can hang (nested virtualisation): bounded.
  const int timeout_s = platform.empty() ? 30 : 5;
  pollfd pfd{(*run)->pidfd(), POLLIN, 0};
  if (poll(&pfd, 1, timeout_s * 1000) != 1) {
    return {false, "/bin/true did not exit within " + std::to_string(timeout_s) + " s"};
  }
  siginfo_t info{};
  if (waitid(static_cast<idtype_t>(P_PIDFD), (*run)->pidfd(), &info, WEXITED) != 0) {
    return {false, "waitid failed"};
  }
  if (info.si_code == CLD_EXITED && info.si_status == 0) return {true, ""};
  if (info.si_code == CLD_EXITED && info.si_status == 127) return {false, "runsc not found"};
  return {false, "/bin/true under runsc exited with " + std::to_string(info.si_status)};
}

void ReportGvisor(std::ostream& out, bool probe_kvm) {
  std::string version = RunscVersion();
  out << "\ngVisor (backend: gvisor)\n";
  if (version.empty()) {
    out << "  runsc             not found (Debian: apt-get install runsc)\n";
    return;
  }
  out << "  runsc             " << version << "\n";
  ProbeResult ptrace = TryRunsc("");
  out << "  rootless run      " << (ptrace.works ? "yes" : "no");
  if (!ptrace.works) out << " (" << ptrace.detail << ")";
  out << "\n";
  bool kvm_device = access("/dev/kvm", R_OK | W_OK) == 0;
  out << "  platform          "
      << (ptrace.works ? "ptrace (runsc's default; what gander uses)" : "none works")
      << "\n  kvm platform      ";
  if (!kvm_device) {
    out << "no (no usable /dev/kvm)\n";
  } else if (!probe_kvm) {
    // The KVM try can take its whole 5 s bound (nested virtualisation): only when asked.
    out << "/dev/kvm present; not tried (gander doctor --kvm tries it, up to 5 s)\n";
  } else {
    ProbeResult kvm = TryRunsc("kvm");
    out << (kvm.works ? "works here" : "no (" + kvm.detail + ")") << "\n";
  }
  if (ptrace.works) {
    out << "  monitoring        gVisor's strace (files, exec, exit; syscall accounting "
           "gvisor-strace, +broker with network.allow)\n"
        << "  network           none without network.allow; allowed hosts through gander's "
           "egress broker and DNS stub, with per-destination accounting as native\n";
  }
}

}  // namespace gander::sandbox::gvisor
