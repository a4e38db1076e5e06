// The audit's report: what was run, what the server offered, what each exercised tool call
// returned, and the findings; printed as text, Markdown or JSON. Rendering is pure.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "vet/finding.h"

namespace gander::vet {

enum class Format { kText, kMarkdown, kJson };

struct ToolCallOutcome {
  std::string tool;
  std::string arguments;  // the JSON sent
  std::string outcome;    // "ok", "tool error: ...", "error: ..."
};

struct Report {
  std::vector<std::string> command;
  std::string workspace;
  std::string home;  // the fake home with the bait
  std::vector<std::string> bait;
  std::string server;    // serverInfo name and version, as the server gave them
  std::string protocol;  // the protocol version it answered with
  std::vector<std::string> tools, prompts, resources;
  bool exercised = false;
  std::vector<ToolCallOutcome> calls;
  std::vector<Finding> findings;  // sorted by ReportFindings
  bool complete = true;           // false: the session did not get through (see `problem`)
  std::string problem;
  std::string exit;  // how the extension (gander run) ended
  Severity fail_on = Severity::kHigh;
  std::string audit_log;  // kept audit log, when --keep
};

// Sorts the findings: by category (the report's section order), then severity, highest first.
void SortFindings(std::vector<Finding>& findings);

void PrintReport(const Report& report, Format format, std::ostream& out);

}  // namespace gander::vet
