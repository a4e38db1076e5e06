// Writing a policy back as YAML (ToYaml, declared in parser.h): `gander policy show` and
// `policy suggest`. ParsePolicy(ToYaml(p)) gives back p.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "policies/parser.h"

namespace gander::policies {
namespace {

// Writes `s` plain when that is unambiguous, else double-quoted (e.g. "${WORKSPACE}", "~").
void EmitString(YAML::Emitter& out, const std::string& s) {
  bool plain =
      !s.empty() && (std::isalnum(static_cast<unsigned char>(s[0])) != 0 || s[0] == '/' ||
                     s[0] == '_' || s[0] == '.' || (s[0] == '~' && s.size() > 1 && s[1] == '/'));
  plain = plain && std::all_of(s.begin(), s.end(), [](unsigned char c) {
            return std::isalnum(c) != 0 ||
                   std::string_view("/_.~+@=-").find(c) != std::string_view::npos;
          });
  plain = plain && s != "null" && s != "Null" && s != "NULL";
  if (plain) {
    out << s;
  } else {
    out << YAML::DoubleQuoted << s;
  }
}

void EmitList(YAML::Emitter& out, const std::vector<std::string>& items) {
  if (items.empty()) out << YAML::Flow;
  out << YAML::BeginSeq;
  for (const std::string& item : items) EmitString(out, item);
  out << YAML::EndSeq;
}

void EmitPaths(YAML::Emitter& out, const std::vector<PathEntry>& entries) {
  std::vector<std::string> paths;
  for (const PathEntry& entry : entries) paths.push_back(entry.path);
  EmitList(out, paths);
}

void EmitRules(YAML::Emitter& out, const std::vector<NetworkRule>& rules) {
  if (rules.empty()) out << YAML::Flow;
  out << YAML::BeginSeq;
  for (const NetworkRule& rule : rules) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "host" << YAML::Value;
    EmitString(out, rule.host);
    if (!rule.ports.empty()) {
      out << YAML::Key << "ports" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (uint16_t port : rule.ports) out << static_cast<unsigned>(port);
      out << YAML::EndSeq;
    }
    if (rule.protocol)
      out << YAML::Key << "protocol" << YAML::Value << ProtocolName(*rule.protocol);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// Each section below writes its key and value; an empty mapping is written `{}` (flow).

void EmitFilesystem(YAML::Emitter& out, const FilesystemRules& fs) {
  out << YAML::Key << "filesystem" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "read" << YAML::Value;
  EmitPaths(out, fs.read);
  out << YAML::Key << "exec" << YAML::Value;
  EmitPaths(out, fs.exec);
  out << YAML::Key << "write" << YAML::Value;
  EmitPaths(out, fs.write);
  out << YAML::Key << "private" << YAML::Value;
  EmitPaths(out, fs.private_);
  out << YAML::Key << "deny" << YAML::Value;
  EmitPaths(out, fs.deny);
  out << YAML::EndMap;
}

void EmitEnv(YAML::Emitter& out, const EnvRules& env) {
  out << YAML::Key << "env" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "pass" << YAML::Value;
  EmitList(out, env.pass);
  out << YAML::Key << "set" << YAML::Value;
  if (env.set.empty()) out << YAML::Flow;
  out << YAML::BeginMap;
  for (const auto& [name, value] : env.set) {
    out << YAML::Key << name << YAML::Value;
    EmitString(out, value);
  }
  out << YAML::EndMap << YAML::EndMap;
}

void EmitLimits(YAML::Emitter& out, const Limits& limits) {
  out << YAML::Key << "limits" << YAML::Value;
  if (!limits.processes && !limits.open_files && !limits.file_size && !limits.memory &&
      !limits.tmpfs_size && !limits.tmpfs_inodes && !limits.core_dumps) {
    out << YAML::Flow;
  }
  out << YAML::BeginMap;
  if (limits.processes) out << YAML::Key << "processes" << YAML::Value << *limits.processes;
  if (limits.open_files) out << YAML::Key << "open_files" << YAML::Value << *limits.open_files;
  if (limits.file_size) {
    out << YAML::Key << "file_size" << YAML::Value << FormatSize(*limits.file_size);
  }
  if (limits.memory) out << YAML::Key << "memory" << YAML::Value << FormatSize(*limits.memory);
  if (limits.tmpfs_size) {
    out << YAML::Key << "tmpfs_size" << YAML::Value << FormatSize(*limits.tmpfs_size);
  }
  if (limits.tmpfs_inodes) {
    out << YAML::Key << "tmpfs_inodes" << YAML::Value << *limits.tmpfs_inodes;
  }
  if (limits.core_dumps) {
    out << YAML::Key << "core_dumps" << YAML::Value << (*limits.core_dumps ? "true" : "false");
  }
  out << YAML::EndMap;
}

void EmitNetwork(YAML::Emitter& out, const NetworkRules& network) {
  out << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "allow" << YAML::Value;
  EmitRules(out, network.allow);
  out << YAML::Key << "deny" << YAML::Value;
  EmitRules(out, network.deny);
  if (network.deny_errno) {
    out << YAML::Key << "deny_errno" << YAML::Value << *network.deny_errno;
  }
  out << YAML::EndMap;
}

void EmitMonitor(YAML::Emitter& out, const MonitorRules& monitor) {
  out << YAML::Key << "monitor" << YAML::Value;
  if (!monitor.files && !monitor.audit_log && !monitor.audit_log_max_size &&
      !monitor.audit_log_files && !monitor.osv_endpoint) {
    out << YAML::Flow;
  }
  out << YAML::BeginMap;
  if (monitor.files) {
    out << YAML::Key << "files" << YAML::Value << std::string(ToString(*monitor.files));
  }
  if (monitor.audit_log) {
    out << YAML::Key << "audit_log" << YAML::Value;
    EmitString(out, monitor.audit_log->path);
  }
  if (monitor.audit_log_max_size) {
    out << YAML::Key << "audit_log_max_size" << YAML::Value
        << FormatSize(*monitor.audit_log_max_size);
  }
  if (monitor.audit_log_files) {
    out << YAML::Key << "audit_log_files" << YAML::Value << *monitor.audit_log_files;
  }
  if (monitor.osv_endpoint) {
    out << YAML::Key << "osv_endpoint" << YAML::Value;
    EmitString(out, *monitor.osv_endpoint);
  }
  out << YAML::EndMap;
}

// Sorted and without repeats, so that a policy written twice reads the same.
void EmitSyscalls(YAML::Emitter& out, const std::vector<SyscallEntry>& allow) {
  std::vector<std::string> names;
  for (const SyscallEntry& entry : allow) names.push_back(entry.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  out << YAML::Key << "syscalls" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "allow" << YAML::Value << YAML::Flow;
  EmitList(out, names);
  out << YAML::EndMap;
}

// One secret as a flow mapping: its source, then only the keys it sets.
void EmitSecret(YAML::Emitter& out, const std::string& name, const SecretRule& rule) {
  out << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "from" << YAML::Value << std::string(ToString(rule.from));
  auto string_key = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    out << YAML::Key << key << YAML::Value;
    EmitString(out, value);
  };
  string_key("name", rule.env_name);
  string_key("path", rule.path.path);
  string_key("run", rule.run);
  string_key("json", rule.json);
  string_key("expires", rule.expires);
  if (rule.timeout_ms) {
    out << YAML::Key << "timeout" << YAML::Value << FormatDuration(*rule.timeout_ms / 1000);
  }
  if (rule.ttl_s) out << YAML::Key << "ttl" << YAML::Value << FormatDuration(*rule.ttl_s);
  if (rule.on_expiry) {
    out << YAML::Key << "on_expiry" << YAML::Value << std::string(ToString(*rule.on_expiry));
  }
  string_key("revoke", rule.revoke);
  if (rule.as != SecretDelivery::kEnv) {
    out << YAML::Key << "as" << YAML::Value << std::string(ToString(rule.as));
  }
  out << YAML::EndMap;
}

void EmitSecrets(YAML::Emitter& out, const std::map<std::string, SecretRule>& secrets) {
  out << YAML::Key << "secrets" << YAML::Value;
  if (secrets.empty()) out << YAML::Flow;
  out << YAML::BeginMap;
  for (const auto& [name, rule] : secrets) EmitSecret(out, name, rule);
  out << YAML::EndMap;
}

}  // namespace

std::string ToYaml(const Policy& policy) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "version" << YAML::Value << kPolicyVersion;
  if (policy.extends) {
    out << YAML::Key << "extends" << YAML::Value;
    EmitString(out, *policy.extends);
  }
  EmitFilesystem(out, policy.filesystem);
  EmitEnv(out, policy.env);
  EmitLimits(out, policy.limits);
  EmitNetwork(out, policy.network);
  EmitMonitor(out, policy.monitor);
  if (policy.backend) {
    out << YAML::Key << "backend" << YAML::Value << std::string(ToString(*policy.backend));
  }
  if (policy.install) {
    out << YAML::Key << "install" << YAML::Value << (*policy.install ? "auto" : "off");
  }
  if (policy.syscalls.allow) EmitSyscalls(out, *policy.syscalls.allow);
  EmitSecrets(out, policy.secrets);
  out << YAML::EndMap;

  std::string source = policy.source;
  std::replace(source.begin(), source.end(), '\n', ' ');
  return "# effective policy: " + source + "\n" + out.c_str() + "\n";
}

}  // namespace gander::policies
