// `gander status`: one terminal screen from the collector's /metrics: the extensions, whether
// they run, their isolation and mode, what they were refused, what they touched outside the
// workspace, and the bytes they sent by destination.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"

namespace gander::launcher {

// One sample of the Prometheus text exposition.
struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// The samples of an exposition text; comment lines and lines that do not parse are skipped.
std::vector<MetricSample> ParseExposition(const std::string& text);

// The screen, from the samples.
void RenderStatus(const std::vector<MetricSample>& samples, std::ostream& out);

// The same as JSON: {"extensions": [{"name", "running", "isolation", "mode", "starts", "exits"
// (by reason), "denials" (by domain), "outside_workspace" (by path label), "egress_bytes" (by
// destination)}]}.
void RenderStatusJson(const std::vector<MetricSample>& samples, std::ostream& out);

// GET http://ADDRESS/metrics (ADDRESS: host:port, loopback).
Result<std::string> FetchMetrics(const std::string& address);

// The /metrics address this user's collector recorded (exporters::MetricsAddressPath), or "".
std::string ThisUsersCollectorAddress();

// `gander status [--collector ADDRESS] [--json]`; without ADDRESS (""), this user's
// collector. Exit status 0, or 1 when no collector answers.
int Status(const std::string& address, std::ostream& out, bool json = false);

}  // namespace gander::launcher
