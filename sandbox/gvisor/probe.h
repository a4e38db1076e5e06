// `gander doctor`'s gVisor section: does runsc work here, rootless, and on which platform?
// Found out by running /bin/true the way `gander run --backend gvisor` would.
#pragma once

#include <ostream>
#include <string>

namespace gander::sandbox::gvisor {

struct ProbeResult {
  bool works = false;
  std::string detail;  // the version, or why not
};

// Runs /bin/true under runsc on `platform` ("" for runsc's default, ptrace; or "kvm").
ProbeResult TryRunsc(const std::string& platform);

// Prints the section (never fails: gVisor is optional). The KVM platform is tried only with
// `probe_kvm` (gander doctor --kvm): it can take its whole 5 s bound.
void ReportGvisor(std::ostream& out, bool probe_kvm = false);

}  // namespace gander::sandbox::gvisor
