// From a learning run's syscall census (learned.h) to a standard OCI runtime-spec seccomp
// profile (linux.seccomp: what runc, crun and Docker's --security-opt seccomp= load with
// libseccomp). Pure: no file, environment or kernel access.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "learn/learned.h"
#include "policies/denied_syscalls.h"

namespace gander::learn {

struct OciSeccomp {
  std::string json;                   // the profile, pretty-printed, ending with a newline
  std::vector<std::string> left_out;  // seen while learning, never allowed: "ptrace (3x): ..."
  size_t allowed = 0;                 // syscall names allowed (some under argument conditions)
};

// defaultAction SCMP_ACT_ERRNO (EPERM) for every syscall the census did not see; the seen ones
// allowed, except gander's dangerous-syscall floor (`floor`, policies/denied_syscalls.h):
// unconditional entries are left out, conditional ones (clone with CLONE_NEW*, ioctl TIOCSTI,
// socket families, ...) are allowed only for the argument values the floor lets through, and
// compatibility answers (clone3 -> ENOSYS) are kept as their errno whether seen or not.
// `arch` is an SCMP_ARCH_* name; only it is listed (a foreign ABI fails the runtime's arch check).
OciSeccomp OciSeccompProfile(const Learned& learned,
                             const std::vector<policies::DeniedSyscall>& floor,
                             std::string_view arch);

// The SCMP_ARCH_* name of the architecture gander was built for.
std::string_view NativeOciArch();

// (arg & mask) == value patterns that together match exactly the values none of `deny`
// matches (all of `deny` on the same argument). Empty when every value is denied.
std::vector<std::pair<uint64_t, uint64_t>> AllowedPatterns(
    std::span<const policies::ArgPattern> deny);

}  // namespace gander::learn
