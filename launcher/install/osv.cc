#include "launcher/install/osv.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "launcher/install/capture.h"

namespace gander::launcher::install {
std::string OsvQueryBody(const std::string& name, const std::string& version,
                         const std::string& ecosystem) {
  nlohmann::json body = {{"package", {{"name", name}, {"ecosystem", ecosystem}}}};
  if (!version.empty()) body["version"] = version;
  return body.dump();
}

Result<std::vector<std::string>> MaliciousIds(const std::string& body) {
  auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return MakeError("the answer is not a JSON object");
  std::vector<std::string> ids;
  auto vulns = json.find("vulns");
  if (vulns == json.end()) return ids;
  if (!vulns->is_array()) return MakeError("`vulns` is not an array");
  for (const auto& v : *vulns) {
    if (!v.is_object() || !v.contains("id") || !v["id"].is_string()) continue;
    std::string id = v["id"].get<std::string>();
    if (id.starts_with("MAL-")) ids.push_back(std::move(id));
  }
  return ids;
}

OsvVerdict CheckOsv(const std::string& endpoint, const std::string& name,
                    const std::string& version, const std::string& ecosystem, int timeout_s) {
  std::string url = endpoint;
  while (url.ends_with("/")) url.pop_back();
  url += "/v1/query";
  auto answer = CaptureOutput(
      {"curl", "--silent", "--show-error", "--fail", "--max-time", std::to_string(timeout_s),
       "--header", "Content-Type: application/json", "--data-binary", "@-", url},
      OsvQueryBody(name, version, ecosystem));
  if (!answer) {
    return {.kind = OsvVerdict::Kind::kUnreachable,
            .reason = url + ": " + answer.error().Describe()};
  }
  auto ids = MaliciousIds(*answer);
  if (!ids) {
    return {.kind = OsvVerdict::Kind::kUnreachable, .reason = url + ": " + ids.error().message};
  }
  if (ids->empty()) return {};
  return {.kind = OsvVerdict::Kind::kMalicious, .malicious_ids = std::move(ids).value()};
}

std::string OsvEndpoint(const std::string& option) {
  if (!option.empty()) return option;
  if (const char* env = getenv("GANDER_OSV_ENDPOINT"); env && *env) return env;
  return kDefaultOsvEndpoint;
}

}  // namespace gander::launcher::install
