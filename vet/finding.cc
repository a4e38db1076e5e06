#include "vet/finding.h"

#include <iterator>

#include "common/enum_names.h"

namespace gander::vet {

namespace {

constexpr EnumName<Severity> kSeverityNames[] = {{Severity::kInfo, "info"},
                                                 {Severity::kLow, "low"},
                                                 {Severity::kMedium, "medium"},
                                                 {Severity::kHigh, "high"}};

// A category's word in JSON and its section title in text and Markdown.
struct CategoryWords {
  Category value;
  const char* name;
  const char* title;
};
constexpr CategoryWords kCategoryWords[] = {
    {Category::kBait, "bait", "Bait files touched"},
    {Category::kFile, "file", "Files outside the workspace"},
    {Category::kNetwork, "network", "Hosts contacted or attempted"},
    {Category::kProcess, "process", "Processes executed"},
    {Category::kSyscall, "syscall", "Syscalls refused"},
    {Category::kEnvironment, "environment", "Environment variables"},
    {Category::kDescription, "description", "Descriptions that instruct the model"},
    {Category::kAudit, "audit", "The audit itself"}};

const CategoryWords& WordsOf(Category c) {
  for (const CategoryWords& w : kCategoryWords) {
    if (w.value == c) return w;
  }
  return kCategoryWords[std::size(kCategoryWords) - 1];  // the audit itself
}

}  // namespace

const char* SeverityName(Severity s) { return NameOf(kSeverityNames, s); }

std::optional<Severity> ParseSeverity(std::string_view name) {
  return ValueOf(kSeverityNames, name);
}

const char* CategoryName(Category c) { return WordsOf(c).name; }

const char* CategoryTitle(Category c) { return WordsOf(c).title; }

Severity Highest(const std::vector<Finding>& findings) {
  Severity top = Severity::kInfo;
  for (const auto& f : findings) {
    if (f.severity > top) top = f.severity;
  }
  return top;
}

int ExitStatus(const std::vector<Finding>& findings, Severity fail_on) {
  for (const auto& f : findings) {
    if (f.severity >= fail_on) return kExitFindings;
  }
  return kExitClean;
}

}  // namespace gander::vet
