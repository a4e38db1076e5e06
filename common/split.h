// SplitView: the pieces of a text between separators, one at a time, without copying.
//
//   for (SplitView pieces(path, '/'); auto piece = pieces.Next();) { ... *piece ... }
//
// Every piece is given, empty ones included: "a//b" gives "a", "", "b"; "/a/" gives "", "a",
// ""; an empty text gives one empty piece. The views point into the text.
#pragma once

#include <optional>
#include <string_view>

namespace gander {

class SplitView {
 public:
  SplitView(std::string_view text, char separator) : rest_(text), separator_(separator) {}

  // The next piece, or nullopt after the last.
  std::optional<std::string_view> Next() {
    if (done_) return std::nullopt;
    size_t end = rest_.find(separator_);
    std::string_view piece = rest_.substr(0, end);
    if (end == std::string_view::npos) {
      done_ = true;
    } else {
      rest_.remove_prefix(end + 1);
    }
    return piece;
  }

  // Whether a separator followed the piece Next gave last (so more of the text follows it).
  bool more() const { return !done_; }

 private:
  std::string_view rest_;
  char separator_;
  bool done_ = false;
};

}  // namespace gander
