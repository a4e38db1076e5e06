// Event -> metric updates (see event_metrics.h).
#include "exporters/collector/event_metrics.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "monitor/path_classifier.h"

namespace gander::exporters::collector {
namespace {

using events::Verdict;

constexpr std::string_view kDomains[] = {"file", "network", "syscall", "process", "resource"};

// Which part of the sandbox refuses each domain's attempts.
std::string_view MechanismOf(std::string_view domain) {
  if (domain == "network") return "broker";
  if (domain == "resource") return "rlimit";
  return "seccomp";
}

// enforce: refused; monitor: would have been refused (--mode monitor), recorded only.
std::string_view ModeOf(Verdict v) { return v == Verdict::kWouldDeny ? "monitor" : "enforce"; }

constexpr std::string_view kStages[] = {wire::kStageQueue, wire::kStageBacklog,
                                        wire::kStageAuditLog};

// The (metric, label) pairs that are capped, for gander_label_overflow_total's zero series.
constexpr std::pair<Metric, BoundedLabel> kCapped[] = {
    {Metric::kSyscalls, BoundedLabel::kSyscall},
    {Metric::kFileOutsideWorkspace, BoundedLabel::kPath},
    {Metric::kEgressConnections, BoundedLabel::kDestination},
    {Metric::kEgressBytes, BoundedLabel::kDestination},
    {Metric::kIngressBytes, BoundedLabel::kDestination},
    {Metric::kToolCalls, BoundedLabel::kTool},
    {Metric::kToolCallDuration, BoundedLabel::kTool},
    {Metric::kSecretRedactions, BoundedLabel::kSecret},
};

bool CountsAsOutside(events::PathClass c) {
  using events::PathClass;
  return c != PathClass::kWorkspace && c != PathClass::kPrivate && c != PathClass::kSystem;
}

}  // namespace

std::string_view ExitReason(std::string_view detail) {
  constexpr std::string_view kExited = "exited with status ";
  if (detail.starts_with("could not start")) return "start_failed";
  if (!detail.starts_with(kExited)) return "other";
  int status = -1;
  auto digits = detail.substr(kExited.size());
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), status);
  if (ec != std::errc() || status < 0) return "other";
  if (status == 0) return "clean";
  return status > 128 ? "signal" : "failure";
}

std::string EventMetrics::Bounded(std::string_view extension, BoundedLabel label, Metric metric,
                                  std::string_view value) {
  std::string clean = SanitizeLabelValue(value);
  if (bounds_.Admit(extension, label, clean)) return clean;
  store_.Add(Metric::kLabelOverflow, {SpecOf(metric).name, NameOf(label)});
  return std::string(kOtherValue);
}

void EventMetrics::Deny(std::string_view extension, std::string_view domain, Verdict verdict,
                        std::string_view phase) {
  store_.Add(Metric::kDenials, {extension, domain, MechanismOf(domain), ModeOf(verdict), phase});
}

