// FanOutSink: one EventSink that hands every event to several (the audit log and the metrics
// exporter), in the order they were given.
#pragma once

#include <utility>
#include <vector>

#include "events/event_sink.h"

namespace gander::exporters {

class FanOutSink : public events::EventSink {
 public:
  // The sinks are not owned and must outlive this one; null entries are ignored.
  explicit FanOutSink(std::vector<events::EventSink*> sinks) : sinks_(std::move(sinks)) {}

  void Publish(const events::Event& event) override {
    for (auto* sink : sinks_) {
      if (sink) sink->Publish(event);
    }
  }
  void Flush() override {
    for (auto* sink : sinks_) {
      if (sink) sink->Flush();
    }
  }

 private:
  std::vector<events::EventSink*> sinks_;
};

}  // namespace gander::exporters
