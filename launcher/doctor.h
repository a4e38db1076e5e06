// `gander doctor`: what the kernel allows here, which isolation level `gander run` would apply
// and why.
#pragma once

#include <ostream>
#include <string>

namespace gander::launcher {

// Prints the report; returns 0 when `run` gets full isolation, 1 otherwise.
// `gander doctor [--json] [--kvm]`: exit 0 at isolation level full, else 1. `probe_kvm`: also
// try gVisor's KVM platform (up to 5 s).
int Doctor(std::ostream& out, bool json = false, bool probe_kvm = false);

// AppArmor's userns restriction (Ubuntu 23.10+) as doctor reads it, from the tree at `root`
// ("/" on a host, a fake tree in the unit test): the sysctl
// proc/sys/kernel/apparmor_restrict_unprivileged_userns, gander's profile installed
// (etc/apparmor.d/gander) and loaded (a line "gander (...)" in
// sys/kernel/security/apparmor/profiles, readable by every user).
struct AppArmorUserns {
  bool sysctl_present = false;     // the kernel has the restriction at all
  bool restricted = false;         // ... and it is on (1)
  bool profile_installed = false;  // etc/apparmor.d/gander exists
  bool profile_loaded = false;     // the kernel has a profile named gander
};
AppArmorUserns ReadAppArmorUserns(const std::string& root = "/");

// Full isolation despite the restriction: gander's profile (packaging/apparmor/gander) grants
// `userns` to the program it names. Also true when nothing restricts.
bool AppArmorAllowsUserns(const AppArmorUserns& apparmor);

// What doctor says when AppArmor's restriction is what refuses user namespaces: how to lift it
// for `self` only (the profile to install, load or correct, and the command). Empty when it
// does not apply.
std::string AppArmorUsernsAdvice(const AppArmorUserns& apparmor, bool user_namespaces,
                                 const std::string& self);

}  // namespace gander::launcher
