#include "policies/fingerprint.h"

#include "policies/parser.h"
#include "policies/sha256.h"

namespace gander::policies {
namespace {

void Lines(std::string& out, const char* key, const std::vector<std::string>& values) {
  for (const auto& v : values) out += std::string(key) + " " + v + "\n";
}

template <typename T>
void Limit(std::string& out, const char* key, const std::optional<T>& value) {
  if (value) out += std::string("limit ") + key + " " + std::to_string(*value) + "\n";
}

void Rules(std::string& out, const char* key, const std::vector<NetworkRule>& rules) {
  for (const auto& rule : rules) {
    out += std::string(key) + " " + rule.host;
    for (uint16_t port : rule.ports) out += " " + std::to_string(port);
    if (rule.protocol) out += std::string(" protocol=") + ProtocolName(*rule.protocol);
    out += "\n";
  }
}

}  // namespace

std::string CanonicalText(const ExpandedPolicy& p) {
  std::string out;
  Lines(out, "read", p.read);
  Lines(out, "exec", p.exec);
  Lines(out, "write", p.write);
  Lines(out, "private", p.private_);
  Lines(out, "deny", p.deny);
  Lines(out, "env.pass", p.env_pass);
  for (const auto& [name, value] : p.env_set) out += "env.set " + name + "=" + value + "\n";
  Limit(out, "processes", p.limits.processes);
  Limit(out, "open_files", p.limits.open_files);
  Limit(out, "file_size", p.limits.file_size);
  Limit(out, "core_dumps", p.limits.core_dumps);
  Limit(out, "memory", p.limits.memory);
  Limit(out, "tmpfs_size", p.limits.tmpfs_size);
  Limit(out, "tmpfs_inodes", p.limits.tmpfs_inodes);
  Rules(out, "network.allow", p.network.allow);
  Rules(out, "network.deny", p.network.deny);
  // Absent from policies that do not set it, so their fingerprints are unchanged.
  if (p.network.deny_errno) out += "network.deny_errno " + *p.network.deny_errno + "\n";
  out += "monitor.files " + std::to_string(static_cast<int>(p.files)) + "\n";
  // Only a non-default backend is written, so native policies keep their fingerprints.
  if (p.backend != Backend::kNative) out += "backend " + std::string(ToString(p.backend)) + "\n";
  // Absent without an allowlist, so policies without one keep their fingerprints; an empty
  // allowlist is a line of its own (it differs from none).
  if (p.syscalls_allow) {
    out += "syscalls.allow";
    for (const auto& name : *p.syscalls_allow) out += " " + name;
    out += "\n";
  }
  // Secrets by their rules (never values); absent from policies without secrets, so their
  // fingerprints are unchanged.
  for (const auto& [name, rule] : p.secrets) {
    out += "secret " + name + " from=" + std::string(ToString(rule.from)) +
           " name=" + rule.env_name + " path=" + rule.path.path + " run=" + rule.run +
           " json=" + rule.json + " expires=" + rule.expires +
           " timeout_ms=" + std::to_string(rule.timeout_ms.value_or(0)) +
           " ttl=" + std::to_string(rule.ttl_s.value_or(0)) +
           " on_expiry=" + std::string(rule.on_expiry ? ToString(*rule.on_expiry) : "") +
           " revoke=" + rule.revoke + " as=" + std::string(ToString(rule.as)) + "\n";
  }
  return out;
}

std::string PolicySha256(const ExpandedPolicy& policy) { return Sha256Hex(CanonicalText(policy)); }

}  // namespace gander::policies
