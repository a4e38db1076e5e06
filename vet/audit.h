// `gander audit -- COMMAND...`: runs a community extension once under the strict default
// policy (`gander run --mode monitor --profile default --collector off`), in a private fake
// home holding bait files and a temporary workspace, drives it as an MCP client (initialize,
// tools/list, prompts/list, resources/list; with `exercise`, every tool called with minimal
// arguments from its schema), then reports what its audit log and its descriptions show.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "vet/finding.h"
#include "vet/report.h"

namespace gander::vet {

struct AuditOptions {
  std::vector<std::string> command;
  bool exercise = false;
  Format format = Format::kText;
  Severity fail_on = Severity::kHigh;
  std::string workspace;     // empty: a temporary directory
  bool keep = false;         // keep the temporary directory (fake home, audit log, stderr)
  int timeout_seconds = 60;  // per MCP request
  std::string gander;        // the gander binary, run as `gander run ...`
};

// The bait files put in the fake home, relative to it, and a recognisable fake content each.
struct BaitFile {
  const char* path;
  const char* content;
};
const std::vector<BaitFile>& BaitFiles();

// Runs the audit, prints the report on `out`; returns the exit status: 0 clean, 1 a finding at
// or above fail_on, 2 bad input (nothing started), 3 the session could not be completed (the
// report says why).
int RunAudit(const AuditOptions& options, std::ostream& out);

}  // namespace gander::vet
