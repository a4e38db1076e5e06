// The compiled seccomp filter (sandbox/seccomp_filter.h) judges an int argument on the 32 bits
// the kernel reads: for each rule of the denial table, a call that matches it and one that
// does not keep their verdict when 1 << 32 is ORed into any argument the kernel reads as 32
// bits (socket(AF_UNIX | 1 << 32, ...) is an AF_UNIX socket to the kernel). The filter is
// exported BPF, run here by a small classic-BPF evaluator over seccomp_data, the program the
// kernel would run.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "sandbox/seccomp_filter.h"
#include "tests/unit/sandbox/bpf_evaluator.h"

namespace gander::sandbox {
namespace {

// The arguments each syscall of the denial table reads as 32 bits (int, unsigned int), by the
// kernel's prototypes; clone's flags too (kernel_clone_args takes lower_32_bits of them).
const std::map<std::string, std::set<int>>& IntArgs() {
  static const std::map<std::string, std::set<int>> table{
      {"socket", {0, 1, 2}}, {"ioctl", {0, 1}},       {"sendto", {0, 3, 5}},
      {"sendmsg", {0, 2}},   {"sendmmsg", {0, 2, 3}}, {"clone", {0}},
      {"unshare", {}},       {"memfd_create", {1}},   {"execveat", {0, 4}},
  };
  return table;
}

uint32_t Verdict(const SeccompProgram& program, int nr, const uint64_t args[6]) {
  seccomp_data data{};
  data.nr = nr;
  data.arch = AUDIT_ARCH_X86_64;
#if defined(__aarch64__)
  data.arch = AUDIT_ARCH_AARCH64;
#endif
  for (int i = 0; i < 6; ++i) data.args[i] = args[i];
  return Evaluate(program.instructions, data);
}

void ExpectSameVerdictWithHighBits(const SeccompOptions& options, const std::string& what) {
  auto program = CompileSeccompFilter(options);
  ASSERT_TRUE(program.ok()) << program.error().Describe();
  int checked = 0;
  for (const policies::DeniedSyscall& entry : program->denials) {
    int nr = seccomp_syscall_resolve_name(std::string(entry.name).c_str());
    if (nr < 0) continue;
    auto widths = IntArgs().find(std::string(entry.name));
    if (entry.any_of.empty()) continue;
    ASSERT_NE(widths, IntArgs().end()) << "argument widths of " << entry.name << " unknown";
    // One call matching each pattern, and one matching none (all zero, or the pattern's
    // value with its lowest masked bit flipped).
    std::vector<std::array<uint64_t, 6>> calls{{0, 0, 0, 0, 0, 0}};
    for (const policies::ArgPattern& p : entry.any_of) {
      std::array<uint64_t, 6> call{};
      call[p.arg] = p.value;
      calls.push_back(call);
      call[p.arg] = p.value ^ (p.mask & -p.mask);
      calls.push_back(call);
    }
    for (const auto& call : calls) {
      const uint32_t verdict = Verdict(*program, nr, call.data());
      for (int arg : widths->second) {
        std::array<uint64_t, 6> high = call;
        high[arg] |= uint64_t{1} << 32;
        EXPECT_EQ(Verdict(*program, nr, high.data()), verdict)
            << what << ": " << entry.label << " arg " << arg << " = 0x" << std::hex << high[arg]
            << " (without bit 32: verdict 0x" << verdict << ")";
        high[arg] |= 0xffffffff00000000ULL;
        EXPECT_EQ(Verdict(*program, nr, high.data()), verdict)
            << what << ": " << entry.label << " arg " << arg << " upper half set";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20) << what;
}

TEST(SeccompArgWidth, EveryRuleJudgesIntArgumentsOnTheir32Bits) {
  SeccompOptions options;
  ExpectSameVerdictWithHighBits(options, "namespaces");
  options.notify = true;
  ExpectSameVerdictWithHighBits(options, "namespaces, notify");
  options = {};
  options.deny_host_sockets = true;
  ExpectSameVerdictWithHighBits(options, "no namespaces, no broker");
  options.notify = true;
  options.network = true;
  ExpectSameVerdictWithHighBits(options, "no namespaces, broker");
  options.allow = std::vector<std::string>{"socket", "ioctl", "clone", "memfd_create", "execveat"};
  ExpectSameVerdictWithHighBits(options, "no namespaces, broker, allowlist");
}

// The evaluator itself: a denial it must see (AF_UNIX without namespaces, ERRNO(EACCES)) and
// a call it must let through.
TEST(SeccompArgWidth, TheEvaluatorSeesTheSocketRule) {
  SeccompOptions options;
  options.deny_host_sockets = true;
  auto program = CompileSeccompFilter(options);
  ASSERT_TRUE(program.ok()) << program.error().Describe();
  const uint64_t unix_socket[6] = {AF_UNIX, SOCK_STREAM, 0, 0, 0, 0};
  EXPECT_EQ(Verdict(*program, SCMP_SYS(socket), unix_socket), SECCOMP_RET_ERRNO | EACCES);
  const uint64_t getpid_args[6] = {};
  EXPECT_EQ(Verdict(*program, SCMP_SYS(getpid), getpid_args), SECCOMP_RET_ALLOW);
}

}  // namespace
}  // namespace gander::sandbox
