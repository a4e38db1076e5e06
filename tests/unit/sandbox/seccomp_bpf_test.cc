// The BPF generator (sandbox/seccomp_bpf.h): its own cases, and every filter gander builds
// judged the same as libseccomp's program for the same rule list (what the filter was before
// gander generated it), over every syscall number, a foreign architecture and the x32 ABI, and
// the argument values each rule tests (its value, one bit off, the high half set, the hand-off
// fd, zero).
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sandbox/seccomp_filter.h"
#include "tests/unit/sandbox/bpf_evaluator.h"

namespace gander::sandbox {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kNative = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kNative = AUDIT_ARCH_AARCH64;
#endif
constexpr uint32_t kForeign = AUDIT_ARCH_I386;
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kNotify = SECCOMP_RET_USER_NOTIF;

uint32_t Judge(const std::vector<sock_filter>& program, uint32_t arch, uint32_t nr,
               const std::array<uint64_t, 6>& args = {}) {
  seccomp_data data{};
  data.arch = arch;
  data.nr = static_cast<int>(nr);
  for (int i = 0; i < 6; ++i) data.args[i] = args[i];
  return Evaluate(program, data);
}

TEST(SeccompBpf, AnEmptyTableGivesTheDefaultToEveryNativeSyscall) {
  FilterTable table{.default_action = kAllow, .bad_arch_action = kKill, .syscalls = {}};
  auto program = GenerateBpf(table);
  for (uint32_t nr : {0u, 1u, 59u, 511u, 1023u, 1024u, 100000u}) {
    EXPECT_EQ(Judge(program, kNative, nr), kAllow) << nr;
  }
  EXPECT_EQ(Judge(program, kForeign, 0), kKill);
  EXPECT_EQ(Judge(program, kForeign, 59), kKill);
}

#if defined(__x86_64__)
TEST(SeccompBpf, TheX32AbiIsAForeignOne) {
  FilterTable table{.default_action = kAllow, .bad_arch_action = kKill, .syscalls = {}};
  auto program = GenerateBpf(table);
  for (uint32_t nr : {0x40000000u, 0x40000000u + 59, 0x40000000u + 512, 0xfffffffeu}) {
    EXPECT_EQ(Judge(program, kNative, nr), kKill) << std::hex << nr;
  }
  // -1: what a tracer writes to skip a syscall; the kernel answers ENOSYS.
  EXPECT_EQ(Judge(program, kNative, 0xffffffffu), kAllow);
}
#endif

TEST(SeccompBpf, ArgumentChecksCompareAll64Bits) {
  FilterTable table{.default_action = kAllow, .bad_arch_action = kKill, .syscalls = {}};
  table.syscalls[41].branches.push_back(
      {{.arg = 0, .op = ArgCheck::Op::kMaskedEqual, .mask = 0xffffffff, .value = 1},
       SECCOMP_RET_ERRNO | 13});
  table.syscalls[41].action = kAllow;
  table.syscalls[46].branches.push_back(
      {{.arg = 0, .op = ArgCheck::Op::kNotEqual, .value = 3}, kNotify});
  table.syscalls[46].action = kAllow;
  table.syscalls[56].branches.push_back(
      {{.arg = 2, .op = ArgCheck::Op::kMaskedEqual, .mask = 0x7e020000, .value = 0}, kAllow});
  table.syscalls[56].action = SECCOMP_RET_ERRNO | 1;
  auto program = GenerateBpf(table);
  EXPECT_EQ(Judge(program, kNative, 41, {1}), SECCOMP_RET_ERRNO | 13);
  EXPECT_EQ(Judge(program, kNative, 41, {1 | (1ULL << 32)}), SECCOMP_RET_ERRNO | 13);
  EXPECT_EQ(Judge(program, kNative, 41, {2}), kAllow);
  EXPECT_EQ(Judge(program, kNative, 46, {3}), kAllow);
  EXPECT_EQ(Judge(program, kNative, 46, {4}), kNotify);
  EXPECT_EQ(Judge(program, kNative, 46, {3 | (1ULL << 32)}), kNotify);
  EXPECT_EQ(Judge(program, kNative, 56, {0, 0, 0x11}), kAllow);
  EXPECT_EQ(Judge(program, kNative, 56, {0, 0, 0x20000}), SECCOMP_RET_ERRNO | 1);
  EXPECT_EQ(Judge(program, kNative, 57), kAllow);
}

// Every number its own action, alternating: the most ranges a table can make, every jump far.
TEST(SeccompBpf, TheLargestTableStaysWithinTheKernelsLimit) {
  FilterTable table{.default_action = kAllow, .bad_arch_action = kKill, .syscalls = {}};
  for (int nr = 0; nr < kSyscallNumberLimit; nr += 2) {
    table.syscalls[nr].action = SECCOMP_RET_ERRNO | static_cast<uint32_t>(nr % 4096);
  }
  table.syscalls[7].action = kAllow;
  table.syscalls[7].branches.push_back(
      {{.arg = 1, .op = ArgCheck::Op::kNotEqual, .value = 9}, kNotify});
  auto program = GenerateBpf(table);
  EXPECT_LE(program.size(), static_cast<size_t>(BPF_MAXINSNS));
  for (int nr = 0; nr < kSyscallNumberLimit + 4; ++nr) {
    uint32_t want = nr % 2 == 0 && nr < kSyscallNumberLimit
                        ? SECCOMP_RET_ERRNO | static_cast<uint32_t>(nr % 4096)
                        : kAllow;
    if (nr == 7) want = kNotify;
    EXPECT_EQ(Judge(program, kNative, static_cast<uint32_t>(nr)), want) << nr;
  }
  EXPECT_EQ(Judge(program, kNative, 7, {0, 9}), kAllow);
}

// ---------------------------------------------------------------------------------------------
// Against libseccomp

struct Reference {
  std::vector<sock_filter> program;
  std::set<int> refused;  // numbers libseccomp would not take a rule for (it has no name)
};

// libseccomp's program for `rules`, with the attributes CompileSeccompFilter set on it before.
Reference Libseccomp(const SeccompRules& rules) {
  Reference out;
  scmp_filter_ctx ctx = seccomp_init(rules.default_action);
  EXPECT_NE(ctx, nullptr);
  EXPECT_EQ(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), 0);
  EXPECT_EQ(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0), 0);
  if (rules.rules.size() > 100) {
    EXPECT_EQ(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2), 0);
  }
  for (const SeccompRule& r : rules.rules) {
    int rc = 0;
    if (!r.check) {
      rc = seccomp_rule_add(ctx, r.action, r.nr, 0);
    } else if (r.check->op == ArgCheck::Op::kMaskedEqual) {
      rc = seccomp_rule_add(ctx, r.action, r.nr, 1,
                            scmp_arg_cmp{static_cast<unsigned>(r.check->arg), SCMP_CMP_MASKED_EQ,
                                         r.check->mask, r.check->value});
    } else {
      rc = seccomp_rule_add(
          ctx, r.action, r.nr, 1,
          scmp_arg_cmp{static_cast<unsigned>(r.check->arg), SCMP_CMP_NE, r.check->value, 0});
    }
    if (rc < 0) {
      char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, r.nr);
      EXPECT_EQ(name, nullptr) << "libseccomp refused a rule for a syscall it knows: " << r.nr
                               << " (" << name << "), rc " << rc;
      free(name);
      out.refused.insert(r.nr);
    }
  }
  int fd = memfd_create("reference", MFD_CLOEXEC);
  EXPECT_EQ(seccomp_export_bpf(ctx, fd), 0);
  off_t size = lseek(fd, 0, SEEK_END);
  out.program.resize(static_cast<size_t>(size) / sizeof(sock_filter));
  EXPECT_EQ(pread(fd, out.program.data(), static_cast<size_t>(size), 0), size);
  close(fd);
  seccomp_release(ctx);
  return out;
}

