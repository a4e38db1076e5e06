#include "relay/line_relay.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gander::relay {
namespace {
constexpr int kPipeBytes = 1 << 20;
}  // namespace

int64_t MonotonicNowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

LineRelay::LineRelay(int in, int out, LineRelayOptions options, LineObserver* observer,
                     StreamRewriter* rewriter)
    : in_(in), out_(out), options_(options), observer_(observer), rewriter_(rewriter) {
  options_.max_line = std::max<size_t>(options_.max_line, 1);
  options_.read_chunk = std::max<size_t>(options_.read_chunk, 1);
  options_.out_capacity = std::max<size_t>(options_.out_capacity, 1);
  // Larger pipes mean fewer, larger reads and writes for big messages (best effort: the
  // unprivileged limit is /proc/sys/fs/pipe-max-size, 1 MiB by default).
  for (int fd : {in_, out_}) {
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
  }
}

bool LineRelay::WantsRead() const {
  if (input_closed_) return false;
  if (output_broken_) return true;  // keep draining so the writer never blocks
  return ready_ - head_ < options_.out_capacity && size_ - framed_ <= options_.max_line;
}

void LineRelay::Compact() {
  if (head_ == 0) return;
  std::memmove(buf_.get(), buf_.get() + head_, size_ - head_);
  ready_ -= head_;
  framed_ -= head_;
  scan_ -= head_;
  size_ -= head_;
  head_ = 0;
}

void LineRelay::Reserve(size_t extra) {
  if (size_ + extra <= capacity_) return;
  Compact();
  if (size_ + extra <= capacity_) return;
  size_t want = std::max({capacity_ * 2, size_ + extra, size_t{64} << 10});
  auto bigger = std::make_unique_for_overwrite<char[]>(want + kLinePadding);
  if (size_) std::memcpy(bigger.get(), buf_.get(), size_);
  std::memset(bigger.get() + want, 0, kLinePadding);
  buf_ = std::move(bigger);
  capacity_ = want;
}

void LineRelay::Append(std::string_view bytes) {
  Reserve(bytes.size());
  std::memcpy(buf_.get() + size_, bytes.data(), bytes.size());
  size_ += bytes.size();
}

