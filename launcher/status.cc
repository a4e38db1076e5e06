#include "launcher/status.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/split.h"
#include "common/unique_fd.h"
#include "common/unix_socket.h"
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
  for (SplitView lines(text, '\n'); auto line = lines.Next();) {
    MetricSample sample;
    if (!line->empty() && (*line)[0] != '#' && ParseLine(std::string(*line), sample)) {
      out.push_back(sample);
    }
  }
  return out;
}

namespace {

// Counters are integers: kept as such (the exposition writes them as floats).
struct Row {
  bool running = false;
  std::string isolation = "?", mode = "?";
  std::map<std::string, int64_t> denials;        // by domain
  std::map<std::string, int64_t> outside;        // by path label, outside the workspace
  std::map<std::string, int64_t> denied_inside;  // by path label, ${WORKSPACE}/...: denied
  std::map<std::string, int64_t> egress;         // bytes out by destination
  std::map<std::string, int64_t> exits;          // by reason
  int64_t starts = 0;
};

int64_t Count(double v) { return std::llround(v); }

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
    if (s.name == "gander_extension_starts_total") r.starts = Count(s.value);
    if (s.name == "gander_extension_info") {
      r.isolation = Label(s, "isolation");
      r.mode = Label(s, "mode");
    }
    // The extension's own run: gander's install of its package (phase="install") is in the
    // metrics and alerts, and `gander audit`, but not charged to the extension here.
    if (Label(s, "phase") == "install") continue;
    const int64_t n = Count(s.value);
    if (s.name == "gander_denials_total" && n > 0) r.denials[Label(s, "domain")] += n;
    if (s.name == "gander_file_access_outside_workspace_total" && n > 0) {
      // A denied path inside the workspace (its .ssh, say) is counted in the same series.
      std::string path = Label(s, "path");
      (path.starts_with("${WORKSPACE}") ? r.denied_inside : r.outside)[path] += n;
    }
    if (s.name == "gander_egress_bytes_total" && n > 0) r.egress[Label(s, "destination")] += n;
    if (s.name == "gander_extension_exits_total" && n > 0) r.exits[Label(s, "reason")] += n;
  }
  return rows;
}

}  // namespace

void RenderStatus(const std::vector<MetricSample>& samples, std::ostream& out,
                  const LastSeen& last_seen) {
  std::map<std::string, Row> rows = Rows(samples);
  if (rows.empty()) {
    out << "No extension has reported to the collector yet.\n";
    return;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "%-24s %-8s %-9s %-8s %6s  %s\n", "EXTENSION", "STATE",
                "ISOLATION", "MODE", "STARTS", "LAST SEEN");
  out << line;
  for (const auto& [name, r] : rows) {
    std::string seen = last_seen ? last_seen(name) : "";
    std::snprintf(line, sizeof(line), "%-24s %-8s %-9s %-8s %6lld  %s\n", name.c_str(),
                  r.running ? "running" : "stopped", r.isolation.c_str(), r.mode.c_str(),
                  static_cast<long long>(r.starts), seen.empty() ? "-" : seen.c_str());
    out << line;
    auto list = [&](const char* title, const std::map<std::string, int64_t>& m, bool bytes) {
      if (m.empty()) return;
      out << "    " << title << ":";
      for (const auto& [key, value] : m) {
        out << " " << key << " "
            << (bytes ? Bytes(static_cast<double>(value)) : std::to_string(value));
        out << ";";
      }
      out << "\n";
    };
    list("exits (by reason)", r.exits, false);
    list("denied (by domain)", r.denials, false);
    list("outside the workspace", r.outside, false);
    list("denied inside the workspace", r.denied_inside, false);
    list("sent (by destination)", r.egress, true);
  }
}

