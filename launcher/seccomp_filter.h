// The seccomp filter every sandbox gets: denies what no MCP server needs, refuses clone3
// (its flags are out of the filter's reach, so libc falls back to clone), and kills any
// process that enters the kernel through a foreign ABI (i386 int 0x80, x32).
//
// Compiled in the parent with libseccomp into plain BPF bytes; the child only installs them.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace gander::launcher {

struct SeccompProgram {
  std::vector<sock_filter> instructions;
  std::vector<std::string> denied_syscalls;  // for doctor and docs
};

struct SeccompOptions {
  // Without a network and mount namespace nothing else keeps the extension off the network
  // and off the host's unix sockets (Landlock does not govern connect() to a socket path:
  // think docker.sock): socket() for AF_INET, AF_INET6 and AF_UNIX is refused (EACCES).
  // socketpair() still works, so processes can talk to their own children.
  bool deny_host_sockets = false;
};

Result<SeccompProgram> CompileSeccompFilter(const SeccompOptions& options = {});

}  // namespace gander::launcher
