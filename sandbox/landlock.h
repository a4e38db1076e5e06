// Landlock, up to the ABI the running kernel offers. Debian 12's headers stop at ABI 2, so the
// newer rights, rule types and the `scoped` field are defined here under our own names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace gander::sandbox::landlock {

// Filesystem rights (uapi/linux/landlock.h).
inline constexpr uint64_t kExecute = 1ULL << 0;
inline constexpr uint64_t kWriteFile = 1ULL << 1;
inline constexpr uint64_t kReadFile = 1ULL << 2;
inline constexpr uint64_t kReadDir = 1ULL << 3;
inline constexpr uint64_t kRemoveDir = 1ULL << 4;
inline constexpr uint64_t kRemoveFile = 1ULL << 5;
inline constexpr uint64_t kMakeChar = 1ULL << 6;
inline constexpr uint64_t kMakeDir = 1ULL << 7;
inline constexpr uint64_t kMakeReg = 1ULL << 8;
inline constexpr uint64_t kMakeSock = 1ULL << 9;
inline constexpr uint64_t kMakeFifo = 1ULL << 10;
inline constexpr uint64_t kMakeBlock = 1ULL << 11;
inline constexpr uint64_t kMakeSym = 1ULL << 12;
inline constexpr uint64_t kRefer = 1ULL << 13;     // ABI 2
inline constexpr uint64_t kTruncate = 1ULL << 14;  // ABI 3
inline constexpr uint64_t kIoctlDev = 1ULL << 15;  // ABI 5
// Network rights (ABI 4) and scopes (ABI 6).
inline constexpr uint64_t kNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kNetConnectTcp = 1ULL << 1;
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr uint64_t kScopeSignal = 1ULL << 1;

// Rights that make sense on a regular file (directory rights on a file rule are EINVAL).
inline constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

// What a policy rule grants, in Landlock terms.
inline constexpr uint64_t kRead = kReadFile | kReadDir;
inline constexpr uint64_t kExec = kRead | kExecute;
inline constexpr uint64_t kWrite = kRead | kWriteFile | kRemoveDir | kRemoveFile | kMakeDir |
                                   kMakeReg | kMakeSock | kMakeFifo | kMakeSym | kRefer | kTruncate;
inline constexpr uint64_t kDevice = kReadFile | kWriteFile | kTruncate | kIoctlDev;

// The highest ABI the kernel supports, 0 when Landlock is off or absent.
int ProbeAbi();

// Every filesystem right the given ABI knows (what a ruleset handles, so denies by default).
uint64_t HandledFsRights(int abi);

// One path rule, applied inside the sandbox by path (the child opens it after pivot_root,
// so bind mounts and the sandbox's own tmpfs mounts are covered by the same code).
struct PathRule {
  std::string path;
  uint64_t access = 0;
};

// Everything the child needs to restrict itself; built in the parent.
struct Ruleset {
  int abi = 0;
  uint64_t handled_fs = 0;
  uint64_t handled_net = 0;  // TCP bind/connect, handled with no rules: all refused
  uint64_t scoped = 0;
  std::vector<PathRule> rules;
};

// Child side, async-signal-safe (no allocation): creates the ruleset, adds each rule whose
// path exists, restricts the calling thread. Returns 0 or an errno; *failed_path names the
// rule that failed.
int ChildApply(const Ruleset& ruleset, const char** failed_path);

}  // namespace gander::sandbox::landlock
