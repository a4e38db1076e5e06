#include "sandbox/seccomp_filter.h"

#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <set>

#include "common/unique_fd.h"
#include "policies/policy.h"

namespace gander::sandbox {
namespace {

struct CtxDeleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxDeleter>;

Error SeccompError(int rc, const std::string& what) { return Error{-rc, "seccomp: " + what}; }

uint32_t DefaultAction(scmp_filter_ctx ctx) {
  uint32_t action = 0;
  seccomp_attr_get(ctx, SCMP_FLTATR_ACT_DEFAULT, &action);
  return action;
}

// The highest syscall number the allowlist refuses (beyond it the kernel answers ENOSYS
// itself); x86_64's x32 numbers start at 512 and are a foreign ABI here (killed).
constexpr int kMaxSyscallNr = 1023;

// The syscall numbers of the native architecture that `allow` (plus policies::kImplicitSyscalls)
// leaves out, named by libseccomp or not.
std::set<int> Unlisted(const std::vector<std::string>& allow) {
  std::set<int> allowed;
  auto add = [&](const char* name) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr >= 0) allowed.insert(nr);
  };
  for (const std::string& name : allow) add(name.c_str());
  for (const char* name : policies::kImplicitSyscalls) add(name);
  std::set<int> out;
  for (int nr = 0; nr <= kMaxSyscallNr; ++nr) {
    if (!allowed.contains(nr)) out.insert(nr);
  }
  return out;
}

// Adds one rule, conditional on `pattern` when given. In census mode NOTIFY is already the
// default: libseccomp refuses a redundant rule.
int AddRule(scmp_filter_ctx filter, uint32_t action, int nr, const policies::ArgPattern* pattern) {
  if (action == DefaultAction(filter)) return 0;
  if (!pattern) return seccomp_rule_add(filter, action, nr, 0);
  return seccomp_rule_add(filter, action, nr, 1,
                          scmp_arg_cmp{static_cast<unsigned>(pattern->arg), SCMP_CMP_MASKED_EQ,
                                       pattern->mask, pattern->value});
}

// Denials go through the supervisor (reported, then refused with the same errno) when it
// can; the supervisor applies the same table (policies/denied_syscalls.h).
Status AddDenials(scmp_filter_ctx filter, const SeccompOptions& options, SeccompProgram& program) {
  const bool notify = options.notify;
  if (!options.broker_only) {
    program.denials = policies::DeniedSyscalls({.deny_host_sockets = options.deny_host_sockets,
                                                .inet_brokered = options.notify && options.network,
                                                .deny_exec_memfd = options.deny_exec_memfd});
  }
  for (const auto& denied : program.denials) {
    int nr = seccomp_syscall_resolve_name(std::string(denied.name).c_str());
    if (nr == __NR_SCMP_ERROR || nr < 0) continue;
    uint32_t action = notify && !denied.silent ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(denied.error);
    if (denied.any_of.empty()) {
      program.unlisted.erase(nr);  // the floor's unconditional denial stands
      if (int rc = AddRule(filter, action, nr, nullptr); rc < 0) {
        return SeccompError(rc, "deny " + std::string(denied.name));
      }
    }
    // A conditional one for a syscall the allowlist refuses whole: the refusal below covers
    // it (the monitor still answers the floor's calls with the floor's errno).
    const bool listed = !program.unlisted.contains(nr);
    for (const auto& pattern : listed ? denied.any_of : std::vector<policies::ArgPattern>{}) {
      if (int rc = AddRule(filter, action, nr, &pattern); rc < 0) {
        return SeccompError(rc, "deny " + std::string(denied.label));
      }
    }
    program.denied_syscalls.emplace_back(denied.label);
  }
  return {};
}

// Watched syscalls: recorded by the supervisor, then continued (the mount view and Landlock
// enforce; the notification only observes). In census mode they notify anyway.
Status AddWatches(scmp_filter_ctx filter, const SeccompOptions& options,
                  const std::set<int>& unlisted) {
  for (const auto& watched : policies::WatchedSyscalls()) {
    if (static_cast<int>(watched.level) > static_cast<int>(options.files)) continue;
    int nr = seccomp_syscall_resolve_name(std::string(watched.name).c_str());
    if (nr == __NR_SCMP_ERROR || nr < 0 || unlisted.contains(nr)) continue;
    if (int rc = AddRule(filter, SCMP_ACT_NOTIFY, nr, nullptr); rc < 0) {
      return SeccompError(rc, "watch " + std::string(watched.name));
    }
  }
  return {};
}

