// The malware check before an install: OSV's query API (https://google.github.io/osv.dev/),
// `POST {endpoint}/v1/query`, asked about one npm or PyPI package (and version, when exact). A
// `MAL-` advisory (OSV's malicious-packages feed) refuses the install; an endpoint that cannot
// be asked is a warning, never a silent pass.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace gander::launcher::install {

inline constexpr const char* kDefaultOsvEndpoint = "https://api.osv.dev";

struct OsvVerdict {
  enum class Kind { kClean, kMalicious, kUnreachable } kind = Kind::kClean;
  std::vector<std::string> malicious_ids{};  // kMalicious: the MAL- advisories
  std::string reason{};                      // kUnreachable: why
};

// The query's JSON body. An empty version asks about every version of the package. The
// ecosystem is OSV's name for it: "npm" or "PyPI".
std::string OsvQueryBody(const std::string& name, const std::string& version,
                         const std::string& ecosystem = "npm");

// The MAL- ids of an answer ({"vulns":[{"id":...},...]}, or {} for none); an error when the
// body is not such an answer.
Result<std::vector<std::string>> MaliciousIds(const std::string& body);

// Asks the endpoint (with curl, at most `timeout_s` seconds).
OsvVerdict CheckOsv(const std::string& endpoint, const std::string& name,
                    const std::string& version, const std::string& ecosystem = "npm",
                    int timeout_s = 10);

// The endpoint: --osv-endpoint, else GANDER_OSV_ENDPOINT, else api.osv.dev; "off": no check.
std::string OsvEndpoint(const std::string& option);

}  // namespace gander::launcher::install
