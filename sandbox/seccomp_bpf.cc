// Emits the filter of seccomp_bpf.h. Every conditional jump skips at most one instruction; a
// jump further away is a `ja` (32-bit offset) fixed up once its target is known, so no branch
// is ever out of the 8-bit reach of jt/jf, whatever the table's size.
#include "sandbox/seccomp_bpf.h"

#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cstddef>
#include <optional>

namespace gander::sandbox {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
// x32 shares x86_64's audit arch; its numbers carry this bit (__X32_SYSCALL_BIT).
constexpr std::optional<uint32_t> kForeignNumbersFrom = 0x40000000u;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
constexpr std::optional<uint32_t> kForeignNumbersFrom = std::nullopt;
#else
#error "seccomp_bpf: no native audit architecture for this target"
#endif

constexpr uint32_t kNrOffset = offsetof(seccomp_data, nr);
constexpr uint32_t kArchOffset = offsetof(seccomp_data, arch);

// The offset of one half of args[arg] (little-endian: the low half first).
uint32_t ArgOffset(int arg, bool high) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * arg + (high ? 4 : 0));
}

uint32_t Low(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t High(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

class Emitter {
 public:
  std::vector<sock_filter> Take() { return std::move(out_); }

  void Load(uint32_t offset) { Add(BPF_LD | BPF_W | BPF_ABS, 0, 0, offset); }
  void And(uint32_t k) { Add(BPF_ALU | BPF_AND | BPF_K, 0, 0, k); }
  void Return(uint32_t action) { Add(BPF_RET | BPF_K, 0, 0, action); }
  // A `ja` whose target is set later by Land(); returns its index.
  size_t JumpLater() {
    Add(BPF_JMP | BPF_JA, 0, 0, 0);
    return out_.size() - 1;
  }
  // Points the `ja` at `from` to the next instruction emitted.
  void Land(size_t from) { out_[from].k = static_cast<uint32_t>(out_.size() - from - 1); }
  // if (A op k) skip the next instruction: the one after this is taken only when it fails.
  void SkipNextIf(uint16_t op, uint32_t k) { Add(BPF_JMP | op | BPF_K, 1, 0, k); }
  // if (A op k) run the next instruction, else skip it.
  void NextOnlyIf(uint16_t op, uint32_t k) { Add(BPF_JMP | op | BPF_K, 0, 1, k); }
  void Jump(uint16_t op, uint32_t k, uint8_t jt, uint8_t jf) {
    Add(BPF_JMP | op | BPF_K, jt, jf, k);
  }

 private:
  void Add(uint16_t code, uint8_t jt, uint8_t jf, uint32_t k) {
    out_.push_back(sock_filter{code, jt, jf, k});
  }
  std::vector<sock_filter> out_;
};

// Numbers [first, first + count) that share one decision.
struct Range {
  int first;
  const SyscallDecision* decision;  // nullptr: the default action
};

// Jumps to `miss` (a `ja` fixed up by the caller) unless the check holds; falls through when it
// does.
void EmitCheck(Emitter& e, const ArgCheck& c, std::vector<size_t>& miss) {
  if (c.op == ArgCheck::Op::kMaskedEqual) {
    for (bool high : {true, false}) {
      const uint32_t mask = high ? High(c.mask) : Low(c.mask);
      const uint32_t value = high ? High(c.value) : Low(c.value);
      if (mask == 0 && value == 0) continue;  // this half cannot fail the test
      e.Load(ArgOffset(c.arg, high));
      if (mask != ~0u) e.And(mask);
      e.SkipNextIf(BPF_JEQ, value);
      miss.push_back(e.JumpLater());
    }
    return;
  }
  // Not equal: holds when either half differs.
  std::vector<size_t> hit;
  e.Load(ArgOffset(c.arg, true));
  e.SkipNextIf(BPF_JEQ, High(c.value));
  hit.push_back(e.JumpLater());
  e.Load(ArgOffset(c.arg, false));
  e.SkipNextIf(BPF_JEQ, Low(c.value));
  hit.push_back(e.JumpLater());
  miss.push_back(e.JumpLater());
  for (size_t at : hit) e.Land(at);
}

void EmitDecision(Emitter& e, const SyscallDecision* d, uint32_t default_action) {
  if (!d) {
    e.Return(default_action);
    return;
  }
  for (const auto& branch : d->branches) {
    std::vector<size_t> miss;
    EmitCheck(e, branch.check, miss);
    e.Return(branch.action);
    for (size_t at : miss) e.Land(at);
  }
  e.Return(d->action);
}

// The binary search over ranges[lo, hi): the syscall number is in A on entry.
void EmitSearch(Emitter& e, const std::vector<Range>& ranges, size_t lo, size_t hi,
                uint32_t default_action) {
  if (hi - lo == 1) {
    EmitDecision(e, ranges[lo].decision, default_action);
    return;
  }
  const size_t mid = lo + (hi - lo) / 2;
  e.NextOnlyIf(BPF_JGE, static_cast<uint32_t>(ranges[mid].first));
  const size_t upper = e.JumpLater();
  EmitSearch(e, ranges, lo, mid, default_action);
  e.Land(upper);
  EmitSearch(e, ranges, mid, hi, default_action);
}

bool SameDecision(const SyscallDecision* a, const SyscallDecision* b, uint32_t default_action) {
  auto simple = [&](const SyscallDecision* d) -> std::optional<uint32_t> {
    if (!d) return default_action;
    if (d->branches.empty()) return d->action;
    return std::nullopt;
  };
  auto sa = simple(a), sb = simple(b);
  return sa && sb && *sa == *sb;
}

// Every number from 0 up, split where the decision changes; a decision with branches is a
// range of its own. The last range runs to the end of the 32-bit space.
std::vector<Range> Ranges(const FilterTable& table) {
  std::vector<Range> ranges;
  for (int nr = 0; nr <= kSyscallNumberLimit; ++nr) {
    const SyscallDecision* d = nullptr;
    if (nr < kSyscallNumberLimit) {
      auto it = table.syscalls.find(nr);
      if (it != table.syscalls.end()) d = &it->second;
    }
    if (!ranges.empty() && SameDecision(ranges.back().decision, d, table.default_action)) {
      continue;
    }
    ranges.push_back({nr, d});
  }
  return ranges;
}

}  // namespace

std::vector<sock_filter> GenerateBpf(const FilterTable& table) {
  Emitter e;
  e.Load(kArchOffset);
  e.SkipNextIf(BPF_JEQ, kNativeArch);
  e.Return(table.bad_arch_action);
  e.Load(kNrOffset);
  if (kForeignNumbersFrom) {
    // ... but -1, which a tracer writes to skip a syscall (the kernel answers ENOSYS), goes on
    // to the default, as in libseccomp's programs.
    e.Jump(BPF_JGE, *kForeignNumbersFrom, 0, 2);
    e.SkipNextIf(BPF_JEQ, 0xffffffffu);
    e.Return(table.bad_arch_action);
  }
  const std::vector<Range> ranges = Ranges(table);
  EmitSearch(e, ranges, 0, ranges.size(), table.default_action);
  return e.Take();
}

}  // namespace gander::sandbox