void EventMetrics::OnHello(const wire::Hello& h) {
  const std::string& ext = h.extension;
  const auto& info = h.info;
  const events::RunInfo& run = info.run;
  std::string key = run.backend + '\x1f' + run.isolation + '\x1f' + run.mode + '\x1f' +
                    run.policy_sha256 + '\x1f' + run.syscall_accounting;
  // One info series per extension: the latest launcher's description wins. A connection that
  // describes no run (no isolation: the install phase's events) leaves it as it is.
  if (!run.isolation.empty() && info_key_[ext] != key) {
    store_.RemoveExtension(Metric::kExtensionInfo, ext);
    // Sanitized like every other label a launcher names (its bytes are its own to choose).
    std::string labels[] = {SanitizeLabelValue(run.backend), SanitizeLabelValue(run.isolation),
                            SanitizeLabelValue(run.mode), SanitizeLabelValue(run.policy_sha256),
                            SanitizeLabelValue(run.syscall_accounting)};
    store_.Set(Metric::kExtensionInfo, {ext, labels[0], labels[1], labels[2], labels[3], labels[4]},
               1);
    info_key_[ext] = key;
  }
  std::string_view mode = run.mode == "monitor" ? "monitor" : "enforce";
  for (auto domain : kDomains) {
    store_.Add(Metric::kDenials, {ext, domain, MechanismOf(domain), mode, kPhaseRun}, 0);
  }
  store_.Add(Metric::kExtensionStarts, {ext}, 0);
  for (auto reason : kExitReasons) store_.Add(Metric::kExtensionExits, {ext, reason}, 0);
  for (auto stage : kStages) store_.Add(Metric::kEventsDropped, {ext, stage}, 0);
  for (auto result : {"allowed", "denied"}) {
    store_.Add(Metric::kDnsQueries, {ext, result, kPhaseRun}, 0);
  }
  for (const auto& host : info.destinations) {
    std::string d = Bounded(ext, BoundedLabel::kDestination, Metric::kEgressConnections, host);
    store_.Add(Metric::kEgressConnections, {ext, d, "allowed", kPhaseRun}, 0);
    store_.Add(Metric::kEgressBytes, {ext, d}, 0);
    store_.Add(Metric::kIngressBytes, {ext, d}, 0);
  }
  for (const auto& secret : info.secrets) {
    std::string s = Bounded(ext, BoundedLabel::kSecret, Metric::kSecretRedactions, secret);
    store_.Add(Metric::kSecretRedactions, {ext, s, "stdout"}, 0);
  }
  for (auto [metric, label] : kCapped) {
    store_.Add(Metric::kLabelOverflow, {SpecOf(metric).name, NameOf(label)}, 0);
  }
}

void EventMetrics::Apply(const events::Event& e, std::string_view home, bool backlog_gap) {
  // gander's own install of the package (npm install, its postinstall scripts) runs code of the
  // package too: what it touches is counted, under phase="install", so that alerts see it. Its
  // lifecycle is not the extension's (no start, no exit counted).
  const std::string_view phase = e.install_phase ? kPhaseInstall : kPhaseRun;
  if (e.install_phase && std::holds_alternative<events::LifecycleEvent>(e.payload)) return;
  const std::string& ext = e.extension;
  if (const auto* f = std::get_if<events::FileEvent>(&e.payload)) {
    if (CountsAsOutside(f->path_class)) {
      // The launcher's label (it knows the workspace and the deny rules); the same function
      // with what the collector knows for a launcher that sent none.
      std::string label =
          !f->path_label.empty()
              ? f->path_label
              : monitor::NormaliseForLabel(f->path.value_or(""), std::string(home), "", {});
      std::string path = Bounded(ext, BoundedLabel::kPath, Metric::kFileOutsideWorkspace, label);
      store_.Add(Metric::kFileOutsideWorkspace,
                 {ext, path, events::ToString(f->path_class), events::ToString(f->access),
                  events::ToString(f->result), phase});
    }
    if (f->result != Verdict::kAllowed) Deny(ext, "file", f->result, phase);
  } else if (const auto* s = std::get_if<events::SyscallEvent>(&e.payload)) {
    if (s->action == events::SyscallAction::kCounted) {
      std::string name = s->name.empty() ? "nr_" + std::to_string(s->nr) : s->name;
      store_.Add(Metric::kSyscalls,
                 {ext, Bounded(ext, BoundedLabel::kSyscall, Metric::kSyscalls, name), phase},
                 s->count);
    } else {
      Deny(ext, "syscall", Verdict::kDenied, phase);
    }
  } else if (const auto* p = std::get_if<events::ProcessEvent>(&e.payload)) {
    if (p->action == events::ProcessAction::kExec && p->error != 0) {
      Deny(ext, "process", Verdict::kDenied, phase);
    }
  } else if (const auto* n = std::get_if<events::NetworkEvent>(&e.payload)) {
    if (n->transport == "dns") {
      store_.Add(Metric::kDnsQueries,
                 {ext, n->result == Verdict::kAllowed ? "allowed" : "denied", phase});
      if (n->result != Verdict::kAllowed) Deny(ext, "network", n->result, phase);
      return;
    }
    // The policy's host for what it allowed (few values); the name or address tried otherwise.
    std::string_view tried = !n->rule.empty() && n->result == Verdict::kAllowed ? n->rule
                             : !n->host.empty()                                 ? n->host
                                                                                : n->ip;
    std::string dest = Bounded(ext, BoundedLabel::kDestination, Metric::kEgressConnections, tried);
    store_.Add(Metric::kEgressConnections, {ext, dest, events::ToString(n->result), phase});
    if (n->bytes_out || n->bytes_in) Traffic(ext, dest, n->bytes_out, n->bytes_in);
    if (n->transport == "udp" && !n->end.empty()) {
      std::string_view end = n->end;
      if (end != "idle" && end != "evicted" && end != "exit" && end != "error") end = "other";
      store_.Add(Metric::kUdpFlows, {ext, end});
      if (n->datagrams_dropped)
        store_.Add(Metric::kUdpDatagramsDropped, {ext}, n->datagrams_dropped);
    }
    if (n->result != Verdict::kAllowed) Deny(ext, "network", n->result, phase);
  } else if (const auto* t = std::get_if<events::ToolEvent>(&e.payload)) {
    ToolCall(ext, t->name, t->outcome, static_cast<double>(t->duration_ns) / 1e9);
  } else if (const auto* r = std::get_if<events::RedactionEvent>(&e.payload)) {
    Redaction(ext, r->secret, r->channel, r->count);
  } else if (const auto* l = std::get_if<events::LifecycleEvent>(&e.payload)) {
    switch (l->what) {
      case events::LifecyclePhase::kStart:
        store_.Add(Metric::kExtensionStarts, {ext});
        break;
      case events::LifecyclePhase::kStop:
        store_.Add(Metric::kExtensionExits, {ext, ExitReason(l->detail)});
        break;
      case events::LifecyclePhase::kRelay:
      case events::LifecyclePhase::kRestart:
      case events::LifecyclePhase::kSecret:
      case events::LifecyclePhase::kInstall:
        break;
      case events::LifecyclePhase::kEventsDropped: {
        uint64_t n = 0;
        std::from_chars(l->detail.data(), l->detail.data() + l->detail.size(), n);
        CountDropped(ext, backlog_gap ? wire::kStageBacklog : wire::kStageQueue, n);
        break;
      }
    }
  }
}

