// BoundedEventQueue: a bounded FIFO between the code that produces events (the
// notification loop, the relay) and the sinks that may be slow (a disk, a socket), so that
// producing an event never waits. Push never blocks: when the queue is full the event is
// dropped and counted. The supervisor's poll loop drains it into a sink with a time budget.
//
// The ring starts small and doubles up to `capacity` as events pile up: a start that queues a
// handful of events touches a few KiB, not capacity x sizeof(Event) (8192 slots were 4.5 MB
// of page faults per start, a third of a /bin/true run's CPU; issue 20).
//
// Not synchronised: Push and Drain are called with the supervisor loop's lock held (the poll
// loop's turn, or the seccomp listener's thread: monitor/watch_thread.h), one thread at a time.
//
// A gap is never silent: the sink receives a lifecycle `events_dropped` event (detail: how
// many, in decimal) at the place in the stream where events were lost.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "events/event.h"
#include "events/event_sink.h"

namespace gander::events {

class BoundedEventQueue {
 public:
  explicit BoundedEventQueue(size_t capacity);

  // Queues `event`, or drops it (returning false) when the queue is full.
  bool Push(Event event);

  // Publishes queued events to `sink`, oldest first, until the queue is empty, `max_events`
  // were delivered or `budget` has passed (checked after each event, so at least one event is
  // delivered when there is one), then calls sink.Flush() once. Returns how many queued
  // events were delivered (drop notices not counted).
  size_t Drain(EventSink& sink, std::chrono::nanoseconds budget, size_t max_events = SIZE_MAX);

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  size_t allocated() const { return slots_.size(); }  // slots in the ring now (<= capacity)
  bool empty() const { return size_ == 0; }
  uint64_t dropped() const { return dropped_total_; }  // since construction

 private:
  // Events lost at one place in the stream.
  struct Gap {
    uint64_t count = 0;
    int64_t time_ns = 0;    // of the last event lost
    std::string extension;  // of the last event lost
  };
  struct Slot {
    Event event;
    Gap gap_before;  // events dropped just before this one
  };
  static void PublishGap(EventSink& sink, const Gap& gap);
  void Grow();  // doubles the ring (up to capacity_), oldest event first

  static constexpr size_t kInitialSlots = 16;
  size_t capacity_;

  std::vector<Slot> slots_;
  size_t head_ = 0;  // oldest
  size_t size_ = 0;
  Gap pending_gap_;  // drops after the newest queued event
  uint64_t dropped_total_ = 0;
};

}  // namespace gander::events
