#include "common/exec_strings.h"

namespace gander {

ExecStrings::ExecStrings(std::vector<std::string> strings) : strings_(std::move(strings)) {
  ptrs_.reserve(strings_.size() + 1);
  for (std::string& s : strings_) ptrs_.push_back(s.data());
  ptrs_.push_back(nullptr);
}

ExecStrings ExecStrings::Environment(const std::map<std::string, std::string>& env) {
  std::vector<std::string> strings;
  strings.reserve(env.size());
  for (const auto& [name, value] : env) strings.push_back(name + "=" + value);
  return ExecStrings(std::move(strings));
}

}  // namespace gander
