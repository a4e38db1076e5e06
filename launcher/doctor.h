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

// What doctor says when AppArmor's userns restriction (Ubuntu 23.10+) is what refuses user
// namespaces: how to lift it for `self` only. Empty when it does not apply.
std::string AppArmorUsernsAdvice(bool restricted, bool user_namespaces, const std::string& self);

}  // namespace gander::launcher
