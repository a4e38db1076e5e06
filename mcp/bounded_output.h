// Output bounded before it reaches the model: a command may print gigabytes, the model's context
// is not a log store. Keeps the first and the last bytes of a stream and counts what it cut, in
// constant memory however much is fed. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gander::mcp {

class BoundedOutput {
 public:
  // `limit`: bytes kept at most, half from the start, half from the end (a build's first
  // error and its last lines are what the model needs).
  explicit BoundedOutput(size_t limit);

  void Feed(std::string_view bytes);

  uint64_t total() const { return total_; }
  // Bytes fed but not kept.
  uint64_t cut() const { return total_ - head_.size() - tail_size_; }
  // The kept bytes; where bytes were cut, a marker between head and tail says how many:
  // "\n[... 1234 bytes cut ...]\n".
  std::string Text() const;

 private:
  size_t head_limit_;
  size_t tail_limit_;
  std::string head_;
  std::string tail_;  // a ring of tail_limit_ bytes once full
  size_t tail_start_ = 0;
  size_t tail_size_ = 0;
  uint64_t total_ = 0;
};

// The marker Text() inserts, for tests and descriptions.
std::string CutMarker(uint64_t cut);

}  // namespace gander::mcp
