// Size-rotated JSON-lines audit log (see audit_log.h).
#include "exporters/audit_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "events/event_json.h"

namespace gander::exporters {
namespace {

constexpr int kMaxFilesLimit = 1000;

Result<UniqueFd> OpenForAppend(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) return ErrnoError("open " + path);
  return fd;
}

std::string Rotated(const std::string& path, int n) { return path + "." + std::to_string(n); }

}  // namespace

Result<std::unique_ptr<AuditLog>> AuditLog::Open(AuditLogOptions options) {
  if (options.path.empty()) return MakeError("audit log: empty path");
  if (options.max_bytes == 0) return MakeError("audit log: max_bytes must be positive");
  if (options.max_files < 1 || options.max_files > kMaxFilesLimit) {
    return MakeError("audit log: max_files must be 1.." + std::to_string(kMaxFilesLimit));
  }
  auto fd = OpenForAppend(options.path);
  if (!fd) return std::move(fd).error().Context("audit log");
  struct stat st {};
  if (fstat(fd->get(), &st) != 0) return ErrnoError("audit log: fstat " + options.path);
  return std::unique_ptr<AuditLog>(
      new AuditLog(std::move(options), std::move(*fd), static_cast<uint64_t>(st.st_size)));
}

AuditLog::AuditLog(AuditLogOptions options, UniqueFd fd, uint64_t size)
    : options_(std::move(options)), fd_(std::move(fd)), file_size_(size) {}

AuditLog::~AuditLog() { WriteOut(); }

void AuditLog::Publish(const events::Event& event) { Append(events::ToJsonLine(event)); }

void AuditLog::PublishJson(std::string_view json) {
  std::string line(json);
  line += '\n';
  Append(line);
}

void AuditLog::Flush() { WriteOut(); }

void AuditLog::Append(std::string_view line) {
  uint64_t pending = file_size_ + buffer_.size();
  if (pending > 0 && pending + line.size() > options_.max_bytes) Rotate();
  buffer_ += line;
  ++buffered_lines_;
  if (options_.flush == AuditLogOptions::FlushMode::kPerLine ||
      buffer_.size() >= options_.max_buffer_bytes) {
    WriteOut();
  }
}

void AuditLog::Rotate() {
  WriteOut();  // what is buffered belongs to the file being retired
  for (int n = options_.max_files - 1; n >= 1; --n) {
    if (rename(Rotated(options_.path, n).c_str(), Rotated(options_.path, n + 1).c_str()) != 0 &&
        errno != ENOENT) {
      Fail(ErrnoError("audit log: rename " + Rotated(options_.path, n)));
    }
  }
  // Counted as a rotation even if the rename fails: the file then grows past max_bytes, but
  // rotation is not retried on every line.
  ++stats_.rotations;
  file_size_ = 0;
  mid_line_ = false;
  if (rename(options_.path.c_str(), Rotated(options_.path, 1).c_str()) != 0) {
    Fail(ErrnoError("audit log: rename " + options_.path));
    return;  // keep appending to the current file
  }
  fd_.Reset();
  auto fd = OpenForAppend(options_.path);
  if (!fd) {
    Fail(std::move(fd).error().Context("audit log"));
    return;  // WriteOut retries the open
  }
  fd_ = std::move(*fd);
}

void AuditLog::WriteOut() {
  if (buffer_.empty()) return;
  if (!fd_) {
    auto fd = OpenForAppend(options_.path);
    if (fd) {
      fd_ = std::move(*fd);
    } else {
      Fail(std::move(fd).error().Context("audit log"));
    }
  }
  if (fd_ && mid_line_) {
    if (write(fd_.get(), "\n", 1) == 1) {
      mid_line_ = false;
      ++file_size_;
    } else {
      Fail(ErrnoError("audit log: write " + options_.path));
    }
  }
  size_t done = 0;
  while (fd_ && !mid_line_ && done < buffer_.size()) {
    ssize_t n = write(fd_.get(), buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Fail(n < 0 ? ErrnoError("audit log: write " + options_.path)
                 : Error{EIO, "audit log: write " + options_.path + " wrote nothing"});
      break;
    }
    done += static_cast<size_t>(n);
  }
  file_size_ += done;
  if (done == buffer_.size()) {
    stats_.lines_written += buffered_lines_;
  } else {
    // Lines wholly written count as written; the rest, including a partial one, as lost.
    uint64_t whole = 0;
    for (size_t i = 0; i < done; ++i) whole += buffer_[i] == '\n';
    stats_.lines_written += whole;
    stats_.lines_lost += buffered_lines_ - whole;
    if (done > 0 && buffer_[done - 1] != '\n') mid_line_ = true;
  }
  buffer_.clear();
  buffered_lines_ = 0;
}

void AuditLog::Fail(Error error) {
  ++stats_.errors;
  last_error_ = std::move(error);
}

}  // namespace gander::exporters
