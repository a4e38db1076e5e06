#include "mcp/bounded_output.h"

#include <algorithm>

namespace gander::mcp {

BoundedOutput::BoundedOutput(size_t limit)
    : head_limit_(limit - limit / 2), tail_limit_(limit / 2) {
  tail_.resize(tail_limit_);
}

void BoundedOutput::Feed(std::string_view bytes) {
  total_ += bytes.size();
  size_t to_head = std::min(bytes.size(), head_limit_ - head_.size());
  head_.append(bytes.substr(0, to_head));
  bytes.remove_prefix(to_head);
  if (tail_limit_ == 0 || bytes.empty()) return;
  // Only the last tail_limit_ bytes of this piece can survive.
  if (bytes.size() >= tail_limit_) {
    bytes = bytes.substr(bytes.size() - tail_limit_);
    tail_.assign(bytes);
    tail_start_ = 0;
    tail_size_ = tail_limit_;
    return;
  }
  for (char c : bytes) {
    size_t end = (tail_start_ + tail_size_) % tail_limit_;
    tail_[end] = c;
    if (tail_size_ < tail_limit_) {
      ++tail_size_;
    } else {
      tail_start_ = (tail_start_ + 1) % tail_limit_;
    }
  }
}

std::string CutMarker(uint64_t cut) {
  return "\n[... " + std::to_string(cut) + " bytes cut ...]\n";
}

std::string BoundedOutput::Text() const {
  std::string out = head_;
  if (cut() > 0) out += CutMarker(cut());
  for (size_t i = 0; i < tail_size_; ++i) out += tail_[(tail_start_ + i) % tail_limit_];
  return out;
}

}  // namespace gander::mcp
