#include "monitor/stdio_relay.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gander::monitor {

ByteRelay::ByteRelay(int in, int out, size_t capacity) : in_(in), out_(out), buffer_(capacity) {}

void ByteRelay::OnReadable() {
  if (!WantsRead()) return;
  ssize_t n = read(in_, buffer_.data() + used_, buffer_.size() - used_);
  if (n > 0) {
    if (!output_broken_) used_ += static_cast<size_t>(n);
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  input_closed_ = true;
}

void ByteRelay::OnWritable() {
  if (!WantsWrite()) return;
  ssize_t n = write(out_, buffer_.data(), std::min(used_, kChunk));
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN) return;
    BreakOutput();
    return;
  }
  used_ -= static_cast<size_t>(n);
  relayed_ += static_cast<size_t>(n);
  std::memmove(buffer_.data(), buffer_.data() + n, used_);
}

void ByteRelay::BreakOutput() {
  output_broken_ = true;
  used_ = 0;
}

}  // namespace gander::monitor
