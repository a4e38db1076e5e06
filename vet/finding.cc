#include "vet/finding.h"

namespace gander::vet {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kLow:
      return "low";
    case Severity::kMedium:
      return "medium";
    case Severity::kHigh:
      return "high";
  }
  return "info";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  for (Severity s : {Severity::kInfo, Severity::kLow, Severity::kMedium, Severity::kHigh}) {
    if (name == SeverityName(s)) return s;
  }
  return std::nullopt;
}

const char* CategoryName(Category c) {
  switch (c) {
    case Category::kBait:
      return "bait";
    case Category::kFile:
      return "file";
    case Category::kNetwork:
      return "network";
    case Category::kProcess:
      return "process";
    case Category::kSyscall:
      return "syscall";
    case Category::kEnvironment:
      return "environment";
    case Category::kDescription:
      return "description";
    case Category::kAudit:
      return "audit";
  }
  return "audit";
}

const char* CategoryTitle(Category c) {
  switch (c) {
    case Category::kBait:
      return "Bait files touched";
    case Category::kFile:
      return "Files outside the workspace";
    case Category::kNetwork:
      return "Hosts contacted or attempted";
    case Category::kProcess:
      return "Processes executed";
    case Category::kSyscall:
      return "Syscalls refused";
    case Category::kEnvironment:
      return "Environment variables";
    case Category::kDescription:
      return "Descriptions that instruct the model";
    case Category::kAudit:
      return "The audit itself";
  }
  return "";
}

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
