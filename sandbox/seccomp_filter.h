// The seccomp filter every sandbox gets: denies what no MCP server needs, refuses clone3
// (its flags are out of the filter's reach, so libc falls back to clone), and kills any
// process that enters the kernel through a foreign ABI (i386 int 0x80, x32).
//
// With user notification, the denied syscalls and the watched ones (monitor.files) go to
// gander's supervisor first: it reports a denial before answering with the errno, and lets a
// watched syscall continue after recording it. In census mode (learn) every syscall does.
//
// Compiled in the parent into plain BPF bytes (seccomp_bpf.h; libseccomp only names the
// syscalls); the child only installs them.
#pragma once

#include <linux/filter.h>

#include <cerrno>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "policies/denied_syscalls.h"
#include "policies/watched_syscalls.h"
#include "sandbox/seccomp_bpf.h"

namespace gander::sandbox {

struct SeccompProgram {
  std::vector<sock_filter> instructions;
  std::vector<std::string> denied_syscalls;      // for doctor and docs
  bool notify = false;                           // the filter has USER_NOTIF actions
  std::vector<policies::DeniedSyscall> denials;  // the table the filter was built from
  // With an allowlist: the syscall numbers it refuses (with kUnlistedErrno, through the
  // supervisor when notifying, which reports each as a denied `syscall` event).
  std::set<int> unlisted;
};

// What a syscall outside `syscalls.allow` fails with. ENOSYS rather than EPERM: it says "this
// kernel has no such syscall", which is exactly what glibc, libuv and Node test for before
// falling back to an older syscall (clone3 -> clone, statx -> fstatat, faccessat2 ->
// faccessat, close_range -> close, pidfd_open -> waitpid, rseq unregistered); EPERM is taken
// as a real failure by most of them (Docker's faccessat2 breakage with glibc 2.33 was that).
inline constexpr int kUnlistedErrno = ENOSYS;

// Every allowlist also allows policies::kImplicitSyscalls (policies/policy.h) and sendmsg on
// the listener hand-off's fd (handoff_fd): the sandbox's own steps before execve.

struct SeccompOptions {
  // Without a network and mount namespace nothing else keeps the extension off the network
  // and off the host's unix sockets (Landlock does not govern connect() to a socket path:
  // think docker.sock): socket() for AF_INET, AF_INET6 and AF_UNIX is refused (EACCES).
  // socketpair() still works, so processes can talk to their own children.
  bool deny_host_sockets = false;
  // No pid namespace with vm.memfd_noexec=2: memfd_create without MFD_NOEXEC_SEAL is refused
  // (EACCES, as that sysctl answered on Linux 6.3-6.5), so no memfd can be executed.
  bool deny_exec_memfd = false;
  // Send denials and watched syscalls to the supervisor (needs SECCOMP_RET_USER_NOTIF).
  bool notify = false;
  policies::FilesWatch files = policies::FilesWatch::kOpens;
  bool census = false;  // every syscall notifies (learn mode)
  // connect, sendto with an address, sendmsg and sendmmsg go to the egress broker (needs
  // notify): an inet connect is never simply let through.
  bool network = false;
  // The fd the extension sends its listener over, between installing the filter and execve.
  // In census mode that one sendmsg must not itself wait for the supervisor it is reaching.
  int handoff_fd = -1;
  // Only the egress broker's part (with network and notify) and the foreign-ABI kill: no
  // denials, no watches. For the gVisor backend, whose sentry makes the host connects of its
  // hostinet stack and installs its own filter over this one.
  bool broker_only = false;
  // `syscalls.allow` (enforce mode): every other syscall fails with kUnlistedErrno, even a
  // watched one; the floor's denials keep their errno, the listed syscalls their watches.
  // Ignored in census mode (learning sees every syscall) and with broker_only.
  std::optional<std::vector<std::string>> allow;
};

Result<SeccompProgram> CompileSeccompFilter(const SeccompOptions& options = {});

// The rules CompileSeccompFilter turns into BPF, in the order written, as libseccomp's
// seccomp_rule_add took them before (tests/unit/sandbox/seccomp_bpf_test.cc feeds the same list
// to libseccomp and compares the two programs): `check`, when given, makes the rule
// conditional. `program` receives everything but the instructions.
struct SeccompRule {
  int nr;
  std::optional<ArgCheck> check;
  uint32_t action;
};
struct SeccompRules {
  uint32_t default_action;
  std::vector<SeccompRule> rules;
};
Result<SeccompRules> SelectSeccompRules(const SeccompOptions& options, SeccompProgram& program);

// How a rule list reads (libseccomp's reading): per syscall, an unconditional rule decides every
// call; else its conditional rules, in the order written, then the default action.
FilterTable TableOf(const SeccompRules& rules);

}  // namespace gander::sandbox
