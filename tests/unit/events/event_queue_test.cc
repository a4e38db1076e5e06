// The bounded event queue: Push never blocks, drops are counted and reported in the stream
// where they happened, Drain respects its limits and flushes once per batch.
#include "events/event_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace gander::events {
namespace {

using std::chrono::hours;
using std::chrono::nanoseconds;

// Records what it is given as short strings: "e:<detail>" or "drop:<count>".
struct RecordingSink : EventSink {
  std::vector<std::string> seen;
  int flushes = 0;
  std::vector<std::string> extensions;

  void Publish(const Event& event) override {
    const auto& l = std::get<LifecycleEvent>(event.payload);
    seen.push_back(l.what == LifecyclePhase::kEventsDropped ? "drop:" + l.detail : "e:" + l.detail);
    extensions.push_back(event.extension);
  }
  void Flush() override { ++flushes; }
};

Event Numbered(int n, std::string extension = "ext") {
  Event e;
  e.extension = std::move(extension);
  e.time_ns = n;
  e.payload = LifecycleEvent{LifecyclePhase::kStart, std::to_string(n)};
  return e;
}

TEST(BoundedEventQueue, DeliversInOrder) {
  BoundedEventQueue queue(4);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(queue.Push(Numbered(i)));
  EXPECT_EQ(queue.size(), 3u);
  RecordingSink sink;
  EXPECT_EQ(queue.Drain(sink, hours(1)), 3u);
  EXPECT_EQ(sink.seen, (std::vector<std::string>{"e:0", "e:1", "e:2"}));
  EXPECT_EQ(sink.flushes, 1);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.dropped(), 0u);
}

TEST(BoundedEventQueue, WrapsAround) {
  BoundedEventQueue queue(3);
  RecordingSink sink;
  for (int round = 0; round < 5; ++round) {
    EXPECT_TRUE(queue.Push(Numbered(2 * round)));
    EXPECT_TRUE(queue.Push(Numbered(2 * round + 1)));
    queue.Drain(sink, hours(1));
  }
  ASSERT_EQ(sink.seen.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(sink.seen[i], "e:" + std::to_string(i));
}

TEST(BoundedEventQueue, StartsSmallAndGrowsOnDemand) {
  // A start queues a handful of events: the ring must not allocate its whole capacity up front
  // (8192 slots of ~550 bytes were a third of a /bin/true run's CPU, issue 20).
  BoundedEventQueue queue(8192);
  EXPECT_EQ(queue.capacity(), 8192u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(queue.Push(Numbered(i)));
  EXPECT_LE(queue.allocated(), 16u);
  // Growth keeps the order across a wrapped ring: drain part, then push past the first size.
  RecordingSink sink;
  queue.Drain(sink, hours(1), 2);
  for (int i = 3; i < 100; ++i) EXPECT_TRUE(queue.Push(Numbered(i)));
  EXPECT_GE(queue.allocated(), 98u);
  EXPECT_LE(queue.allocated(), 8192u);
  queue.Drain(sink, hours(1));
  ASSERT_EQ(sink.seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sink.seen[i], "e:" + std::to_string(i));
}

TEST(BoundedEventQueue, GrowthStopsAtCapacity) {
  BoundedEventQueue queue(40);
  for (int i = 0; i < 50; ++i) queue.Push(Numbered(i));
  EXPECT_EQ(queue.size(), 40u);
  EXPECT_EQ(queue.allocated(), 40u);
  EXPECT_EQ(queue.dropped(), 10u);
  RecordingSink sink;
  queue.Drain(sink, hours(1));
  ASSERT_EQ(sink.seen.size(), 41u);
  EXPECT_EQ(sink.seen.front(), "e:0");
  EXPECT_EQ(sink.seen.back(), "drop:10");
}

TEST(BoundedEventQueue, FullQueueDropsAndCounts) {
  BoundedEventQueue queue(2);
  EXPECT_TRUE(queue.Push(Numbered(0)));
  EXPECT_TRUE(queue.Push(Numbered(1)));
  EXPECT_FALSE(queue.Push(Numbered(2, "late")));
  EXPECT_FALSE(queue.Push(Numbered(3, "late")));
  EXPECT_EQ(queue.dropped(), 2u);
  EXPECT_EQ(queue.size(), 2u);
  RecordingSink sink;
  EXPECT_EQ(queue.Drain(sink, hours(1)), 2u);
  EXPECT_EQ(sink.seen, (std::vector<std::string>{"e:0", "e:1", "drop:2"}));
  EXPECT_EQ(sink.extensions.back(), "late");
  EXPECT_EQ(queue.dropped(), 2u) << "the total stays";
  // Reported once.
  EXPECT_EQ(queue.Drain(sink, hours(1)), 0u);
  EXPECT_EQ(sink.seen.size(), 3u);
}

TEST(BoundedEventQueue, GapIsReportedWhereItHappened) {
  BoundedEventQueue queue(2);
  RecordingSink sink;
  queue.Push(Numbered(0));
  queue.Push(Numbered(1));
  queue.Push(Numbered(2));  // dropped
  EXPECT_EQ(queue.Drain(sink, hours(1), 1), 1u);
  queue.Push(Numbered(3));  // queued after the gap
  queue.Push(Numbered(4));  // dropped
  queue.Push(Numbered(5));  // dropped
  queue.Drain(sink, hours(1));
  EXPECT_EQ(sink.seen, (std::vector<std::string>{"e:0", "e:1", "drop:1", "e:3", "drop:2"}));
  EXPECT_EQ(queue.dropped(), 3u);
}

TEST(BoundedEventQueue, DrainRespectsMaxEventsAndBudget) {
  BoundedEventQueue queue(10);
  for (int i = 0; i < 10; ++i) queue.Push(Numbered(i));
  RecordingSink sink;
  EXPECT_EQ(queue.Drain(sink, hours(1), 4), 4u);
  EXPECT_EQ(queue.size(), 6u);
  EXPECT_EQ(sink.flushes, 1);
  // A spent budget still delivers one event, so the queue always makes progress.
  EXPECT_EQ(queue.Drain(sink, nanoseconds(0)), 1u);
  EXPECT_EQ(queue.size(), 5u);
  EXPECT_EQ(sink.flushes, 2);
}

TEST(BoundedEventQueue, NothingToDrainMeansNoFlush) {
  BoundedEventQueue queue(1);
  RecordingSink sink;
  EXPECT_EQ(queue.Drain(sink, hours(1)), 0u);
  EXPECT_EQ(sink.flushes, 0);
}

TEST(BoundedEventQueue, ZeroCapacityDropsEverything) {
  BoundedEventQueue queue(0);
  EXPECT_FALSE(queue.Push(Numbered(0)));
  EXPECT_EQ(queue.dropped(), 1u);
  RecordingSink sink;
  queue.Drain(sink, hours(1));
  EXPECT_EQ(sink.seen, (std::vector<std::string>{"drop:1"}));
}

TEST(BoundedEventQueue, SlowSinkDoesNotStopPush) {
  // Producing faster than draining: memory stays at capacity, everything else is counted.
  BoundedEventQueue queue(8);
  RecordingSink sink;
  int accepted = 0;
  for (int i = 0; i < 10'000; ++i) {
    accepted += queue.Push(Numbered(i));
    if (i % 100 == 0) queue.Drain(sink, hours(1), 1);
  }
  EXPECT_LE(queue.size(), queue.capacity());
  EXPECT_EQ(static_cast<uint64_t>(accepted) + queue.dropped(), 10'000u);
}

}  // namespace
}  // namespace gander::events
