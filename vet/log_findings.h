// From an audit run's audit log (docs/audit-log.md) to findings: files outside the workspace,
// bait touched, hosts tried, programs executed, syscalls refused, environment reads. Pure: the
// lines and the run's layout in, findings out.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "vet/finding.h"

namespace gander::vet {

struct LogContext {
  std::string workspace;          // absolute
  std::string home;               // the fake home (absolute)
  std::vector<std::string> bait;  // absolute paths of the bait files
};

// Every line of `in` (other extensions' lines and lines that do not parse are skipped; a line
// that does not parse is counted in an `audit` finding). Equal observations are merged into
// one finding with a count and the tool calls they happened in.
std::vector<Finding> FindingsFromAuditLog(std::istream& in, const LogContext& context);

}  // namespace gander::vet