// The argument vectors worth asking about for `nr`: zero, and for each check of the list on
// it, its value, one bit off, the high half set, and every other argument left at zero.
std::vector<std::array<uint64_t, 6>> Calls(const SeccompRules& rules, int nr, int handoff_fd) {
  std::vector<std::array<uint64_t, 6>> calls{{}};
  for (const SeccompRule& r : rules.rules) {
    if (r.nr != nr || !r.check) continue;
    const ArgCheck& c = *r.check;
    const uint64_t lowest = c.op == ArgCheck::Op::kMaskedEqual ? (c.mask & -c.mask) : 1;
    const uint64_t high = 0xffffffff00000000u;
    for (uint64_t v : {c.value, c.value ^ lowest, c.value | (uint64_t{1} << 32), c.value | high,
                       static_cast<uint64_t>(handoff_fd), ~uint64_t{0}}) {
      std::array<uint64_t, 6> call{};
      call[c.arg] = v;
      calls.push_back(call);
    }
  }
  return calls;
}

void ExpectSameAsLibseccomp(const SeccompOptions& options, const std::string& what) {
  SCOPED_TRACE(what);
  SeccompProgram meta;
  auto rules = SelectSeccompRules(options, meta);
  ASSERT_TRUE(rules.ok()) << rules.error().Describe();
  auto program = CompileSeccompFilter(options);
  ASSERT_TRUE(program.ok()) << program.error().Describe();
  const Reference ref = Libseccomp(*rules);
  int compared = 0;
  for (uint32_t arch : {kNative, kForeign}) {
    for (int nr = 0; nr < kSyscallNumberLimit + 64; ++nr) {
      for (const auto& call : Calls(*rules, nr, options.handoff_fd)) {
        const uint32_t ours = Judge(program->instructions, arch, static_cast<uint32_t>(nr), call);
        if (arch == kNative && ref.refused.contains(nr)) {
          // libseccomp could not say it; the rule list does (an allowlist's refusal).
          EXPECT_NE(ours, rules->default_action) << "syscall " << nr;
          continue;
        }
        const uint32_t theirs = Judge(ref.program, arch, static_cast<uint32_t>(nr), call);
        ASSERT_EQ(ours, theirs) << "arch 0x" << std::hex << arch << std::dec << " syscall " << nr
                                << " args " << call[0] << "," << call[1] << "," << call[2] << ","
                                << call[3] << "," << call[4] << "," << call[5];
        ++compared;
      }
    }
  }
#if defined(__x86_64__)
  for (uint32_t nr :
       {0x40000000u, 0x40000000u + 1, 0x40000000u + 59, 0x40000200u, 0xfffffffeu, 0xffffffffu}) {
    EXPECT_EQ(Judge(program->instructions, kNative, nr), Judge(ref.program, kNative, nr)) << nr;
  }
#endif
  EXPECT_GT(compared, 2 * kSyscallNumberLimit);
  EXPECT_LE(program->instructions.size(), static_cast<size_t>(BPF_MAXINSNS));
}

