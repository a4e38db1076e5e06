// The syscalls no MCP server needs, and the argument patterns that make a syscall one of
// them. One table serves the filter compiler (launcher: the BPF rules) and the monitor (which
// reports a denial before answering with its errno, and in census mode, where every syscall
// reaches it, decides from the same patterns).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gander::policies {

// (args[arg] & mask) == value.
struct ArgPattern {
  int arg = 0;
  uint64_t mask = 0;
  uint64_t value = 0;
};

struct DeniedSyscall {
  std::string_view name;
  int error;                       // errno the process gets
  std::vector<ArgPattern> any_of;  // empty: every call; else calls matching any pattern
  std::string_view label;          // how doctor and the docs name it ("clone(CLONE_NEW*)")
  bool silent = false;             // a compatibility answer (clone3 -> ENOSYS), not a denial
};

struct DenyOptions {
  // Without namespaces: socket() for AF_INET, AF_INET6, AF_UNIX (see SeccompOptions), and
  // listen() (no listener on the host's network).
  bool deny_host_sockets = false;
  // ... but the egress broker sees every inet connect and send and Landlock refuses the
  // extension's own TCP connect and bind: socket() is refused for AF_UNIX and for everything
  // but stream sockets of plain TCP (no UDP without a network namespace).
  bool inet_brokered = false;
  // memfd_create without MFD_NOEXEC_SEAL (EACCES): an executable memfd would run code no
  // grant names (execveat(fd, "", ..., AT_EMPTY_PATH), or /proc/self/fd/N). Where the pid
  // namespace's vm.memfd_noexec=2 seals them instead, this is off.
  bool deny_exec_memfd = false;
};

std::vector<DeniedSyscall> DeniedSyscalls(const DenyOptions& options);

// Does this call match the entry (its patterns, if any)?
bool Matches(const DeniedSyscall& entry, const uint64_t args[6]);

}  // namespace gander::policies