// Network syscalls: decided by the egress broker on a copy of the address. sendto without an
// address (a register the filter can read) uses the connection decided at connect();
// sendmsg on the hand-off fd is the listener's own delivery and must not wait for it.
Status AddNetworkWatches(scmp_filter_ctx filter, const SeccompOptions& options,
                         const std::set<int>& unlisted) {
  auto listed = [&](int nr) { return !unlisted.contains(nr); };
  for (const char* name : {"connect", "sendmmsg"}) {
    if (!listed(seccomp_syscall_resolve_name(name))) continue;
    if (int rc = seccomp_rule_add(filter, SCMP_ACT_NOTIFY, seccomp_syscall_resolve_name(name), 0);
        rc < 0) {
      return SeccompError(rc, std::string("watch ") + name);
    }
  }
  if (int rc = listed(SCMP_SYS(sendto))
                   ? seccomp_rule_add(filter, SCMP_ACT_NOTIFY, SCMP_SYS(sendto), 1,
                                      SCMP_A4(SCMP_CMP_NE, 0))
                   : 0;
      rc < 0) {
    return SeccompError(rc, "watch sendto");
  }
  if (int rc =
          listed(SCMP_SYS(sendmsg))
              ? seccomp_rule_add(filter, SCMP_ACT_NOTIFY, SCMP_SYS(sendmsg), 1,
                                 SCMP_A0(SCMP_CMP_NE, static_cast<uint64_t>(options.handoff_fd)))
              : 0;
      rc < 0) {
    return SeccompError(rc, "watch sendmsg");
  }
  return {};
}

// The allowlist's refusals, through the supervisor (reported as denied) when notifying.
// sendmsg stays allowed on the hand-off fd: the listener travels over it before exec.
Status RefuseUnlisted(scmp_filter_ctx filter, const SeccompOptions& options,
                      const std::set<int>& unlisted) {
  const uint32_t unlisted_action =
      options.notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(static_cast<uint32_t>(kUnlistedErrno));
  for (int nr : unlisted) {
    int rc = 0;
    if (nr == SCMP_SYS(sendmsg) && options.handoff_fd >= 0) {
      rc = seccomp_rule_add(filter, unlisted_action, nr, 1,
                            SCMP_A0(SCMP_CMP_NE, static_cast<uint64_t>(options.handoff_fd)));
    } else {
      rc = seccomp_rule_add(filter, unlisted_action, nr, 0);
    }
    if (rc < 0) {
      char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
      bool named = name != nullptr;
      free(name);
      // A number libseccomp has no name for may be refused by it: the kernel has no such
      // syscall either (ENOSYS), unless it is newer than libseccomp.
      if (!named) continue;
      return SeccompError(rc, "refuse unlisted syscall " + std::to_string(nr));
    }
  }
  return {};
}

// Exports the BPF program into memory: the child installs it with one seccomp() call.
Status ExportBpf(scmp_filter_ctx filter, std::vector<sock_filter>& instructions) {
  UniqueFd memfd(memfd_create("gander-seccomp", MFD_CLOEXEC));
  if (!memfd) return ErrnoError("memfd_create");
  if (int rc = seccomp_export_bpf(filter, memfd.get()); rc < 0) {
    return SeccompError(rc, "export BPF");
  }
  off_t size = lseek(memfd.get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0) return MakeError("seccomp: bad BPF size");
  instructions.resize(size / sizeof(sock_filter));
  if (pread(memfd.get(), instructions.data(), size, 0) != size) {
    return ErrnoError("seccomp: read back BPF");
  }
  return {};
}

}  // namespace

Result<SeccompProgram> CompileSeccompFilter(const SeccompOptions& options) {
  const bool notify = options.notify;
  Ctx ctx(seccomp_init(notify && options.census ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW));
  if (!ctx) return MakeError("seccomp_init failed");
  SeccompProgram program;
  program.notify = notify;
  const scmp_filter_ctx filter = ctx.get();

  // A foreign ABI (int 0x80, x32 on x86_64) kills the whole process: its syscall numbers
  // would bypass every rule below. Only the native architecture is added to the filter.
  if (int rc = seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0) {
    return SeccompError(rc, "set bad-arch action");
  }
  // The filter is installed after no_new_privs; let libseccomp not set it again.
  if (int rc = seccomp_attr_set(filter, SCMP_FLTATR_CTL_NNP, 0); rc < 0) {
    return SeccompError(rc, "set nnp attribute");
  }

  const bool allowlist = options.allow && !options.census && !options.broker_only;
  if (allowlist) {
    program.unlisted = Unlisted(*options.allow);
    // Some 400 rules: a binary search instead of a linear scan on every syscall.
    if (int rc = seccomp_attr_set(filter, SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0) {
      return SeccompError(rc, "set optimize attribute");
    }
  }

  if (Status s = AddDenials(filter, options, program); !s) return std::move(s).error();
  if (notify && !options.census && !options.broker_only) {
    if (Status s = AddWatches(filter, options, program.unlisted); !s) return std::move(s).error();
  }
  if (notify && options.network && !options.census) {
    if (Status s = AddNetworkWatches(filter, options, program.unlisted); !s) {
      return std::move(s).error();
    }
  }
  if (Status s = RefuseUnlisted(filter, options, program.unlisted); !s) {
    return std::move(s).error();
  }

  if (notify && options.census && options.handoff_fd >= 0) {
    policies::ArgPattern handoff{0, 0xffffffffu, static_cast<uint64_t>(options.handoff_fd)};
    if (int rc = AddRule(filter, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), &handoff); rc < 0) {
      return SeccompError(rc, "allow the listener hand-off");
    }
  }

  if (Status s = ExportBpf(filter, program.instructions); !s) return std::move(s).error();
  return program;
}

}  // namespace gander::sandbox
