// A classic-BPF evaluator over seccomp_data: the program the kernel would run, run here, for
// the seccomp tests of this folder. Fails the test (and returns ~0u) on an instruction seccomp
// would not accept.
#pragma once

#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace gander::sandbox {

// Runs `program` over `data` as the kernel's classic BPF interpreter does; fails the test
// (returns ~0u) on an instruction seccomp would not accept.
inline uint32_t Evaluate(const std::vector<sock_filter>& program, const seccomp_data& data) {
  // What the kernel's checker refuses, before running anything: an empty or too long program,
  // one that can fall off its end, a misaligned load.
  if (program.empty() || program.size() > BPF_MAXINSNS ||
      BPF_CLASS(program.back().code) != BPF_RET) {
    ADD_FAILURE() << "the kernel would refuse this program (size " << program.size() << ")";
    return ~0u;
  }
  for (const sock_filter& in : program) {
    if (BPF_CLASS(in.code) == BPF_LD && BPF_MODE(in.code) == BPF_ABS && in.k % 4 != 0) {
      ADD_FAILURE() << "misaligned load at offset " << in.k;
      return ~0u;
    }
  }
  uint32_t a = 0;
  uint32_t x = 0;
  uint32_t mem[BPF_MEMWORDS] = {};
  const auto* bytes = reinterpret_cast<const unsigned char*>(&data);
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& in = program[pc];
    const uint32_t src = BPF_SRC(in.code) == BPF_X ? x : in.k;
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        if (BPF_MODE(in.code) == BPF_ABS && BPF_SIZE(in.code) == BPF_W &&
            in.k + 4 <= sizeof(data)) {
          memcpy(&a, bytes + in.k, 4);
        } else if (BPF_MODE(in.code) == BPF_MEM && in.k < BPF_MEMWORDS) {
          a = mem[in.k];
        } else if (BPF_MODE(in.code) == BPF_IMM) {
          a = in.k;
        } else {
          ADD_FAILURE() << "unsupported load " << in.code;
          return ~0u;
        }
        break;
      case BPF_LDX:
        if (BPF_MODE(in.code) == BPF_MEM && in.k < BPF_MEMWORDS) {
          x = mem[in.k];
        } else if (BPF_MODE(in.code) == BPF_IMM) {
          x = in.k;
        } else {
          ADD_FAILURE() << "unsupported ldx " << in.code;
          return ~0u;
        }
        break;
      case BPF_ST:
        mem[in.k % BPF_MEMWORDS] = a;
        break;
      case BPF_STX:
        mem[in.k % BPF_MEMWORDS] = x;
        break;
      case BPF_ALU:
        switch (BPF_OP(in.code)) {
          case BPF_AND:
            a &= src;
            break;
          case BPF_OR:
            a |= src;
            break;
          case BPF_ADD:
            a += src;
            break;
          case BPF_SUB:
            a -= src;
            break;
          case BPF_LSH:
            a <<= src;
            break;
          case BPF_RSH:
            a >>= src;
            break;
          case BPF_NEG:
            a = -a;
            break;
          default:
            ADD_FAILURE() << "unsupported alu " << in.code;
            return ~0u;
        }
        break;
      case BPF_JMP: {
        if (BPF_OP(in.code) == BPF_JA) {
          pc += in.k;
          break;
        }
        bool taken = false;
        switch (BPF_OP(in.code)) {
          case BPF_JEQ:
            taken = a == src;
            break;
          case BPF_JGT:
            taken = a > src;
            break;
          case BPF_JGE:
            taken = a >= src;
            break;
          case BPF_JSET:
            taken = (a & src) != 0;
            break;
          default:
            ADD_FAILURE() << "unsupported jump " << in.code;
            return ~0u;
        }
        pc += taken ? in.jt : in.jf;
        break;
      }
      case BPF_RET:
        return BPF_RVAL(in.code) == BPF_A ? a : in.k;
      case BPF_MISC:
        if (BPF_MISCOP(in.code) == BPF_TAX) {
          x = a;
        } else {
          a = x;
        }
        break;
    }
  }
  ADD_FAILURE() << "fell off the program";
  return ~0u;
}

}  // namespace gander::sandbox
