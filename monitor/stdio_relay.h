// One direction of the stdio relay between Goose and the extension: bytes from `in` to `out`
// through a fixed buffer, so a slow reader throttles the writer instead of growing gander.
// Framing-aware parsing of the MCP traffic comes on top of this (the relay issue).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <vector>

namespace gander::monitor {

class ByteRelay {
 public:
  // `in` and `out` stay owned by the caller. Writes are at most kChunk bytes so that a
  // blocking pipe reported writable by poll never blocks.
  ByteRelay(int in, int out, size_t capacity = 64 * 1024);

  static constexpr size_t kChunk = 4096;

  // Once the output is broken, input is still read (and discarded) so the writer never
  // blocks on a full pipe.
  bool WantsRead() const { return !input_closed_ && used_ < buffer_.size(); }
  bool WantsWrite() const { return !output_broken_ && used_ > 0; }
  bool input_closed() const { return input_closed_; }
  bool output_broken() const { return output_broken_; }
  // The input hit EOF (or an error) and every byte read was written or discarded.
  bool Finished() const { return input_closed_ && used_ == 0; }
  int in() const { return in_; }
  int out() const { return out_; }
  size_t bytes_relayed() const { return relayed_; }

  // Call when poll reports `in` readable (or hung up). Reads once.
  void OnReadable();
  // Call when poll reports `out` writable. Writes once.
  void OnWritable();
  // The output went away: drop what is buffered and whatever still arrives.
  void BreakOutput();

 private:
  int in_;
  int out_;
  std::vector<char> buffer_;
  size_t used_ = 0;
  size_t relayed_ = 0;
  bool input_closed_ = false;
  bool output_broken_ = false;
};

}  // namespace gander::monitor
