#include "sandbox/seccomp_filter.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include <cerrno>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "policies/policy.h"

namespace gander::sandbox {
namespace {

Error SeccompError(const std::string& what) { return Error{EINVAL, "seccomp: " + what}; }

// The highest syscall number the allowlist refuses (beyond it the kernel answers ENOSYS
// itself); x86_64's x32 numbers start at 512 and are a foreign ABI here (killed).
constexpr int kMaxSyscallNr = kSyscallNumberLimit - 1;

// A syscall's number on the native architecture, or -1 when libseccomp has none for `name`.
int SyscallNumber(std::string_view name) {
  int nr = seccomp_syscall_resolve_name(std::string(name).c_str());
  return nr == __NR_SCMP_ERROR || nr < 0 ? -1 : nr;
}

// The syscall numbers of the native architecture that `allow` (plus policies::kImplicitSyscalls)
// leaves out, named by libseccomp or not.
std::set<int> Unlisted(const std::vector<std::string>& allow) {
  std::set<int> allowed;
  auto add = [&](std::string_view name) {
    if (int nr = SyscallNumber(name); nr >= 0) allowed.insert(nr);
  };
  for (const std::string& name : allow) add(name);
  for (const char* name : policies::kImplicitSyscalls) add(name);
  std::set<int> out;
  for (int nr = 0; nr <= kMaxSyscallNr; ++nr) {
    if (!allowed.contains(nr)) out.insert(nr);
  }
  return out;
}

ArgCheck Masked(const policies::ArgPattern& p) {
  return {.arg = p.arg, .op = ArgCheck::Op::kMaskedEqual, .mask = p.mask, .value = p.value};
}

ArgCheck NotEqual(int arg, uint64_t value) {
  return {.arg = arg, .op = ArgCheck::Op::kNotEqual, .value = value};
}

// Adds one rule, conditional on `check` when given. A rule whose action is the default is
// left out (in census mode NOTIFY is the default already).
void AddRule(SeccompRules& rules, int nr, uint32_t action, std::optional<ArgCheck> check = {}) {
  if (nr < 0 || nr > kMaxSyscallNr || action == rules.default_action) return;
  rules.rules.push_back({nr, check, action});
}

// Denials go through the supervisor (reported, then refused with the same errno) when it
// can; the supervisor applies the same table (policies/denied_syscalls.h).
void AddDenials(SeccompRules& rules, const SeccompOptions& options, SeccompProgram& program) {
  const bool notify = options.notify;
  if (!options.broker_only) {
    program.denials = policies::DeniedSyscalls({.deny_host_sockets = options.deny_host_sockets,
                                                .inet_brokered = options.notify && options.network,
                                                .deny_exec_memfd = options.deny_exec_memfd});
  }
  for (const auto& denied : program.denials) {
    int nr = SyscallNumber(denied.name);
    if (nr < 0) continue;
    uint32_t action =
        notify && !denied.silent ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | denied.error;
    if (denied.any_of.empty()) {
      program.unlisted.erase(nr);  // the floor's unconditional denial stands
      AddRule(rules, nr, action);
    }
    // A conditional one for a syscall the allowlist refuses whole: the refusal below covers
    // it (the monitor still answers the floor's calls with the floor's errno).
    const bool listed = !program.unlisted.contains(nr);
    for (const auto& pattern : listed ? denied.any_of : std::vector<policies::ArgPattern>{}) {
      AddRule(rules, nr, action, Masked(pattern));
    }
    program.denied_syscalls.emplace_back(denied.label);
  }
}

// Watched syscalls: recorded by the supervisor, then continued (the mount view and Landlock
// enforce; the notification only observes). In census mode they notify anyway.
void AddWatches(SeccompRules& rules, const SeccompOptions& options, const std::set<int>& unlisted) {
  for (const auto& watched : policies::WatchedSyscalls()) {
    if (static_cast<int>(watched.level) > static_cast<int>(options.files)) continue;
    int nr = SyscallNumber(watched.name);
    if (nr < 0 || unlisted.contains(nr)) continue;
    AddRule(rules, nr, SECCOMP_RET_USER_NOTIF);
  }
}

// Network syscalls: decided by the egress broker on a copy of the address. sendto without an
// address (a register the filter can read) uses the connection decided at connect();
// sendmsg on the hand-off fd is the listener's own delivery and must not wait for it.
void AddNetworkWatches(SeccompRules& rules, const SeccompOptions& options,
                       const std::set<int>& unlisted) {
  auto listed = [&](int nr) { return nr >= 0 && !unlisted.contains(nr); };
  for (const char* name : {"connect", "sendmmsg"}) {
    if (int nr = SyscallNumber(name); listed(nr)) AddRule(rules, nr, SECCOMP_RET_USER_NOTIF);
  }
  if (int nr = SyscallNumber("sendto"); listed(nr)) {
    AddRule(rules, nr, SECCOMP_RET_USER_NOTIF, NotEqual(4, 0));
  }
  if (int nr = SyscallNumber("sendmsg"); listed(nr)) {
    AddRule(rules, nr, SECCOMP_RET_USER_NOTIF,
            NotEqual(0, static_cast<uint64_t>(options.handoff_fd)));
  }
}

// The allowlist's refusals, through the supervisor (reported as denied) when notifying.
// sendmsg stays allowed on the hand-off fd: the listener travels over it before exec.
void RefuseUnlisted(SeccompRules& rules, const SeccompOptions& options,
                    const std::set<int>& unlisted) {
  const uint32_t action = options.notify
                              ? SECCOMP_RET_USER_NOTIF
                              : SECCOMP_RET_ERRNO | static_cast<uint32_t>(kUnlistedErrno);
  const int sendmsg = SyscallNumber("sendmsg");
  for (int nr : unlisted) {
    if (nr == sendmsg && options.handoff_fd >= 0) {
      AddRule(rules, nr, action, NotEqual(0, static_cast<uint64_t>(options.handoff_fd)));
    } else {
      AddRule(rules, nr, action);
    }
  }
}

}  // namespace

Result<SeccompRules> SelectSeccompRules(const SeccompOptions& options, SeccompProgram& program) {
  const bool notify = options.notify;
  SeccompRules rules;
  rules.default_action = notify && options.census ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
  program.notify = notify;

  const bool allowlist = options.allow && !options.census && !options.broker_only;
  if (allowlist) program.unlisted = Unlisted(*options.allow);

  AddDenials(rules, options, program);
  if (notify && !options.census && !options.broker_only) {
    AddWatches(rules, options, program.unlisted);
  }
  if (notify && options.network && !options.census) {
    AddNetworkWatches(rules, options, program.unlisted);
  }
  RefuseUnlisted(rules, options, program.unlisted);

  if (notify && options.census && options.handoff_fd >= 0) {
    AddRule(rules, SyscallNumber("sendmsg"), SECCOMP_RET_ALLOW,
            Masked({0, 0xffffffffu, static_cast<uint64_t>(options.handoff_fd)}));
  }
  // Two unconditional rules with different actions for one syscall would leave the filter's
  // answer to the order they were written in: the tables above must never ask for that.
  std::map<int, uint32_t> always;
  for (const SeccompRule& rule : rules.rules) {
    if (rule.check) continue;
    auto [it, fresh] = always.emplace(rule.nr, rule.action);
    if (!fresh && it->second != rule.action) {
      return SeccompError("two actions for syscall " + std::to_string(rule.nr));
    }
  }
  return rules;
}

// libseccomp's reading of a rule list, which the filter keeps: per syscall, an unconditional
// rule decides every call; else the conditional ones, in the order written, then the default.
FilterTable TableOf(const SeccompRules& rules) {
  FilterTable table;
  table.default_action = rules.default_action;
  std::set<int> unconditional;
  // A foreign ABI (int 0x80, x32 on x86_64) kills the whole process: its syscall numbers
  // would bypass every rule.
  table.bad_arch_action = SECCOMP_RET_KILL_PROCESS;
  for (const SeccompRule& rule : rules.rules) {
    auto [it, fresh] = table.syscalls.try_emplace(rule.nr);
    SyscallDecision& d = it->second;
    if (fresh) d.action = rules.default_action;
    if (!rule.check) {
      d.action = rule.action;
      d.branches.clear();
      unconditional.insert(rule.nr);
    } else if (!unconditional.contains(rule.nr)) {
      d.branches.push_back({*rule.check, rule.action});
    }
  }
  return table;
}

Result<SeccompProgram> CompileSeccompFilter(const SeccompOptions& options) {
  SeccompProgram program;
  auto rules = SelectSeccompRules(options, program);
  if (!rules) return rules.error();
  program.instructions = GenerateBpf(TableOf(*rules));
  // The kernel refuses a longer program (and the child passes the length as 16 bits): say so
  // here, not as a failed start. Gander's filters stay near a thousand instructions at most.
  if (program.instructions.size() > BPF_MAXINSNS) {
    return SeccompError("the filter has " + std::to_string(program.instructions.size()) +
                        " instructions, more than the kernel's " + std::to_string(BPF_MAXINSNS));
  }
  return program;
}

}  // namespace gander::sandbox
