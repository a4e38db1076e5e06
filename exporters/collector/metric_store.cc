// The metric tables and their exposition (see metric_store.h).
#include "exporters/collector/metric_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

#include "events/event_json.h"

namespace gander::exporters::collector {
namespace {

constexpr char kSeparator = '\x1f';  // never in a sanitized label value

const std::array<MetricSpec, kMetricCount>& Specs() {
  using T = MetricType;
  static const std::array<MetricSpec, kMetricCount> specs = {{
      {"gander_syscalls_total",
       "Syscalls the monitor saw, by name (watched, denied, census).",
       T::kCounter,
       {"extension", "syscall", "phase"}},
      {"gander_denials_total",
       "Attempts the sandbox refused (or would refuse, mode monitor).",
       T::kCounter,
       {"extension", "domain", "mechanism", "mode", "phase"}},
      {"gander_file_access_outside_workspace_total",
       "File accesses outside the workspace and the private directories.",
       T::kCounter,
       {"extension", "path", "path_class", "access", "result", "phase"}},
      {"gander_egress_connections_total",
       "Outgoing connection attempts, by destination.",
       T::kCounter,
       {"extension", "destination", "result", "phase"}},
      {"gander_egress_bytes_total",
       "Bytes sent to a destination.",
       T::kCounter,
       {"extension", "destination"}},
      {"gander_ingress_bytes_total",
       "Bytes received from a destination.",
       T::kCounter,
       {"extension", "destination"}},
      {"gander_dns_queries_total",
       "DNS queries the sandbox's stub answered or refused.",
       T::kCounter,
       {"extension", "result", "phase"}},
      {"gander_tool_calls_total",
       "MCP tools/call requests, by tool and outcome.",
       T::kCounter,
       {"extension", "tool", "outcome"}},
      {"gander_tool_call_duration_seconds",
       "MCP tools/call latency, request to response.",
       T::kHistogram,
       {"extension", "tool", "outcome"}},
      {"gander_secret_redactions_total",
       "Secret values replaced in the extension's output.",
       T::kCounter,
       {"extension", "secret", "channel"}},
      {"gander_extension_info",
       "The extension's sandbox: backend, isolation, mode, policy.",
       T::kGauge,
       {"extension", "backend", "isolation", "mode", "policy_sha256", "syscall_accounting"}},
      {"gander_extension_running",
       "Launchers currently running the extension.",
       T::kGauge,
       {"extension"}},
      {"gander_extension_starts_total",
       "Times the extension was started.",
       T::kCounter,
       {"extension"}},
      {"gander_extension_exits_total",
       "Times the extension stopped, by reason.",
       T::kCounter,
       {"extension", "reason"}},
      {"gander_events_dropped_total",
       "Monitor events lost, by where they were dropped.",
       T::kCounter,
       {"extension", "stage"}},
      {"gander_label_overflow_total",
       "Label values replaced by 'other' because the per-extension cap was reached.",
       T::kCounter,
       {"metric", "label"}},
      {"gander_udp_flows_total",
       "Relayed UDP flows (a socket and a destination), by why they ended.",
       T::kCounter,
       {"extension", "end"}},
      {"gander_udp_datagrams_dropped_total",
       "Datagrams the UDP relay could not pass on, either way.",
       T::kCounter,
       {"extension"}},
      {"gander_collector_refused_total",
       "Connections or hellos the collector refused: a peer of another uid, or a hello "
       "without the collector's token.",
       T::kCounter,
       {"reason"}},
  }};
  return specs;
}

}  // namespace

const MetricSpec& SpecOf(Metric metric) { return Specs()[static_cast<size_t>(metric)]; }

struct MetricStore::Series {
  std::vector<std::string> labels;
  std::atomic<int64_t> value{0};  // counter, gauge; a histogram's count
  // Histograms only: per-bucket (not cumulative) counts, the last one for +Inf; the sum.
  std::unique_ptr<std::array<std::atomic<uint64_t>, kDurationBuckets.size() + 1>> buckets;
  std::atomic<double> sum{0};
};

MetricStore::MetricStore() = default;
MetricStore::~MetricStore() = default;

std::string SanitizeLabelValue(std::string_view bytes) {
  std::string out = events::EscapeBytes(bytes);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

MetricStore::Series& MetricStore::Find(Metric metric, const std::vector<std::string_view>& labels) {
  key_.clear();
  for (auto l : labels) {
    key_ += l;
    key_ += kSeparator;
  }
  Table& table = tables_[static_cast<size_t>(metric)];
  if (auto it = table.find(key_); it != table.end()) return *it->second;
  auto series = std::make_unique<Series>();
  series->labels.assign(labels.begin(), labels.end());
  if (SpecOf(metric).type == MetricType::kHistogram) {
    series->buckets =
        std::make_unique<std::array<std::atomic<uint64_t>, kDurationBuckets.size() + 1>>();
  }
  std::unique_lock lock(shape_);
  return *table.emplace(key_, std::move(series)).first->second;
}

void MetricStore::Add(Metric metric, const std::vector<std::string_view>& labels, uint64_t delta) {
  Series& s = Find(metric, labels);
  if (delta) s.value.fetch_add(static_cast<int64_t>(delta), std::memory_order_relaxed);
}

void MetricStore::Set(Metric metric, const std::vector<std::string_view>& labels, int64_t value) {
  Find(metric, labels).value.store(value, std::memory_order_relaxed);
}

void MetricStore::Observe(Metric metric, const std::vector<std::string_view>& labels,
                          double seconds) {
  Series& s = Find(metric, labels);
  if (!s.buckets) return;
  size_t i = std::lower_bound(kDurationBuckets.begin(), kDurationBuckets.end(), seconds) -
             kDurationBuckets.begin();
  (*s.buckets)[i].fetch_add(1, std::memory_order_relaxed);
  s.sum.store(s.sum.load(std::memory_order_relaxed) + seconds, std::memory_order_relaxed);
  s.value.fetch_add(1, std::memory_order_relaxed);
}

void MetricStore::RemoveExtension(Metric metric, std::string_view extension) {
  Table& table = tables_[static_cast<size_t>(metric)];
  std::unique_lock lock(shape_);
  std::erase_if(table, [&](const auto& entry) {
    return !entry.second->labels.empty() && entry.second->labels[0] == extension;
  });
}

std::vector<prometheus::MetricFamily> MetricStore::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  families.reserve(kMetricCount);
  std::shared_lock lock(shape_);
  for (int m = 0; m < kMetricCount; ++m) {
    const MetricSpec& spec = Specs()[m];
    prometheus::MetricFamily family;
    family.name = spec.name;
    family.help = spec.help;
    family.type = spec.type == MetricType::kCounter ? prometheus::MetricType::Counter
                  : spec.type == MetricType::kGauge ? prometheus::MetricType::Gauge
                                                    : prometheus::MetricType::Histogram;
    family.metric.reserve(tables_[m].size());
    for (const auto& [key, s] : tables_[m]) {
      prometheus::ClientMetric metric;
      metric.label.reserve(spec.labels.size());
      for (size_t i = 0; i < spec.labels.size(); ++i) {
        metric.label.push_back({std::string(spec.labels[i]), s->labels[i]});
      }
      double value = static_cast<double>(s->value.load(std::memory_order_relaxed));
      if (spec.type == MetricType::kCounter) {
        metric.counter.value = value;
      } else if (spec.type == MetricType::kGauge) {
        metric.gauge.value = value;
      } else {
        uint64_t cumulative = 0;
        for (size_t b = 0; b < kDurationBuckets.size() + 1; ++b) {
          cumulative += (*s->buckets)[b].load(std::memory_order_relaxed);
          metric.histogram.bucket.push_back(
              {cumulative, b < kDurationBuckets.size() ? kDurationBuckets[b]
                                                       : std::numeric_limits<double>::infinity()});
        }
        metric.histogram.sample_count = cumulative;
        metric.histogram.sample_sum = s->sum.load(std::memory_order_relaxed);
      }
      family.metric.push_back(std::move(metric));
    }
    // Stable output (tests, diffs, humans); a few thousand series sort in well under 1 ms.
    std::sort(family.metric.begin(), family.metric.end(),
              [](const auto& a, const auto& b) { return a.label < b.label; });
    families.push_back(std::move(family));
  }
  return families;
}

int64_t MetricStore::Value(Metric metric, const std::vector<std::string_view>& labels) const {
  std::string key;
  for (auto l : labels) {
    key += l;
    key += kSeparator;
  }
  std::shared_lock lock(shape_);
  const Table& table = tables_[static_cast<size_t>(metric)];
  auto it = table.find(key);
  return it == table.end() ? 0 : it->second->value.load(std::memory_order_relaxed);
}

size_t MetricStore::SeriesCount() const {
  std::shared_lock lock(shape_);
  size_t n = 0;
  for (const auto& t : tables_) n += t.size();
  return n;
}

namespace {

void AppendNumber(std::string& out, auto value) {
  char buf[32];  // an int64, a uint64 or a double's shortest form (24) all fit
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec == std::errc()) {
    out.append(buf, end);
  } else {
    out += '0';  // never with this buffer; the file must stay JSON whatever happens
  }
}

}  // namespace

