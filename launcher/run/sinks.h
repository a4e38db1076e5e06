// Stage "open sinks" of `gander run`: where events go (the collector, or the audit log
// directly), what marks and watches them on the way, and their closing at the end.
#pragma once

#include <memory>

#include "exporters/audit_log.h"
#include "exporters/collector_client.h"
#include "launcher/denial_notice.h"
#include "launcher/run/session.h"

namespace gander::launcher {

// The install sandbox's sink: each event marked as the install phase's, so that nothing
// gander's own installer does is counted as the extension's (metrics, audit, suggest).
class InstallPhaseSink final : public events::EventSink {
 public:
  explicit InstallPhaseSink(events::EventSink* inner) : inner_(inner) {}
  void Publish(const events::Event& event) override;
  void Flush() override { inner_->Flush(); }

 private:
  events::EventSink* inner_;
};

struct Sinks {
  std::unique_ptr<exporters::AuditLog> audit;
  std::unique_ptr<exporters::CollectorClient> collector;
  std::unique_ptr<InstallPhaseSink> install;
  std::unique_ptr<DenialNotice> notice;
  events::EventSink* sink = nullptr;  // the outermost: what the queue drains into
};

// Opens the sinks and queues the start event.
void OpenSinks(Session& s);

// Drains the queue into the sinks and asks the collector for its final acknowledgement
// without waiting for it (CollectorClient::StartFinish): what follows overlaps with it.
void StartClosingSinks(Session& s);

// Drains the queue into the sinks and closes them, warning about what was lost.
void CloseSinks(Session& s);

}  // namespace gander::launcher
