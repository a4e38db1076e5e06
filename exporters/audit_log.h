// The audit log: an EventSink that appends each event as one JSON line (events/event_json.h,
// schema in docs/audit-log.md) to a file, rotated by size.
//
// The file is opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC with mode 0600 (it can hold paths
// and arguments the user may consider private; it never leaks into the sandbox). Rotation
// happens before a line that would take the file past max_bytes: path.N-1 -> path.N, ...,
// path -> path.1, and a fresh path is opened; a line is never split between files (a line
// longer than max_bytes gets a file of its own). "Flushed" means handed to the kernel with
// write(2), per line or per batch (at Flush(), which BoundedEventQueue::Drain calls, or when the
// buffer fills); there is no fsync.
//
// Single-threaded, like the queue in front of it. Writes to a regular file can still take
// time (a slow disk): the supervisor keeps them off the extension's path by draining
// events::BoundedEventQueue with a time budget.
//
// Failures never stop the extension: a write or rotation error is counted, remembered in
// last_error() for the caller to log once, and the lines concerned are counted as lost. If a
// failed write left half a line, the next write starts with a newline so that readers still
// see whole lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/unique_fd.h"
#include "events/event.h"
#include "events/event_sink.h"

namespace gander::exporters {

struct AuditLogOptions {
  enum class FlushMode { kPerLine, kPerBatch };

  std::string path{};                     // the live file; rotated copies are path.1 ... path.N
  uint64_t max_bytes = 16 * 1024 * 1024;  // rotate before the file would grow past this
  int max_files = 4;                      // N: rotated copies kept (1..1000)
  FlushMode flush = FlushMode::kPerBatch;
  size_t max_buffer_bytes = 64 * 1024;  // kPerBatch: write out early when this much waits
};

struct AuditLogStats {
  uint64_t lines_written = 0;
  uint64_t lines_lost = 0;  // could not be written (disk full, file gone, ...)
  uint64_t rotations = 0;
  uint64_t errors = 0;  // failed write, rename or open calls
};

class AuditLog : public events::EventSink {
 public:
  // Opens (or creates) options.path, appending to what is there. Errors: bad options, or the
  // open failing (the directory must exist).
  static Result<std::unique_ptr<AuditLog>> Open(AuditLogOptions options);
  ~AuditLog() override;

  void Publish(const events::Event& event) override;
  // One event already encoded as a JSON object (no newline): the collector passes the
  // launcher's validated line on unchanged.
  void PublishJson(std::string_view json);
  void Flush() override;

  const AuditLogStats& stats() const { return stats_; }
  const std::optional<Error>& last_error() const { return last_error_; }

 private:
  AuditLog(AuditLogOptions options, UniqueFd fd, uint64_t size);

  void Append(std::string_view line);
  void Rotate();
  void WriteOut();
  void Fail(Error error);

  AuditLogOptions options_;
  UniqueFd fd_;
  uint64_t file_size_ = 0;  // bytes in the live file (as far as we wrote them)
  std::string buffer_;      // whole lines not yet written
  uint64_t buffered_lines_ = 0;
  bool mid_line_ = false;  // a failed write left a partial line in the file
  AuditLogStats stats_;
  std::optional<Error> last_error_;
};

}  // namespace gander::exporters
