// First-N-wins label capping (see label_bounds.h).
#include "exporters/collector/label_bounds.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "events/event_json.h"

namespace gander::exporters::collector {

std::string_view NameOf(BoundedLabel label) {
  switch (label) {
    case BoundedLabel::kPath:
      return "path";
    case BoundedLabel::kDestination:
      return "destination";
    case BoundedLabel::kSyscall:
      return "syscall";
    case BoundedLabel::kTool:
      return "tool";
    case BoundedLabel::kSecret:
      return "secret";
  }
  return "path";
}

size_t LabelLimits::Of(BoundedLabel label) const {
  switch (label) {
    case BoundedLabel::kPath:
      return path;
    case BoundedLabel::kDestination:
      return destination;
    case BoundedLabel::kSyscall:
      return syscall;
    case BoundedLabel::kTool:
      return tool;
    case BoundedLabel::kSecret:
      return secret;
  }
  return 0;
}

std::string LabelBounds::Key(std::string_view extension, BoundedLabel label) {
  std::string key(extension);
  key += '\x1f';
  key += NameOf(label);
  return key;
}

bool LabelBounds::Admit(std::string_view extension, BoundedLabel label, std::string_view value) {
  key_.assign(extension);
  key_ += '\x1f';
  key_ += NameOf(label);
  auto& set = admitted_[key_];
  // Heterogeneous lookup needs C++20 transparent hashing, which GCC 12's unordered_set lacks.
  std::string v(value);
  if (set.contains(v)) return true;
  if (set.size() >= limits_.Of(label)) return false;
  set.insert(std::move(v));
  return true;
}

size_t LabelBounds::AdmittedCount(std::string_view extension, BoundedLabel label) const {
  auto it = admitted_.find(Key(extension, label));
  return it == admitted_.end() ? 0 : it->second.size();
}

void LabelBounds::AppendSnapshot(std::string& out) const {
  out += '{';
  bool first_key = true;
  for (const auto& [key, values] : admitted_) {
    if (values.empty()) continue;
    if (!std::exchange(first_key, false)) out += ',';
    events::AppendJsonText(out, key);
    out += ":[";
    bool first_value = true;
    for (const auto& v : values) {
      if (!std::exchange(first_value, false)) out += ',';
      events::AppendJsonText(out, v);
    }
    out += ']';
  }
  out += '}';
}

Status LabelBounds::Restore(const nlohmann::json& snapshot) {
  if (!snapshot.is_object()) return MakeError("labels: not an object");
  for (const auto& [key, values] : snapshot.items()) {
    if (!values.is_array()) return MakeError("labels: " + key + " is not a list");
    auto& set = admitted_[key];
    for (const auto& v : values) set.insert(v.get<std::string>());
  }
  return {};
}

}  // namespace gander::exporters::collector