// The allowlist a learned node server gets, roughly (tests/e2e/learn_enforce.test.mjs).
std::vector<std::string> NodeAllowlist() {
  return {"read",
          "write",
          "openat",
          "close",
          "fstat",
          "newfstatat",
          "statx",
          "mmap",
          "mprotect",
          "munmap",
          "brk",
          "rt_sigaction",
          "rt_sigprocmask",
          "ioctl",
          "pread64",
          "readlink",
          "access",
          "pipe2",
          "madvise",
          "getpid",
          "socket",
          "connect",
          "sendto",
          "recvfrom",
          "sendmsg",
          "recvmsg",
          "clone",
          "clone3",
          "futex",
          "epoll_create1",
          "epoll_ctl",
          "epoll_wait",
          "epoll_pwait",
          "eventfd2",
          "getrandom",
          "memfd_create",
          "execveat",
          "prlimit64",
          "getcwd",
          "uname",
          "sched_getaffinity",
          "set_robust_list",
          "rseq",
          "dup3",
          "fcntl",
          "wait4",
          "kill",
          "getuid",
          "geteuid",
          "capget"};
}

TEST(SeccompBpf, EveryFilterGanderBuildsJudgesAsLibseccompsDid) {
  using policies::FilesWatch;
  const int handoff = 3;
  for (FilesWatch files : {FilesWatch::kOff, FilesWatch::kOpens, FilesWatch::kAll}) {
    for (bool namespaces : {true, false}) {
      for (bool notify : {true, false}) {
        for (bool network : {true, false}) {
          for (bool allowlist : {false, true}) {
            SeccompOptions o{.deny_host_sockets = !namespaces,
                             .deny_exec_memfd = true,
                             .notify = notify,
                             .files = files,
                             .network = network && notify,
                             .handoff_fd = handoff,
                             .allow = std::nullopt};
            if (allowlist) o.allow = NodeAllowlist();
            ExpectSameAsLibseccomp(o, "files " + std::to_string(static_cast<int>(files)) +
                                          (namespaces ? ", namespaces" : ", no namespaces") +
                                          (notify ? ", notify" : "") +
                                          (network ? ", network" : "") +
                                          (allowlist ? ", allowlist" : ""));
          }
        }
      }
    }
  }
  ExpectSameAsLibseccomp({.notify = true,
                          .census = true,
                          .network = true,
                          .handoff_fd = handoff,
                          .allow = std::nullopt},
                         "census (learn)");
  ExpectSameAsLibseccomp({.deny_host_sockets = true,
                          .notify = true,
                          .census = true,
                          .network = true,
                          .handoff_fd = handoff,
                          .allow = std::nullopt},
                         "census (learn) without namespaces");
  ExpectSameAsLibseccomp({.notify = true,
                          .files = policies::FilesWatch::kOff,
                          .network = true,
                          .broker_only = true,
                          .allow = std::nullopt},
                         "gVisor's broker");
  ExpectSameAsLibseccomp(
      {.deny_exec_memfd = false, .notify = true, .allow = std::vector<std::string>{}},
      "an empty allowlist");
}

}  // namespace
}  // namespace gander::sandbox
