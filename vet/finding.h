// What `gander audit` reports: findings with a severity, and the exit status they give. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gander::vet {

// Ordered: a finding at or above `--fail-on` makes the audit fail.
enum class Severity { kInfo, kLow, kMedium, kHigh };

const char* SeverityName(Severity s);
// "low", "medium", "high" (and "info"); nullopt for anything else.
std::optional<Severity> ParseSeverity(std::string_view name);

// The report's sections, in the order they are printed.
enum class Category {
  kBait,         // a bait file in the fake home was opened (or looked up)
  kFile,         // files read or written outside the workspace
  kNetwork,      // hosts contacted or attempted, DNS queries
  kProcess,      // programs executed
  kSyscall,      // syscalls the sandbox refused (denied / would_deny)
  kEnvironment,  // environment variables the extension asked for
  kDescription,  // tool / prompt / resource descriptions that try to instruct the model
  kAudit,        // the audit itself: incomplete runs, dropped events, tool calls that failed
};
inline constexpr Category kAllCategories[] = {
    Category::kBait,    Category::kFile,        Category::kNetwork,     Category::kProcess,
    Category::kSyscall, Category::kEnvironment, Category::kDescription, Category::kAudit};
const char* CategoryName(Category c);   // "bait", "file", ... (JSON)
const char* CategoryTitle(Category c);  // "Bait files touched", ... (text, Markdown)

struct Finding {
  Severity severity = Severity::kInfo;
  Category category = Category::kAudit;
  std::string summary;           // one line: what happened
  std::string detail;            // more: a path, argv, an excerpt (may be empty)
  std::string tool;              // the tool call it happened in: a tool name, "(startup)", ...
  unsigned long long count = 1;  // how many audit log events it stands for
};

// `gander audit`'s exit status: 1 when a finding is at or above `fail_on`, else 0. (2, bad
// input, and 3, an audit that could not run, are decided before any finding exists.)
inline constexpr int kExitClean = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitIncomplete = 3;
int ExitStatus(const std::vector<Finding>& findings, Severity fail_on);

// The highest severity among `findings` (kInfo when there are none).
Severity Highest(const std::vector<Finding>& findings);

}  // namespace gander::vet