void MetricStore::AppendSnapshot(std::string& out) const {
  // Written straight to text: this runs before every acknowledgement, and a JSON tree of a
  // few thousand series cost milliseconds to build, dump and free.
  out += '{';
  bool first_metric = true;
  for (int m = 0; m < kMetricCount; ++m) {
    // Running is the connected launchers' live state, not history: never restored.
    if (static_cast<Metric>(m) == Metric::kExtensionRunning) continue;
    if (!std::exchange(first_metric, false)) out += ',';
    events::AppendJsonText(out, Specs()[m].name);
    out += ":[";
    bool first_series = true;
    for (const auto& [key, s] : tables_[m]) {
      if (!std::exchange(first_series, false)) out += ',';
      out += "{\"labels\":[";
      for (size_t i = 0; i < s->labels.size(); ++i) {
        if (i) out += ',';
        events::AppendJsonText(out, s->labels[i]);
      }
      out += "],\"value\":";
      AppendNumber(out, s->value.load(std::memory_order_relaxed));
      if (s->buckets) {
        out += ",\"buckets\":[";
        for (size_t b = 0; b < s->buckets->size(); ++b) {
          if (b) out += ',';
          AppendNumber(out, (*s->buckets)[b].load(std::memory_order_relaxed));
        }
        double sum = s->sum.load(std::memory_order_relaxed);
        out += "],\"sum\":";
        AppendNumber(out, std::isfinite(sum) ? sum : 0.0);
      }
      out += '}';
    }
    out += ']';
  }
  out += '}';
}

