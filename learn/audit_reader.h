// Reading audit logs (docs/audit-log.md, schema v1) back into a Learned summary.
#pragma once

#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "learn/learned.h"

namespace gander::learn {

// Adds one audit log line to `out` when it belongs to `extension` (empty: any extension).
// Lines that do not parse, or with another `v`, are counted in `out.bad_lines` and skipped,
// as the format asks of readers; unknown kinds and fields are ignored.
void AddAuditLine(std::string_view line, const std::string& extension, Learned& out);

// Every line of `in`.
void AddAuditStream(std::istream& in, const std::string& extension, Learned& out);

// The files of one audit log, oldest first: PATH.N, ..., PATH.1, PATH (those that exist).
std::vector<std::string> RotatedFiles(const std::string& path);

// Reads each file of `paths` (and, for each, its rotated files). An error when none exists.
Result<Learned> ReadAuditLogs(const std::vector<std::string>& paths, const std::string& extension);

// Moves the paths seen under a learning run's workspace (`learned.workspaces`) under
// `workspace`, so that a suggestion or a check made for another checkout reads them as
// workspace paths.
void RebaseWorkspaces(Learned& learned, const std::string& workspace);

}  // namespace gander::learn
