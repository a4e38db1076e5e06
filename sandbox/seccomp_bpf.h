// The seccomp filter as a table of per-syscall decisions, and the classic BPF program that
// carries it out. sandbox/seccomp_filter.cc fills the table from the policy; this file only
// turns a table into instructions: a pure function, tested against an evaluator
// (tests/unit/sandbox/seccomp_bpf_test.cc) and, for every filter gander builds, against
// libseccomp's program for the same rules.
//
// Generated at every start in ~20 µs, where libseccomp's rule database took ~0.45 ms.
//
// The program: a foreign architecture (or, on x86_64, the x32 ABI; not syscall -1) gets
// `bad_arch_action`;
// then a binary search over the syscall number, by ranges of numbers that share one decision,
// so a syscall costs a handful of comparisons and the kernel's per-syscall cache (Linux 5.11+)
// sees every syscall whose decision reads no argument as constant. Arguments are compared on
// all 64 bits, as libseccomp does on a 64-bit architecture: a rule that must judge an int on
// its low 32 bits says so with its mask.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <map>
#include <vector>

namespace gander::sandbox {

// One test of one argument: (args[arg] & mask) == value, or args[arg] != value.
struct ArgCheck {
  enum class Op { kMaskedEqual, kNotEqual };
  int arg = 0;  // 0..5
  Op op = Op::kMaskedEqual;
  uint64_t mask = ~uint64_t{0};  // kMaskedEqual only
  uint64_t value = 0;
};

// One syscall's decision: the action of the first branch whose check holds, else `action`.
struct SyscallDecision {
  struct Branch {
    ArgCheck check;
    uint32_t action;
  };
  std::vector<Branch> branches;
  uint32_t action = 0;
};

struct FilterTable {
  uint32_t default_action = 0;   // every syscall without a decision below
  uint32_t bad_arch_action = 0;  // a foreign ABI: its numbers mean other syscalls
  std::map<int, SyscallDecision> syscalls;
};

// The syscall numbers the table may decide (beyond, the default action): the native ABI's
// numbers are all below this on every architecture gander builds for.
inline constexpr int kSyscallNumberLimit = 1024;

// The program. Numbers outside [0, kSyscallNumberLimit) in the table are ignored.
std::vector<sock_filter> GenerateBpf(const FilterTable& table);

}  // namespace gander::sandbox