Status MetricStore::Restore(const nlohmann::json& snapshot) {
  if (!snapshot.is_object()) return MakeError("metrics: not an object");
  for (int m = 0; m < kMetricCount; ++m) {
    const MetricSpec& spec = Specs()[m];
    auto it = snapshot.find(std::string(spec.name));
    if (it == snapshot.end() || static_cast<Metric>(m) == Metric::kExtensionRunning) continue;
    if (!it->is_array()) return MakeError("metrics: " + std::string(spec.name));
    for (const auto& entry : *it) {
      if (!entry.is_object() || !entry.contains("labels") || !entry.contains("value")) {
        return MakeError("metrics: bad series of " + std::string(spec.name));
      }
      auto labels = entry["labels"].get<std::vector<std::string>>();
      // A state file from before the `phase` label: every series it has is of the run.
      if (labels.size() + 1 == spec.labels.size() && spec.labels.back() == "phase") {
        labels.push_back("run");
      }
      if (labels.size() != spec.labels.size()) {
        return MakeError("metrics: wrong label count in " + std::string(spec.name));
      }
      std::vector<std::string_view> views(labels.begin(), labels.end());
      Series& s = Find(static_cast<Metric>(m), views);
      s.value.store(entry["value"].get<int64_t>(), std::memory_order_relaxed);
      if (s.buckets && entry.contains("buckets")) {
        auto buckets = entry["buckets"].get<std::vector<uint64_t>>();
        if (buckets.size() != s.buckets->size()) return MakeError("metrics: bucket count");
        for (size_t b = 0; b < buckets.size(); ++b) (*s.buckets)[b].store(buckets[b]);
        s.sum.store(entry.value("sum", 0.0));
      }
    }
  }
  return {};
}

}  // namespace gander::exporters::collector