void RenderStatusJson(const std::vector<MetricSample>& samples, std::ostream& out,
                      const LastSeen& last_seen) {
  nlohmann::json extensions = nlohmann::json::array();
  for (const auto& [name, r] : Rows(samples)) {
    std::string seen = last_seen ? last_seen(name) : "";
    extensions.push_back({{"name", name},
                          {"last_seen", seen.empty() ? nlohmann::json() : nlohmann::json(seen)},
                          {"denied_inside_workspace", r.denied_inside},
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

std::string LastEventTime(const std::string& audit_log_path) {
  std::ifstream in(audit_log_path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = size > 65536 ? size - 65536 : 0;
  in.seekg(from);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The last complete line (a line still being written has no newline yet).
  size_t end = tail.rfind('\n');
  if (end == std::string::npos) return "";
  size_t begin = tail.rfind('\n', end == 0 ? 0 : end - 1);
  begin = begin == std::string::npos || begin >= end ? 0 : begin + 1;
  auto event = nlohmann::json::parse(tail.substr(begin, end - begin), nullptr, false);
  if (!event.is_object() || !event.contains("time") || !event["time"].is_string()) return "";
  std::string time = event["time"];
  // 2026-12-01T19:24:20.866060Z -> 2026-12-01T19:24:20Z
  size_t dot = time.find('.');
  return dot == std::string::npos ? time : time.substr(0, dot) + "Z";
}

CollectorPeer FindCollectorPeer(const std::string& socket_path) {
  CollectorPeer peer;
  auto connected = ConnectUnix(socket_path);
  if (!connected) return peer;
  UniqueFd fd = std::move(connected).value();
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return peer;
  peer.answered = true;
  peer.pid = cred.pid;
  peer.uid = cred.uid;
  return peer;
}

std::set<uint16_t> LoopbackListenPorts(pid_t pid) {
  // The process's socket inodes, then the IPv4 loopback listeners among them.
  std::set<std::string> inodes;
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::string link = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && link.starts_with("socket:[") && link.ends_with("]")) {
      inodes.insert(link.substr(8, link.size() - 9));
    }
  }
  std::set<uint16_t> ports;
  std::ifstream tcp("/proc/self/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >>
        inode;
    if (state != "0A" || !local.starts_with("0100007F:") || !inodes.contains(inode)) continue;
    ports.insert(static_cast<uint16_t>(std::stoul(local.substr(9), nullptr, 16)));
  }
  return ports;
}

namespace {

uint16_t PortOf(const std::string& address) {
  size_t colon = address.rfind(':');
  return colon == std::string::npos ? 0
                                    : static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1));
}

// This user's collector's /metrics address: asked of the process behind this user's socket
// (SO_PEERCRED), whose own loopback listener it must be: the recorded address is used only
// when that process owns its port, so neither a stale file nor another user's collector on
// that port is believed. A collector of an older gander recorded nothing: found the same way.
std::string ThisUsersMetricsAddress() {
  const std::string socket = exporters::DefaultCollectorSocket();
  const std::string recorded = ThisUsersCollectorAddress();
  CollectorPeer peer = FindCollectorPeer(socket);
  if (!peer.answered) {
    std::cerr << "gander: no collector answers on this user's socket " << socket
              << (recorded.empty() ? ""
                                   : " (the address recorded beside it, " + recorded +
                                         ", is not asked: anyone may listen there now)")
              << "; `gander run` starts one, or see docs/collector.md\n";
    return "";
  }
  if (peer.uid != getuid()) {
    std::cerr << "gander: the process on " << socket << " runs as uid " << peer.uid
              << ", not as you: not asked\n";
    return "";
  }
  std::set<uint16_t> ports = LoopbackListenPorts(peer.pid);
  if (!recorded.empty() && ports.contains(PortOf(recorded))) return recorded;
  if (ports.empty()) {
    std::cerr << "gander: this user's collector (pid " << peer.pid
              << ") serves no /metrics on the loopback (started with --listen none?)\n";
    return "";
  }
  std::string found = "127.0.0.1:" + std::to_string(*ports.begin());
  std::cerr << "gander: "
            << (recorded.empty()
                    ? "this user's collector (pid " + std::to_string(peer.pid) +
                          ") recorded no address (an older gander's); found it by its socket at " +
                          found
                    : "the recorded address " + recorded + " is not this user's collector's (pid " +
                          std::to_string(peer.pid) + "); asking it at " + found)
            << "\n";
  return found;
}

}  // namespace

int Status(const std::string& requested, std::ostream& out, bool json) {
  // Without --collector: this user's collector, found through this user's socket (not
  // whatever listens on the default port, which may be another user's).
  std::string address = requested.empty() ? ThisUsersMetricsAddress() : requested;
  if (address.empty()) return 1;
  auto text = FetchMetrics(address);
  if (!text) {
    std::cerr << "gander: " << text.error().Describe()
              << " (is it running? launchers start it; see docs/collector.md)\n";
    return 1;
  }
  LastSeen last_seen = [](const std::string& name) {
    return LastEventTime(exporters::DefaultAuditLogFor(name));
  };
  if (json) {
    RenderStatusJson(ParseExposition(*text), out, last_seen);
  } else {
    RenderStatus(ParseExposition(*text), out, last_seen);
  }
  return 0;
}

}  // namespace gander::launcher
