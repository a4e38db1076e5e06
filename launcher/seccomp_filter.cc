#include "launcher/seccomp_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "common/unique_fd.h"

namespace gander::launcher {
namespace {

// Syscalls no MCP server needs, answered with EPERM. Names unknown to this libseccomp or
// architecture are skipped (they cannot be called here either).
constexpr const char* kDenied[] = {
    // debugging and cross-process memory
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    // filesystem namespace changes
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "setns",
    // kernel attack surface
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "open_by_handle_at", "name_to_handle_at", "keyctl", "add_key",
    "request_key", "lookup_dcookie", "fanotify_init", "quotactl", "quotactl_fd",
    // machine-wide state
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "acct",
    "syslog", "vhangup", "iopl", "ioperm", "uselib", "nfsservctl", "sethostname",
    "setdomainname",
};

// Namespace-creating clone flags; CLONE_NEWUSER is the one that matters most (nested user
// namespaces are the usual kernel exploit entry), the rest are refused alongside it.
constexpr uint64_t kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                     CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

struct CtxDeleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxDeleter>;

Error SeccompError(int rc, const std::string& what) { return Error{-rc, "seccomp: " + what}; }

}  // namespace

Result<SeccompProgram> CompileSeccompFilter(const SeccompOptions& options) {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return MakeError("seccomp_init failed");
  SeccompProgram program;

  // A foreign ABI (int 0x80, x32 on x86_64) kills the whole process: its syscall numbers
  // would bypass every rule below. Only the native architecture is added to the filter.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc < 0) {
    return SeccompError(rc, "set bad-arch action");
  }
  // The filter is installed after no_new_privs; let libseccomp not set it again.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0); rc < 0) {
    return SeccompError(rc, "set nnp attribute");
  }

  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0); rc < 0) {
      return SeccompError(rc, std::string("deny ") + name);
    }
    program.denied_syscalls.emplace_back(name);
  }

  // clone3 keeps its flags in memory the filter cannot read: ENOSYS makes libc use clone.
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc < 0) {
    return SeccompError(rc, "deny clone3");
  }
  program.denied_syscalls.emplace_back("clone3");

  // clone and unshare with any namespace flag (flags are argument 0 of both). Each flag is
  // its own rule because libseccomp compares (arg & mask) == value, and rules OR together.
  for (int nr : {SCMP_SYS(clone), SCMP_SYS(unshare)}) {
    for (uint64_t flag = 1; flag != 0; flag <<= 1) {
      if ((kNamespaceFlags & flag) == 0) continue;
      if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 1,
                                    SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
          rc < 0) {
        return SeccompError(rc, "deny namespace flags");
      }
    }
  }
  program.denied_syscalls.emplace_back("clone(CLONE_NEW*)");
  program.denied_syscalls.emplace_back("unshare(CLONE_NEW*)");

  // Terminal injection: pushing bytes into a terminal's input queue, or console control.
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI),
                                static_cast<unsigned long>(TIOCLINUX)}) {
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request));
        rc < 0) {
      return SeccompError(rc, "deny ioctl");
    }
  }
  program.denied_syscalls.emplace_back("ioctl(TIOCSTI)");
  program.denied_syscalls.emplace_back("ioctl(TIOCLINUX)");

  if (options.deny_host_sockets) {
    for (int family : {AF_INET, AF_INET6, AF_UNIX}) {
      if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                                    SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)));
          rc < 0) {
        return SeccompError(rc, "deny host sockets");
      }
    }
    program.denied_syscalls.emplace_back("socket(AF_INET/AF_INET6/AF_UNIX)");
  }

  // Export the BPF program into memory: the child installs it with one seccomp() call.
  UniqueFd memfd(memfd_create("gander-seccomp", MFD_CLOEXEC));
  if (!memfd) return ErrnoError("memfd_create");
  if (int rc = seccomp_export_bpf(ctx.get(), memfd.get()); rc < 0) {
    return SeccompError(rc, "export BPF");
  }
  off_t size = lseek(memfd.get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0) return MakeError("seccomp: bad BPF size");
  program.instructions.resize(size / sizeof(sock_filter));
  if (pread(memfd.get(), program.instructions.data(), size, 0) != size) {
    return ErrnoError("seccomp: read back BPF");
  }
  return program;
}

}  // namespace gander::launcher