void LineRelay::OnReadable() {
  if (!WantsRead()) return;
  Reserve(options_.read_chunk);
  ssize_t n = read(in_, buf_.get() + size_, std::min(options_.read_chunk, capacity_ - size_));
  if (n > 0) {
    stats_.bytes_in += static_cast<uint64_t>(n);
    if (output_broken_) return;  // discarded
    size_ += static_cast<size_t>(n);
    Process(false);
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  CloseInput();
}

void LineRelay::Feed(std::string_view bytes) {
  stats_.bytes_in += bytes.size();
  if (output_broken_ || input_closed_) return;
  Append(bytes);
  Process(false);
}

void LineRelay::CloseInput() {
  if (input_closed_) return;
  input_closed_ = true;
  if (!output_broken_) Process(true);
}

void LineRelay::Inject(std::string_view bytes) {
  if (output_broken_) return;
  Append(bytes);
  framed_ = scan_ = size_;
  Release(input_closed_);
}

void LineRelay::Process(bool at_end) {
  Frame(at_end);
  Release(at_end);
}

void LineRelay::Frame(bool at_end) {
  // Returns false when the line [begin, end] ('\n' included, if any) was removed.
  auto observe = [&](size_t begin, size_t end) {
    ++stats_.lines;
    std::string_view line(buf_.get() + begin, end - begin);
    LineVerdict verdict = LineVerdict::kForward;
    if (line.empty() || line == "\r") {
      ++stats_.empty_lines;
    } else if (observer_) {
      verdict = observer_->OnLine(line);
    }
    if (verdict == LineVerdict::kNotJson) ++stats_.non_json_lines;
    return verdict != LineVerdict::kSwallow;
  };
  auto remove = [&](size_t begin, size_t end) {  // [begin, end)
    std::memmove(buf_.get() + begin, buf_.get() + end, size_ - end);
    size_ -= end - begin;
  };
  while (scan_ < size_) {
    const void* nl = std::memchr(buf_.get() + scan_, '\n', size_ - scan_);
    if (!nl) break;
    size_t end = static_cast<const char*>(nl) - buf_.get();
    if (skipping_) {
      skipping_ = false;
      remove(framed_, end + 1);
      scan_ = framed_;
      continue;
    }
    if (oversize_) {
      oversize_ = false;  // its pieces were released already; this is its last one
    } else if (!observe(framed_, end)) {
      ++stats_.swallowed_lines;
      remove(framed_, end + 1);
      scan_ = framed_;
      continue;
    }
    framed_ = scan_ = end + 1;
  }
  scan_ = size_;
  if (skipping_) {
    size_ = framed_;  // still inside the cut line
    scan_ = size_;
    return;
  }
  if (!oversize_ && size_ - framed_ > options_.max_line) {
    oversize_ = true;
    ++stats_.lines;
    ++stats_.oversize_lines;
  }
  if (oversize_ || !options_.hold_lines) {
    framed_ = size_;
  } else if (at_end && framed_ < size_) {
    if (observe(framed_, size_)) {  // the last line, without its '\n'
      framed_ = size_;
    } else {
      size_ = scan_ = framed_;
    }
  }
}

void LineRelay::SwitchInput(int in) {
  in_ = in;
  fcntl(in_, F_SETPIPE_SZ, kPipeBytes);
  input_closed_ = false;
  size_ = scan_ = framed_;  // the old extension's partial line
  if (oversize_) {
    oversize_ = false;
    Append("\n");
    framed_ = scan_ = size_;
  }
  skipping_ = false;
  Release(true);
}

void LineRelay::SwitchOutput(int out, std::string_view first) {
  out_ = out;
  out_kind_ = OutKind::kUnknown;
  output_broken_ = false;
  Reserve(first.size() + 1);  // may compact: offsets are read after
  // Drop [head_, framed_): requests the old extension never got (failed by the caller).
  std::memmove(buf_.get() + head_, buf_.get() + framed_, size_ - framed_);
  size_ -= framed_ - head_;
  ready_ = framed_ = head_;
  scan_ = head_;
  if (oversize_) {
    oversize_ = false;
    skipping_ = true;  // the rest of a line the old extension got a part of
  }
  // The replayed handshake goes first.
  std::memmove(buf_.get() + head_ + first.size(), buf_.get() + head_, size_ - head_);
  std::memcpy(buf_.get() + head_, first.data(), first.size());
  size_ += first.size();
  ready_ = framed_ = scan_ = head_ + first.size();
  Frame(false);
  Release(false);
}

void LineRelay::Release(bool at_end) {
  if (!rewriter_) {
    ready_ = framed_;
    return;
  }
  if (ready_ == framed_) {
    held_since_ms_ = -1;
    return;
  }
  StreamRewriter::Outcome o =
      rewriter_->Rewrite(std::string_view(buf_.get() + ready_, framed_ - ready_), at_end);
  o.released = std::min(o.released, framed_ - ready_);
  if (o.replaced) {
    const std::string& r = o.replacement;
    if (r.size() > o.released) Reserve(r.size() - o.released);  // may compact: offsets move
    char* at = buf_.get() + ready_;
    std::memmove(at + r.size(), at + o.released, size_ - ready_ - o.released);
    std::memcpy(at, r.data(), r.size());
    size_t shift_from = ready_ + o.released;
    auto moved = [&](size_t pos) { return pos >= shift_from ? pos + r.size() - o.released : pos; };
    framed_ = moved(framed_);
    scan_ = moved(scan_);
    size_ = size_ + r.size() - o.released;
    ready_ += r.size();
  } else {
    ready_ += o.released;
  }
  if (at_end) ready_ = framed_;
  if (ready_ < framed_) {
    if (held_since_ms_ < 0) held_since_ms_ = MonotonicNowMs();
  } else {
    held_since_ms_ = -1;
  }
}

int64_t LineRelay::HoldDeadline() const {
  if (held_since_ms_ < 0 || ready_ == framed_) return INT64_MAX;
  return held_since_ms_ + options_.hold_timeout_ms;
}

void LineRelay::OnTimer(int64_t now_ms) {
  if (now_ms >= HoldDeadline()) Release(true);
}

void LineRelay::OnWritable() {
  if (!WantsWrite()) return;
  if (out_kind_ == OutKind::kUnknown) {
    struct stat st;
    int flags = fcntl(out_, F_GETFL);
    if (fstat(out_, &st) == 0 && S_ISFIFO(st.st_mode)) {
      out_kind_ = OutKind::kPipe;
    } else if (fstat(out_, &st) == 0 && S_ISSOCK(st.st_mode)) {
      out_kind_ = OutKind::kSocket;
    } else if (flags >= 0 && (flags & O_NONBLOCK)) {
      out_kind_ = OutKind::kNonBlocking;
    } else {
      out_kind_ = OutKind::kBlocking;
    }
  }
  while (ready_ > head_) {
    size_t want = ready_ - head_;
    const char* from = buf_.get() + head_;
    ssize_t n;
    switch (out_kind_) {
      case OutKind::kPipe: {
        // A blocking pipe (gander's stdout) is written without blocking: as much as it holds.
        iovec v{const_cast<char*>(from), want};
        n = pwritev2(out_, &v, 1, -1, RWF_NOWAIT);
        if (n < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
          out_kind_ =
              (fcntl(out_, F_GETFL) & O_NONBLOCK) ? OutKind::kNonBlocking : OutKind::kBlocking;
          continue;
        }
        break;
      }
      case OutKind::kSocket:
        n = send(out_, from, want, MSG_DONTWAIT | MSG_NOSIGNAL);
        break;
      case OutKind::kNonBlocking:
        n = write(out_, from, want);
        break;
      default:
        // Blocking and poll said writable: a write of at most PIPE_BUF bytes does not block.
        n = write(out_, from, std::min<size_t>(want, 4096));
        break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      BreakOutput();
      return;
    }
    head_ += static_cast<size_t>(n);
    stats_.bytes_out += static_cast<uint64_t>(n);
    if (out_kind_ == OutKind::kBlocking) break;
  }
  if (head_ == size_) head_ = ready_ = framed_ = scan_ = size_ = 0;
}

void LineRelay::BreakOutput() {
  output_broken_ = true;
  head_ = ready_ = framed_ = scan_ = size_ = 0;
  oversize_ = false;
  held_since_ms_ = -1;
}

}  // namespace gander::relay
