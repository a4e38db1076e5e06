#include "learn/audit_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "events/event_json.h"

namespace gander::learn {
namespace {

using nlohmann::json;

std::string Str(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return "";
  // Strings are byte-escaped (docs/audit-log.md, "Strings are bytes"): undo it.
  auto bytes = events::UnescapeBytes(it->get<std::string>());
  return bytes ? *bytes : "";
}

uint64_t Uint(const json& obj, const char* key, uint64_t fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_unsigned() ? it->get<uint64_t>() : fallback;
}

// Which tool call an event belongs to, for the suggestion's comments.
std::string ToolOf(const json& line) {
  auto slot = line.find("tool_call");
  if (slot == line.end() || !slot->is_object()) return "(unknown)";
  std::string state = Str(*slot, "state");
  if (state == "one") {
    std::string tool = Str(*slot, "tool");
    return tool.empty() ? "(unnamed tool)" : tool;
  }
  return state.empty() ? "(unknown)" : "(" + state + ")";
}

bool NeedOf(const std::string& access, Need* need) {
  if (access == "read" || access == "stat" || access == "other") {
    *need = Need::kRead;
  } else if (access == "exec") {
    *need = Need::kExec;
  } else if (access == "write" || access == "create" || access == "delete" || access == "rename" ||
             access == "chmod") {
    *need = Need::kWrite;
  } else {
    return false;
  }
  return true;
}

void AddFile(const json& file, const std::string& tool, const std::string& time, Learned& out) {
  std::string path = Str(file, "path");
  if (path.empty() || path[0] != '/') return;  // unresolved, or a pipe/socket
  // A delivered secret's file: a read of the secret, not a path to grant (its mount and
  // Landlock rule come with the secret).
  if (auto secret = out.secret_files.find(path); secret != out.secret_files.end()) {
    Need need;
    if (NeedOf(Str(file, "access"), &need) && need == Need::kRead) {
      out.secrets[secret->second].reads.Add(1, tool, time);
    }
    return;
  }
  std::string cls = Str(file, "class");
  if (cls == "system" || cls == "unknown") return;  // /proc, /dev: always there
  if (cls == "denied") {
    out.denied_files[path].Add(1, tool, time);
    return;
  }
  Need need;
  if (NeedOf(Str(file, "access"), &need)) out.files[path][need].Add(1, tool, time);
}

void AddNetwork(const json& net, const std::string& tool, const std::string& time, Learned& out) {
  std::string transport = Str(net, "transport");
  std::string host = Str(net, "host");
  if (transport == "dns") {
    std::transform(host.begin(), host.end(), host.begin(), ::tolower);
    while (!host.empty() && host.back() == '.') host.pop_back();
    if (!host.empty()) out.dns_names[host].Add(1, tool, time);
    return;
  }
  if (transport != "tcp" && transport != "udp") return;
  std::string ip = Str(net, "ip");
  if (host.empty()) host = ip;
  uint64_t port = Uint(net, "port", 0);
  if (host.empty() || port == 0 || port > 65535) return;
  auto& network = transport == "udp" ? out.network_udp : out.network;
  network[{host, static_cast<uint16_t>(port)}].Add(1, tool, time);
  if (!ip.empty() && ip != host) out.addresses[host].insert(ip);
}

// The secrets a run's policy delivered (`info.secrets`: name, from, as, file; never a value).
void AddSecrets(const json& info, const std::string& time, Learned& out) {
  auto secrets = info.find("secrets");
  if (secrets == info.end() || !secrets->is_array()) return;
  for (const auto& s : *secrets) {
    if (!s.is_object()) continue;
    std::string name = Str(s, "name");
    if (name.empty()) continue;
    SecretSeen& seen = out.secrets[name];
    seen.from = Str(s, "from");
    seen.as = Str(s, "as");
    seen.delivered.Add(1, "(startup)", time);
    std::string file = Str(s, "file");
    if (!file.empty() && file[0] == '/') out.secret_files[file] = name;
  }
}

}  // namespace

void AddAuditLine(std::string_view line, const std::string& extension, Learned& out) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) return;
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || Uint(j, "v", 0) != 1) {
    ++out.bad_lines;
    return;
  }
  if (!extension.empty() && Str(j, "extension") != extension) return;
  if (Str(j, "phase") == "install") return;  // gander's own install, not the extension
  ++out.lines;
  std::string kind = Str(j, "kind");
  auto body = j.find(kind);
  if (kind.empty() || body == j.end() || !body->is_object()) return;
  std::string tool = ToolOf(j);
  std::string time = Str(j, "time");
  if (kind == "file") {
    AddFile(*body, tool, time, out);
  } else if (kind == "network") {
    AddNetwork(*body, tool, time, out);
  } else if (kind == "process") {
    std::string path = Str(*body, "path");
    if (Str(*body, "action") == "exec" && !path.empty() && path[0] == '/') {
      out.files[path][Need::kExec].Add(1, tool, time);
    }
  } else if (kind == "syscall") {
    std::string name = Str(*body, "name");
    if (name.empty()) name = "nr " + std::to_string(Uint(*body, "nr", 0));
    std::string action = Str(*body, "action");
    uint64_t count = Uint(*body, "count", 1);
    if (action == "denied") out.denied_syscalls[name].Add(count, tool, time);
    if (action == "counted") out.syscalls[name] += count;
  } else if (kind == "lifecycle") {
    std::string what = Str(*body, "what");
    if (what == "start") {
      ++out.runs;
      auto info = body->find("info");
      bool has_info = info != body->end() && info->is_object();
      // "gvisor-census[+broker]": learn mode under gVisor, every syscall counted from its
      // strace.
      std::string accounting = has_info ? Str(*info, "syscall_accounting") : "";
      if (accounting == "census" || accounting.starts_with("gvisor-census")) ++out.census_runs;
      std::string ws = has_info ? Str(*info, "workspace") : "";
      auto add = [](std::vector<std::string>& to, const std::string& path) {
        if (!path.empty() && path[0] == '/' && std::find(to.begin(), to.end(), path) == to.end()) {
          to.push_back(path);
        }
      };
      add(out.workspaces, ws);
      if (has_info) AddSecrets(*info, time, out);
      if (has_info) {
        auto grants = info->find("command_grants");
        for (const auto& g : grants != info->end() && grants->is_array() ? *grants : json()) {
          if (!g.is_string()) continue;
          auto bytes = events::UnescapeBytes(g.get<std::string>());
          if (bytes) add(out.command_grants, *bytes);
        }
      }
    }
    if (what == "events_dropped")
      out.dropped += std::strtoull(Str(*body, "detail").c_str(), nullptr, 10);
  }
}

