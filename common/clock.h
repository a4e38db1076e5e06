// The monotonic clock (CLOCK_MONOTONIC: never set back, unaffected by NTP steps), the one
// clock every timeout, duration and idle check in gander reads. clock_gettime is a vDSO call
// here: no syscall, so no seccomp filter sees it.
#pragma once

#include <time.h>

#include <cstdint>

namespace gander {

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t MonotonicMs() { return MonotonicNs() / 1'000'000; }

}  // namespace gander
