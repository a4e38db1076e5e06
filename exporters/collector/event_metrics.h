// EventMetrics: what each monitor event means for gander's metric set. A pure mapping from
// (event, what the hello said) to counter updates in a MetricStore, with label values
// normalised and capped (LabelBounds). The collector calls it for every applied record; it
// does no I/O.
//
// The mapping (docs/collector.md has the table):
//   file       path_class outside the workspace, the private dirs and /proc,/dev ->
//              file_access_outside_workspace{path (normalised, capped), class, access, result};
//              result denied/would_deny -> denials{domain=file}
//   syscall    counted -> syscalls{syscall} += count; denied -> denials{domain=syscall}
//   process    exec refused (errno) -> denials{domain=process}
//   network    egress_connections{destination (host, else ip; capped), result};
//              denied/would_deny -> denials{domain=network}
//   (install-phase events count in the same series under phase="install", the rest under
//   phase="run"; install-phase lifecycle events are not the extension's and count nowhere)
//   lifecycle  start -> extension_starts; stop -> extension_exits{reason};
//              events_dropped -> events_dropped{stage=queue, or backlog for the client's own}
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "events/event.h"
#include "exporters/collector/label_bounds.h"
#include "exporters/collector/metric_store.h"
#include "exporters/collector_wire.h"

namespace gander::exporters::collector {

// The `phase` label of the event-derived counters (syscalls, denials, file access outside the
// workspace, egress connections, DNS queries): the extension's own run, or gander's install of
// its package (npm/pip and their scripts, launcher/install/).
inline constexpr std::string_view kPhaseRun = "run";
inline constexpr std::string_view kPhaseInstall = "install";

// Reasons of gander_collector_refused_total: a peer of another uid (SO_PEERCRED), a hello
// without the collector's token.
inline constexpr std::string_view kRefusalReasons[] = {"uid", "token"};

// Reasons of gander_extension_exits_total.
inline constexpr std::string_view kExitReasons[] = {"clean", "failure", "signal", "start_failed",
                                                    "other"};

class EventMetrics {
 public:
  EventMetrics(MetricStore& store, LabelBounds bounds)
      : store_(store), bounds_(std::move(bounds)) {}

  // The series the extension's policy implies, at 0, and its info series.
  void OnHello(const wire::Hello& hello);
  // `home`: the launcher's, to write paths below it as ~/...; `backlog_gap`: a drop notice
  // of the launcher's client rather than of its monitor queue.
  void Apply(const events::Event& event, std::string_view home, bool backlog_gap = false);
  void SetRunning(std::string_view extension, int64_t launchers);
  void CountDropped(std::string_view extension, std::string_view stage, uint64_t n);
  void CountRefused(std::string_view reason, uint64_t n = 1);

  // Kinds the monitor does not report yet (the relay, egress-broker and DNS issues): the
  // collector side is ready, with the same capping.
  void ToolCall(std::string_view extension, std::string_view tool, std::string_view outcome,
                double seconds);
  void Traffic(std::string_view extension, std::string_view destination, uint64_t egress,
               uint64_t ingress);
  void DnsQuery(std::string_view extension, std::string_view result);
  void Redaction(std::string_view extension, std::string_view secret, std::string_view channel,
                 uint64_t count = 1);

  LabelBounds& bounds() { return bounds_; }

 private:
  // `value` sanitized, or "other" (counting the overflow against `metric`) past the cap.
  std::string Bounded(std::string_view extension, BoundedLabel label, Metric metric,
                      std::string_view value);
  void Deny(std::string_view extension, std::string_view domain, events::Verdict verdict,
            std::string_view phase);

  MetricStore& store_;
  LabelBounds bounds_;
  std::unordered_map<std::string, std::string> info_key_;  // extension -> its info labels
};

// The exits_total reason for a lifecycle stop detail ("exited with status N",
// "could not start: ...").
std::string_view ExitReason(std::string_view detail);

}  // namespace gander::exporters::collector