void AddAuditStream(std::istream& in, const std::string& extension, Learned& out) {
  std::string line;
  while (std::getline(in, line)) AddAuditLine(line, extension, out);
}

std::vector<std::string> RotatedFiles(const std::string& path) {
  std::vector<std::string> files;
  struct stat st;
  int last = 0;
  while (last < 1000 && stat((path + "." + std::to_string(last + 1)).c_str(), &st) == 0) ++last;
  for (int i = last; i >= 1; --i) files.push_back(path + "." + std::to_string(i));
  if (stat(path.c_str(), &st) == 0) files.push_back(path);
  return files;
}

Result<Learned> ReadAuditLogs(const std::vector<std::string>& paths, const std::string& extension) {
  Learned out;
  bool any = false;
  for (const auto& path : paths) {
    for (const auto& file : RotatedFiles(path)) {
      std::ifstream in(file);
      if (!in) return ErrnoError("cannot read audit log " + file);
      AddAuditStream(in, extension, out);
      any = true;
    }
  }
  if (!any) {
    std::string names;
    for (const auto& p : paths) names += (names.empty() ? "" : ", ") + p;
    return Error{ENOENT, "no audit log at " + names + " (run `gander run --mode learn` first)"};
  }
  return out;
}

void RebaseWorkspaces(Learned& learned, const std::string& workspace) {
  // Longest first, so that a workspace nested in another maps its own paths.
  std::vector<std::string> from = learned.workspaces;
  std::sort(from.begin(), from.end(),
            [](const auto& a, const auto& b) { return a.size() > b.size(); });
  auto rebase = [&](const std::string& path) {
    for (const auto& ws : from) {
      if (ws == workspace) return path;
      if (path == ws) return workspace;
      if (path.starts_with(ws) && path[ws.size()] == '/') return workspace + path.substr(ws.size());
    }
    return path;
  };
  decltype(learned.files) files;
  for (auto& [path, needs] : learned.files) {
    auto& into = files[rebase(path)];
    for (auto& [need, usage] : needs) into[need].Merge(usage);
  }
  learned.files = std::move(files);
  decltype(learned.denied_files) denied;
  for (auto& [path, usage] : learned.denied_files) denied[rebase(path)].Merge(usage);
  learned.denied_files = std::move(denied);
  for (auto& grant : learned.command_grants) grant = rebase(grant);
}

}  // namespace gander::learn
