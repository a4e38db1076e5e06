// One direction of the MCP-aware stdio relay: bytes from `in` to `out`, unchanged except for
// secret redaction, framed into lines so that each JSON-RPC message can be read on its way.
//
// Memory is bounded: a line is held until its newline arrives (so an observer can parse it
// whole) only up to `max_line` bytes; a longer line is forwarded in pieces as it arrives and
// never parsed. Bytes ready for the reader are bounded by `out_capacity`: when the reader is
// slow, reading stops and the writer is throttled by its own full pipe.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gander::relay {

// Sees every complete line (without its '\n') before it is forwarded. The memory behind the
// view stays readable for kLinePadding bytes past its end (kept for readers that want it).
enum class LineVerdict {
  kForward,  // JSON: forwarded
  kNotJson,  // not JSON: counted, forwarded all the same (judging it is not gander's job)
  kSwallow,  // gander's own business (the answer to a replayed initialize): not forwarded
};

class LineObserver {
 public:
  virtual ~LineObserver() = default;
  virtual LineVerdict OnLine(std::string_view line) = 0;
};

// Rewrites the byte stream on its way out (secret redaction). Called with the bytes not yet
// released; it may replace some of them and says how many leading bytes are final. The rest
// (the start of what may become a match) is offered again with the bytes that follow, or with
// `at_end` set when no more are coming (then every byte must be released).
class StreamRewriter {
 public:
  virtual ~StreamRewriter() = default;
  struct Outcome {
    size_t released = 0;      // leading input bytes that are final (after `replacement`)
    bool replaced = false;    // when set, input[0, released) becomes `replacement`
    std::string replacement;  // only meaningful when `replaced`
  };
  virtual Outcome Rewrite(std::string_view pending, bool at_end) = 0;
};

inline constexpr size_t kLinePadding = 64;  // >= SIMDJSON_PADDING

struct LineRelayOptions {
  size_t max_line = 64u << 20;       // longer lines are forwarded in pieces, unparsed
  size_t out_capacity = 256u << 10;  // processed bytes waiting for the reader
  size_t read_chunk = 256u << 10;    // bytes asked for per read(2)
  // A rewriter holding bytes back (a possible secret cut by a read) releases them after this
  // long without new input.
  int64_t hold_timeout_ms = 200;
  // false (stderr): no observer, so no line is held for its end; bytes go out as they come
  // (through the rewriter).
  bool hold_lines = true;
};

struct LineRelayStats {
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t lines = 0;            // complete lines seen (the last one may lack its '\n')
  uint64_t non_json_lines = 0;   // lines the observer could not parse
  uint64_t oversize_lines = 0;   // lines longer than max_line, forwarded unparsed
  uint64_t empty_lines = 0;      // blank lines (forwarded, not parsed)
  uint64_t swallowed_lines = 0;  // lines the observer kept from the reader
};

class LineRelay {
 public:
  // `in` and `out` stay owned by the caller. `observer` and `rewriter` may be null.
  LineRelay(int in, int out, LineRelayOptions options = {}, LineObserver* observer = nullptr,
            StreamRewriter* rewriter = nullptr);

  bool WantsRead() const;
  bool WantsWrite() const { return !output_broken_ && ready_ > head_; }
  bool input_closed() const { return input_closed_; }
  bool output_broken() const { return output_broken_; }
  // The input hit EOF (or an error) and every byte read was written or discarded.
  bool Finished() const { return input_closed_ && size_ == head_; }
  int in() const { return in_; }
  int out() const { return out_; }
  const LineRelayStats& stats() const { return stats_; }
  size_t buffered() const { return size_ - head_; }
  size_t buffer_capacity() const { return capacity_; }

  // Call when poll reports `in` readable (or hung up). Reads once.
  void OnReadable();
  // Call when poll reports `out` writable. Writes until the pipe is full (pipes, non-blocking
  // fds, sockets) or once (anything else that blocks).
  void OnWritable();
  // The output went away: drop what is buffered and whatever still arrives.
  void BreakOutput();
  // Bytes fed directly (tests, the fuzzer, a replay): as if read from `in`.
  void Feed(std::string_view bytes);
  // Marks the input as ended (as EOF from `in` would).
  void CloseInput();
  // When bytes are held back by the rewriter: the monotonic ms when they must be released.
  int64_t HoldDeadline() const;
  // Releases held-back bytes if their deadline (`now_ms`) has passed.
  void OnTimer(int64_t now_ms);
  // Queues bytes for the reader that did not come from `in` (a synthesised JSON-RPC error),
  // between lines: only call when no partial line is pending (AtLineBoundary()).
  void Inject(std::string_view bytes);
  bool AtLineBoundary() const { return framed_ == size_ && !oversize_; }

  // Restart behind the relay. On the side that reads from the old extension: forward the
  // complete lines it wrote, drop its partial line (ending an oversize line already partly
  // forwarded with '\n'), and read from `in` from now on.
  void SwitchInput(int in);
  // On the side that writes to the old extension: drop what it was not given yet (those
  // requests are failed by the caller), keep the client's partial line, queue `first` (the
  // replayed handshake) before it, and write to `out` from now on.
  void SwitchOutput(int out, std::string_view first);

 private:
  void Reserve(size_t extra);
  void Append(std::string_view bytes);
  void Process(bool at_end);
  void Frame(bool at_end);
  void Release(bool at_end);
  void Compact();

  int in_;
  int out_;
  LineRelayOptions options_;
  LineObserver* observer_;
  StreamRewriter* rewriter_;
  enum class OutKind {
    kUnknown,
    kPipe,
    kSocket,
    kNonBlocking,
    kBlocking
  } out_kind_ = OutKind::kUnknown;

  // buf_[head_, ready_): ready for the reader; [ready_, framed_): framed (observed, or pieces of
  // an oversize line) but held by the rewriter; [framed_, size_): the partial line.
  std::unique_ptr<char[]> buf_;
  size_t capacity_ = 0;  // usable bytes (kLinePadding more are allocated)
  size_t head_ = 0, ready_ = 0, framed_ = 0, size_ = 0;
  size_t scan_ = 0;        // where the search for '\n' resumes
  bool oversize_ = false;  // inside a line longer than max_line
  bool skipping_ = false;  // dropping the rest of a line (restart cut it)
  int64_t held_since_ms_ = -1;
  LineRelayStats stats_;
  bool input_closed_ = false;
  bool output_broken_ = false;
};

int64_t MonotonicNowMs();

}  // namespace gander::relay