void EventMetrics::SetRunning(std::string_view extension, int64_t launchers) {
  store_.Set(Metric::kExtensionRunning, {extension}, launchers);
}

void EventMetrics::CountRefused(std::string_view reason, uint64_t n) {
  store_.Add(Metric::kCollectorRefused, {reason}, n);
}

void EventMetrics::CountDropped(std::string_view extension, std::string_view stage, uint64_t n) {
  store_.Add(Metric::kEventsDropped, {extension, stage}, n);
}

void EventMetrics::ToolCall(std::string_view extension, std::string_view tool,
                            std::string_view outcome, double seconds) {
  // The launcher's relay sends only kToolOutcomes; anything else (a forged launcher's bytes)
  // is "other", never a series of its own.
  if (std::ranges::find(events::kToolOutcomes, outcome) == std::end(events::kToolOutcomes)) {
    outcome = kOtherValue;
  }
  std::string t = Bounded(extension, BoundedLabel::kTool, Metric::kToolCalls, tool);
  store_.Add(Metric::kToolCalls, {extension, t, outcome});
  store_.Observe(Metric::kToolCallDuration, {extension, t, outcome}, seconds);
}

void EventMetrics::Traffic(std::string_view extension, std::string_view destination,
                           uint64_t egress, uint64_t ingress) {
  std::string d = Bounded(extension, BoundedLabel::kDestination, Metric::kEgressBytes, destination);
  store_.Add(Metric::kEgressBytes, {extension, d}, egress);
  store_.Add(Metric::kIngressBytes, {extension, d}, ingress);
}

void EventMetrics::DnsQuery(std::string_view extension, std::string_view result) {
  store_.Add(Metric::kDnsQueries, {extension, result});
}

void EventMetrics::Redaction(std::string_view extension, std::string_view secret,
                             std::string_view channel, uint64_t count) {
  std::string s = Bounded(extension, BoundedLabel::kSecret, Metric::kSecretRedactions, secret);
  store_.Add(Metric::kSecretRedactions, {extension, s, channel}, count);
}

}  // namespace gander::exporters::collector
