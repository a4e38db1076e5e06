// CollectorClient: the launcher's EventSink towards `gander collect` (docs/collector.md).
//
// Every event gets the next sequence number and waits in a bounded backlog until the collector
// acknowledges it (an ack means: counted, written to the audit log and persisted). While the
// collector is down or restarting, events accumulate and are sent again on reconnection; the
// collector skips what it had already applied, so nothing is lost or counted twice. When the
// backlog is full, new events are dropped and the loss travels to the collector as an
// `events_dropped` record (stage `backlog`) once there is room.
//
// Never blocks after Create(): the supervisor's poll loop watches fd() for POLLIN and then
// calls OnReadable(), and calls Flush() every turn that published events
// (BoundedEventQueue::Drain does). fd() stays the same number for the
// client's life: it is the connected socket (acks, hang-up) or, while disconnected, a timer
// that becomes readable when the next reconnection attempt is due.
//
// When no collector can be reached at Create() (and none could be started), the client falls
// back to writing the audit log itself, for the rest of its life ("fallback").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "events/event_sink.h"
#include "exporters/audit_log.h"
#include "exporters/collector_wire.h"

namespace gander::exporters {

struct CollectorClientOptions {
  // extension and info must be set; launcher is generated when empty; audit_log* are taken
  // from `audit_log` below.
  wire::Hello hello;
  std::string socket_path;  // default DefaultCollectorSocket()
  // The collector's token, presented in the hello; default DefaultCollectorTokenPath().
  std::string token_path;
  // How to start a collector when none answers, e.g. {"/usr/bin/gander", "collect"}; empty:
  // never start one (a systemd unit runs it, or a test does).
  std::vector<std::string> start_command;
  // The audit log: its path and rotation go to the collector, which writes it; the client
  // writes it itself only in fallback. Empty path: DefaultAuditLogFor(extension).
  AuditLogOptions audit_log;
  size_t max_backlog_events = 65536;
  size_t max_backlog_bytes = 32 * 1024 * 1024;
  std::chrono::milliseconds start_wait{1500};        // Create(): wait for a started collector
  std::chrono::milliseconds retry_interval{250};     // between reconnection attempts
  std::chrono::milliseconds restart_interval{3000};  // between attempts to start a collector
};

struct CollectorClientStats {
  uint64_t published = 0;
  uint64_t acked = 0;    // events the collector acknowledged
  uint64_t dropped = 0;  // backlog full
  uint64_t connections = 0;
  uint64_t written_directly = 0;  // fallback, or left unacknowledged at Finish()
};

class CollectorClient : public events::EventSink {
 public:
  // Connects to the collector, starting one with start_command when none answers (and waiting
  // up to start_wait for it). Never fails: without a collector the client is in fallback.
  static std::unique_ptr<CollectorClient> Create(CollectorClientOptions options);
  ~CollectorClient() override;

  void Publish(const events::Event& event) override;
  // Non-blocking: sends what waits, reconnects when due.
  void Flush() override;
  // When poll reports fd() readable: reads acknowledgements (or the hang-up), then as Flush.
  void OnReadable();
  // At exit, non-blocking: sends what waits and asks the collector to acknowledge everything
  // now (a `sync`) rather than at its next persist, so that it persists while the launcher
  // tears its sandbox down. Finish() waits for the answer (and syncs again for what came since).
  void StartFinish();
  // At exit: waits up to `budget` for the collector to acknowledge everything, then says bye.
  // What is still unacknowledged is written to the audit log directly (it is then missing
  // from the metrics; a warning names how many).
  void Finish(std::chrono::milliseconds budget);

  int fd() const { return stable_fd_.get(); }
  bool connected() const { return connected_; }
  bool fallback() const { return fallback_ != nullptr || fallback_failed_; }
  size_t backlog() const { return backlog_.size(); }
  const CollectorClientStats& stats() const { return stats_; }
  // The last problem worth one log line (a refused hello, a lost connection, ...).
  const std::optional<Error>& last_error() const { return last_error_; }

 private:
  struct Record {
    uint64_t seq = 0;
    events::Event event;
    bool backlog_gap = false;  // a drop notice of our own (stage backlog)
    size_t bytes = 0;
  };
  using Clock = std::chrono::steady_clock;

  explicit CollectorClient(CollectorClientOptions options);
  bool TryConnect();
  void Disconnect(Error why);
  void EnterFallback(Error why);
  void Service(bool read_replies);
  void ReadReplies();
  void WriteOut();
  void TrimAcknowledged(uint64_t seq);
  void ArmTimer(std::chrono::milliseconds after);
  void Append(events::Event event, bool backlog_gap);
  void AppendDropNotice();
  void AskSync();

  CollectorClientOptions options_;
  UniqueFd stable_fd_;  // the socket, or a dup of timer_ while disconnected
  UniqueFd timer_;
  bool connected_ = false;
  std::unique_ptr<AuditLog> fallback_;
  // A --audit-log of the launcher's own (not the collector's default path): written here, as
  // the collector writes only paths it derives itself.
  std::unique_ptr<AuditLog> own_log_;
  bool fallback_failed_ = false;  // fallback without an audit log: events are dropped
  Clock::time_point next_attempt_{};
  Clock::time_point next_start_{};

  std::deque<Record> backlog_;
  size_t backlog_bytes_ = 0;
  size_t next_send_ = 0;  // index in backlog_ of the first record not yet in out_
  uint64_t next_seq_ = 1;
  std::string out_;      // encoded lines not yet written
  bool rang_ = false;    // rung at an EAGAIN (WriteOut); again after an ack or a reconnection
  uint64_t synced_ = 0;  // the last sequence number a `sync` on this connection asked for
  std::string in_;       // partial reply line
  bool running_ = false;
  uint64_t pending_drops_ = 0;
  events::Event last_dropped_;  // time and extension for the drop notice
  CollectorClientStats stats_;
  std::optional<Error> last_error_;
};

}  // namespace gander::exporters
