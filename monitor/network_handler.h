// The seccomp monitor hands network syscalls (connect, sendto, sendmsg, sendmmsg) to a
// NetworkHandler: the egress broker in gander, a fake in tests.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "monitor/seccomp_notify.h"

namespace gander::monitor {

class NetworkHandler {
 public:
  virtual ~NetworkHandler() = default;
  // Decides `n` (a call of `syscall`). Returns the answer, or nullopt when the handler answers
  // the notification itself later (a brokered connect waits for its destination). `base` is
  // an event carrying the calling process's identity; events to record go to `events`.
  virtual std::optional<Response> OnSyscall(const Notification& n, std::string_view syscall,
                                            const events::Event& base,
                                            std::vector<events::Event>& events) = 0;
};

}  // namespace gander::monitor
