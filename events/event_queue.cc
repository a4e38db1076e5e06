// The bounded, never-blocking event queue (see event_queue.h).
#include "events/event_queue.h"

#include <algorithm>
#include <utility>

namespace gander::events {

BoundedEventQueue::BoundedEventQueue(size_t capacity)
    : capacity_(capacity), slots_(std::min(capacity, kInitialSlots)) {}

void BoundedEventQueue::Grow() {
  std::vector<Slot> bigger(std::min(capacity_, slots_.size() * 2));
  for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
  slots_ = std::move(bigger);
  head_ = 0;
}

bool BoundedEventQueue::Push(Event event) {
  if (size_ == slots_.size() && slots_.size() < capacity_) Grow();
  if (size_ == slots_.size()) {
    ++pending_gap_.count;
    pending_gap_.time_ns = event.time_ns;
    pending_gap_.extension = std::move(event.extension);
    ++dropped_total_;
    return false;
  }
  Slot& slot = slots_[(head_ + size_) % slots_.size()];
  slot.event = std::move(event);
  slot.gap_before = std::exchange(pending_gap_, Gap{});
  ++size_;
  return true;
}

size_t BoundedEventQueue::Drain(EventSink& sink, std::chrono::nanoseconds budget,
                                size_t max_events) {
  const auto start = std::chrono::steady_clock::now();
  size_t delivered = 0;
  bool published = false;
  while (size_ > 0 && delivered < max_events) {
    Slot& slot = slots_[head_];
    if (slot.gap_before.count > 0) PublishGap(sink, std::exchange(slot.gap_before, Gap{}));
    sink.Publish(slot.event);
    slot.event = Event{};  // give the strings' memory back now, not when the slot is reused
    head_ = (head_ + 1) % slots_.size();
    --size_;
    ++delivered;
    published = true;
    if (std::chrono::steady_clock::now() - start >= budget) break;
  }
  if (size_ == 0 && pending_gap_.count > 0) {
    PublishGap(sink, std::exchange(pending_gap_, Gap{}));
    published = true;
  }
  if (published) sink.Flush();
  return delivered;
}

void BoundedEventQueue::PublishGap(EventSink& sink, const Gap& gap) {
  Event notice;
  notice.time_ns = gap.time_ns;
  notice.extension = gap.extension;
  notice.payload = LifecycleEvent{LifecyclePhase::kEventsDropped, std::to_string(gap.count)};
  sink.Publish(notice);
}

}  // namespace gander::events
