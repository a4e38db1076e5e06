// LabelBounds: keeps label cardinality bounded. Per extension and label kind, the first N
// distinct values are admitted; every later value is reported as `other` (and the caller
// counts the overflow in gander_label_overflow_total). Admitted values are kept in the state
// file, so the same N win across collector restarts.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "common/result.h"

namespace gander::exporters::collector {

enum class BoundedLabel { kPath, kDestination, kSyscall, kTool, kSecret };
inline constexpr int kBoundedLabelCount = 5;
inline constexpr std::string_view kOtherValue = "other";

std::string_view NameOf(BoundedLabel label);  // the label's name: "path", "destination", ...

struct LabelLimits {
  size_t path = 64;
  size_t destination = 64;
  size_t syscall = 128;
  size_t tool = 64;
  size_t secret = 32;
  size_t extensions = 256;  // distinct extension names the collector accepts

  size_t Of(BoundedLabel label) const;
};

class LabelBounds {
 public:
  explicit LabelBounds(LabelLimits limits) : limits_(limits) {}

  // True when `value` may be used as the label value (admitted now or before); false when
  // the cap is reached and `other` must be used instead.
  bool Admit(std::string_view extension, BoundedLabel label, std::string_view value);
  size_t AdmittedCount(std::string_view extension, BoundedLabel label) const;
  const LabelLimits& limits() const { return limits_; }

  // The admitted values, appended to `out` as a JSON object (the state file), and back.
  void AppendSnapshot(std::string& out) const;
  Status Restore(const nlohmann::json& snapshot);

 private:
  static std::string Key(std::string_view extension, BoundedLabel label);

  LabelLimits limits_;
  std::unordered_map<std::string, std::unordered_set<std::string>> admitted_;
  std::string key_;  // scratch
};

}  // namespace gander::exporters::collector
