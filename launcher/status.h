// `gander status`: one terminal screen from the collector's /metrics: the extensions, whether
// they run, their isolation and mode, what they were refused, what they touched outside the
// workspace, and the bytes they sent by destination.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <ostream>
#include <set>
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

// When an extension was last seen (its audit log's last event time, UTC), or "".
using LastSeen = std::function<std::string(const std::string& extension)>;

// The screen, from the samples. Counts are integers; a denied path inside the workspace
// (`${WORKSPACE}/.ssh`) is listed as such, not as outside it.
void RenderStatus(const std::vector<MetricSample>& samples, std::ostream& out,
                  const LastSeen& last_seen = nullptr);

// The same as JSON: {"extensions": [{"name", "last_seen" (or null), "running", "isolation",
// "mode", "starts", "exits" (by reason), "denials" (by domain), "outside_workspace" and
// "denied_inside_workspace" (by path label), "egress_bytes" (by destination)}]}, every count
// an integer.
void RenderStatusJson(const std::vector<MetricSample>& samples, std::ostream& out,
                      const LastSeen& last_seen = nullptr);

// The time of the last event in an audit log (the last complete line's "time"), or "".
std::string LastEventTime(const std::string& audit_log_path);

// GET http://ADDRESS/metrics (ADDRESS: host:port, loopback).
Result<std::string> FetchMetrics(const std::string& address);

// The /metrics address this user's collector recorded (exporters::MetricsAddressPath), or "".
std::string ThisUsersCollectorAddress();

// The process behind a collector socket (SO_PEERCRED); answered false when nothing accepts.
struct CollectorPeer {
  bool answered = false;
  pid_t pid = 0;
  uid_t uid = 0;
};
CollectorPeer FindCollectorPeer(const std::string& socket_path);

// The IPv4 loopback TCP ports process `pid` listens on (its socket inodes in /proc/net/tcp).
std::set<uint16_t> LoopbackListenPorts(pid_t pid);

// `gander status [--collector ADDRESS] [--json]`; without ADDRESS (""), this user's
// collector. Exit status 0, or 1 when no collector answers.
int Status(const std::string& address, std::ostream& out, bool json = false);

}  // namespace gander::launcher
