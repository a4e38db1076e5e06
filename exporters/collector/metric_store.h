// MetricStore: gander's metric set (the table in docs/collector.md and DESIGN.md) as tables of
// plain atomics, published to prometheus-cpp as one Collectable rendered at scrape time.
//
// Why not prometheus-cpp's own Counter/Family: the collector must restore every series from
// its state file after a restart (counters stay monotonic) and snapshot them cheaply and
// consistently for that file, must replace an extension's info series when its policy
// changes, and must never pay Family::Add on the ingest path. Owning the tables does all of
// that in a few lines; prometheus-cpp still does HTTP and the text format.
//
// Threads: one writer (the collector's ingest thread) and the exposer's scrape threads as
// readers. Values are atomics (relaxed: each is independent; a scrape during a histogram
// update may see count and sum one observation apart). The tables' shape is guarded by a
// shared mutex that the writer takes exclusively only to add or remove a series (rare:
// bounded by the label caps), and scrapes take shared; the writer's lookups need no lock,
// since no other thread changes the tables.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <array>
#include <atomic>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"

namespace gander::exporters::collector {

enum class Metric {
  kSyscalls,
  kDenials,
  kFileOutsideWorkspace,
  kEgressConnections,
  kEgressBytes,
  kIngressBytes,
  kDnsQueries,
  kToolCalls,
  kToolCallDuration,
  kSecretRedactions,
  kExtensionInfo,
  kExtensionRunning,
  kExtensionStarts,
  kExtensionExits,
  kEventsDropped,
  kLabelOverflow,
  kUdpFlows,
  kUdpDatagramsDropped,
  kCollectorRefused,
};
inline constexpr int kMetricCount = 19;

enum class MetricType { kCounter, kGauge, kHistogram };

struct MetricSpec {
  std::string_view name;
  std::string_view help;
  MetricType type;
  std::vector<std::string_view> labels;
};
const MetricSpec& SpecOf(Metric metric);

// Upper bounds of gander_tool_call_duration_seconds (seconds; +Inf is implicit).
inline constexpr std::array<double, 12> kDurationBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                                            2.5,  5,    10,  30,   60,  120};

class MetricStore : public prometheus::Collectable {
 public:
  MetricStore();
  ~MetricStore() override;

  // Writer side (the ingest thread). `labels` follow SpecOf(metric).labels, in order; the
  // series is created at 0 when missing, so Add(..., 0) makes a series exist.
  void Add(Metric counter, const std::vector<std::string_view>& labels, uint64_t delta = 1);
  void Set(Metric gauge, const std::vector<std::string_view>& labels, int64_t value);
  void Observe(Metric histogram, const std::vector<std::string_view>& labels, double seconds);
  // Removes every series of `metric` whose first label (extension) is `extension`.
  void RemoveExtension(Metric metric, std::string_view extension);

  // Reader side (any thread).
  std::vector<prometheus::MetricFamily> Collect() const override;
  // The value of one series (counters and gauges; a histogram's count), 0 when missing.
  int64_t Value(Metric metric, const std::vector<std::string_view>& labels) const;
  size_t SeriesCount() const;

  // Writer side: every series and value, for the state file (appended to `out` as a JSON
  // object), and back.
  void AppendSnapshot(std::string& out) const;
  Status Restore(const nlohmann::json& snapshot);

 private:
  struct Series;
  using Table = std::unordered_map<std::string, std::unique_ptr<Series>>;
  Series& Find(Metric metric, const std::vector<std::string_view>& labels);

  std::array<Table, kMetricCount> tables_;
  mutable std::shared_mutex shape_;
  std::string key_;  // the writer's scratch key
};

// Makes a label value valid UTF-8 without control characters (paths and host names are
// bytes): byte-escaped as in the audit log, control characters replaced by '?'.
std::string SanitizeLabelValue(std::string_view bytes);

}  // namespace gander::exporters::collector
