// The one interface through which events leave the monitor: the audit log, the metrics
// exporter and anything later implement EventSink; the supervisor only ever sees this.
#pragma once

#include "events/event.h"

namespace gander::events {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Takes one event. Must not block for long and must not throw; a sink that cannot deliver
  // counts the loss itself.
  virtual void Publish(const Event& event) = 0;
  // Makes what was published durable or visible (end of a batch). Default: nothing to do.
  virtual void Flush() {}
};

}  // namespace gander::events
