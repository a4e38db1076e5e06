#include "policies/diff.h"

#include <algorithm>
#include <set>

#include "policies/parser.h"

namespace gander::policies {
namespace {

void Paths(std::vector<std::string>& out, const char* key, const std::vector<PathEntry>& list) {
  for (const auto& p : list) out.push_back(std::string("filesystem.") + key + " " + p.path);
}

void Rules(std::vector<std::string>& out, const char* key, const std::vector<NetworkRule>& list) {
  for (const auto& rule : list) {
    std::string line = std::string("network.") + key + " " + rule.host;
    for (uint16_t port : rule.ports) line += " " + std::to_string(port);
    if (rule.protocol) line += std::string(" protocol=") + ProtocolName(*rule.protocol);
    out.push_back(line);
  }
}

template <typename T>
void Limit(std::vector<std::string>& out, const char* key, const std::optional<T>& value) {
  if (value) out.push_back(std::string("limits.") + key + " " + std::to_string(*value));
}

}  // namespace

std::vector<std::string> RuleLines(const Policy& p) {
  std::vector<std::string> out;
  Paths(out, "read", p.filesystem.read);
  Paths(out, "exec", p.filesystem.exec);
  Paths(out, "write", p.filesystem.write);
  Paths(out, "private", p.filesystem.private_);
  Paths(out, "deny", p.filesystem.deny);
  for (const auto& name : p.env.pass) out.push_back("env.pass " + name);
  for (const auto& [name, value] : p.env.set) out.push_back("env.set " + name + "=" + value);
  Limit(out, "processes", p.limits.processes);
  Limit(out, "open_files", p.limits.open_files);
  if (p.limits.file_size) out.push_back("limits.file_size " + FormatSize(*p.limits.file_size));
  if (p.limits.memory) out.push_back("limits.memory " + FormatSize(*p.limits.memory));
  if (p.limits.tmpfs_size) {
    out.push_back("limits.tmpfs_size " + FormatSize(*p.limits.tmpfs_size));
  }
  Limit(out, "tmpfs_inodes", p.limits.tmpfs_inodes);
  if (p.limits.core_dumps) {
    out.push_back(std::string("limits.core_dumps ") + (*p.limits.core_dumps ? "true" : "false"));
  }
  Rules(out, "allow", p.network.allow);
  Rules(out, "deny", p.network.deny);
  if (p.network.deny_errno) out.push_back("network.deny_errno " + *p.network.deny_errno);
  if (p.monitor.files) out.push_back("monitor.files " + std::string(ToString(*p.monitor.files)));
  if (p.monitor.audit_log) out.push_back("monitor.audit_log " + p.monitor.audit_log->path);
  if (p.monitor.audit_log_max_size) {
    out.push_back("monitor.audit_log_max_size " + FormatSize(*p.monitor.audit_log_max_size));
  }
  if (p.monitor.audit_log_files) {
    out.push_back("monitor.audit_log_files " + std::to_string(*p.monitor.audit_log_files));
  }
  if (p.monitor.osv_endpoint) out.push_back("monitor.osv_endpoint " + *p.monitor.osv_endpoint);
  if (p.syscalls.allow) {
    // One line per name, and one for the list itself: an empty list differs from none.
    std::set<std::string> names;
    for (const auto& entry : *p.syscalls.allow) names.insert(entry.name);
    out.push_back("syscalls.allow (" + std::to_string(names.size()) + " names)");
    for (const auto& name : names) out.push_back("syscalls.allow " + name);
  }
  for (const auto& [name, r] : p.secrets) {
    std::string line = "secrets." + name + " from=" + std::string(ToString(r.from));
    if (!r.env_name.empty()) line += " name=" + r.env_name;
    if (!r.path.path.empty()) line += " path=" + r.path.path;
    if (!r.run.empty()) line += " run=" + r.run;
    if (!r.json.empty()) line += " json=" + r.json;
    if (!r.expires.empty()) line += " expires=" + r.expires;
    if (r.timeout_ms) line += " timeout=" + FormatDuration(*r.timeout_ms / 1000);
    if (r.ttl_s) line += " ttl=" + FormatDuration(*r.ttl_s);
    if (r.on_expiry) line += " on_expiry=" + std::string(ToString(*r.on_expiry));
    if (!r.revoke.empty()) line += " revoke=" + r.revoke;
    line += " as=" + std::string(ToString(r.as));
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> DiffRules(const Policy& old_policy, const Policy& new_policy) {
  auto old_lines = RuleLines(old_policy), new_lines = RuleLines(new_policy);
  std::set<std::string> old_set(old_lines.begin(), old_lines.end());
  std::set<std::string> new_set(new_lines.begin(), new_lines.end());
  std::vector<std::string> out;
  for (const auto& l : old_lines) {
    if (!new_set.contains(l)) out.push_back("- " + l);
  }
  for (const auto& l : new_lines) {
    if (!old_set.contains(l)) out.push_back("+ " + l);
  }
  return out;
}

}  // namespace gander::policies
