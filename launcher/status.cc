#include "launcher/status.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "common/unique_fd.h"
#include "exporters/collector_paths.h"

namespace gander::launcher {
namespace {

// `name{a="x",b="y"} value` (values never contain `"` escapes we need to keep).
bool ParseLine(const std::string& line, MetricSample& out) {
  size_t brace = line.find('{');
  size_t space = line.rfind(' ');
  if (space == std::string::npos) return false;
  out.labels.clear();
  if (brace != std::string::npos && brace < space) {
    out.name = line.substr(0, brace);
    size_t i = brace + 1;
    while (i < line.size() && line[i] != '}') {
      size_t eq = line.find("=\"", i);
      if (eq == std::string::npos) return false;
      std::string key = line.substr(i, eq - i);
      std::string value;
      size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size()) ++j;
        value += line[j];
      }
      out.labels[key] = value;
      i = j + 1;
      if (i < line.size() && line[i] == ',') ++i;
    }
  } else {
    out.name = line.substr(0, space);
  }
  try {
    out.value = std::stod(line.substr(space + 1));
  } catch (...) {
    return false;
  }
  return true;
}

std::string Bytes(double n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (n >= 1024 && u < 4) n /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof(buf), u ? "%.1f %s" : "%.0f %s", n, units[u]);
  return buf;
}

}  // namespace

std::vector<MetricSample> ParseExposition(const std::string& text) {
  std::vector<MetricSample> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    MetricSample sample;
    if (!line.empty() && line[0] != '#' && ParseLine(line, sample)) out.push_back(sample);
  }
  return out;
}

namespace {

struct Row {
  bool running = false;
  std::string isolation = "?", mode = "?";
  std::map<std::string, double> denials;  // by domain
  std::map<std::string, double> outside;  // by path label
  std::map<std::string, double> egress;   // bytes out by destination
  std::map<std::string, double> exits;    // by reason
  double starts = 0;
};

std::string Label(const MetricSample& s, const char* key) {
  auto it = s.labels.find(key);
  return it == s.labels.end() ? "?" : it->second;
}

std::map<std::string, Row> Rows(const std::vector<MetricSample>& samples) {
  std::map<std::string, Row> rows;
  for (const auto& s : samples) {
    auto ext = s.labels.find("extension");
    if (ext == s.labels.end()) continue;
    Row& r = rows[ext->second];
    if (s.name == "gander_extension_running") r.running = s.value > 0;
    if (s.name == "gander_extension_starts_total") r.starts = s.value;
    if (s.name == "gander_extension_info") {
      r.isolation = Label(s, "isolation");
      r.mode = Label(s, "mode");
    }
    // The extension's own run: gander's install of its package (phase="install") is in the
    // metrics and alerts, and `gander audit`, but not charged to the extension here.
    if (Label(s, "phase") == "install") continue;
    if (s.name == "gander_denials_total" && s.value > 0) r.denials[Label(s, "domain")] += s.value;
    if (s.name == "gander_file_access_outside_workspace_total" && s.value > 0) {
      r.outside[Label(s, "path")] += s.value;
    }
    if (s.name == "gander_egress_bytes_total" && s.value > 0) {
      r.egress[Label(s, "destination")] += s.value;
    }
    if (s.name == "gander_extension_exits_total" && s.value > 0)
      r.exits[Label(s, "reason")] += s.value;
  }
  return rows;
}

}  // namespace

void RenderStatus(const std::vector<MetricSample>& samples, std::ostream& out) {
  std::map<std::string, Row> rows = Rows(samples);
  if (rows.empty()) {
    out << "No extension has reported to the collector yet.\n";
    return;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "%-24s %-8s %-9s %-8s %6s\n", "EXTENSION", "STATE", "ISOLATION",
                "MODE", "STARTS");
  out << line;
  for (const auto& [name, r] : rows) {
    std::snprintf(line, sizeof(line), "%-24s %-8s %-9s %-8s %6.0f\n", name.c_str(),
                  r.running ? "running" : "stopped", r.isolation.c_str(), r.mode.c_str(), r.starts);
    out << line;
    auto list = [&](const char* title, const std::map<std::string, double>& m, bool bytes) {
      if (m.empty()) return;
      out << "    " << title << ":";
      for (const auto& [key, value] : m) {
        out << " " << key << " " << (bytes ? Bytes(value) : std::to_string(int64_t(value)));
        out << ";";
      }
      out << "\n";
    };
    list("exits (by reason)", r.exits, false);
    list("denied (by domain)", r.denials, false);
    list("outside the workspace", r.outside, false);
    list("sent (by destination)", r.egress, true);
  }
}

void RenderStatusJson(const std::vector<MetricSample>& samples, std::ostream& out) {
  nlohmann::json extensions = nlohmann::json::array();
  for (const auto& [name, r] : Rows(samples)) {
    extensions.push_back({{"name", name},
                          {"running", r.running},
                          {"isolation", r.isolation},
                          {"mode", r.mode},
                          {"starts", r.starts},
                          {"exits", r.exits},
                          {"denials", r.denials},
                          {"outside_workspace", r.outside},
                          {"egress_bytes", r.egress}});
  }
  out << nlohmann::json{{"extensions", extensions}}.dump(2) << "\n";
}

Result<std::string> FetchMetrics(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return MakeError("collector address " + address + ": no port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return MakeError("collector address " + address + ": not an IPv4 address");
  }
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval timeout{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("connect to the collector at " + address);
  }
  std::string request = "GET /metrics HTTP/1.0\r\nHost: " + address + "\r\n\r\n";
  if (write(fd.get(), request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    return ErrnoError("send to the collector");
  }
  std::string response;
  char buf[65536];
  for (ssize_t n; (n = read(fd.get(), buf, sizeof(buf))) > 0;) response.append(buf, n);
  size_t body = response.find("\r\n\r\n");
  if (!response.starts_with("HTTP/1.") || body == std::string::npos ||
      response.find(" 200 ") > response.find("\r\n")) {
    return MakeError("the collector at " + address + " did not answer /metrics");
  }
  return response.substr(body + 4);
}

std::string ThisUsersCollectorAddress() {
  std::ifstream in(exporters::MetricsAddressPath(exporters::DefaultCollectorSocket()));
  std::string address;
  in >> address;
  return address;
}

int Status(const std::string& requested, std::ostream& out, bool json) {
  // Without --collector: this user's collector, at the address it recorded next to its socket
  // (not whatever listens on the default port, which may be another user's).
  std::string address = requested.empty() ? ThisUsersCollectorAddress() : requested;
  if (address.empty()) {
    std::cerr << "gander: no collector runs for this user (none recorded its address in "
              << exporters::MetricsAddressPath(exporters::DefaultCollectorSocket())
              << "); `gander run` starts one, or see docs/collector.md\n";
    return 1;
  }
  auto text = FetchMetrics(address);
  if (!text) {
    std::cerr << "gander: " << text.error().Describe()
              << " (is it running? launchers start it; see docs/collector.md)\n";
    return 1;
  }
  if (json) {
    RenderStatusJson(ParseExposition(*text), out);
  } else {
    RenderStatus(ParseExposition(*text), out);
  }
  return 0;
}

}  // namespace gander::launcher
