// Parsing policy YAML; see parser.h. yaml-cpp exceptions stop here: every one is caught and
// becomes an Error with the file, line and column. This file knows the policy's keys; reading
// nodes with positions is yaml_reader.cc, writing a policy back is yaml_writer.cc.
#include "policies/parser.h"

#include <seccomp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <utility>
#include <vector>

#include "common/enum_names.h"
#include "policies/expand.h"
#include "policies/network_host.h"
#include "policies/network_matcher.h"
#include "policies/units.h"
#include "policies/yaml_reader.h"

namespace gander::policies {
namespace {

constexpr KeySpec kPolicyKeys[] = {
    {"version", "1"},
    {"extends", "a profile name or a path to a .yaml file"},
    {"filesystem", "a mapping with keys: read, exec, write, private, deny"},
    {"env", "a mapping with keys: pass, set"},
    {"limits",
     "a mapping with keys: processes, open_files, file_size, memory, tmpfs_size, tmpfs_inodes, "
     "core_dumps"},
    {"network", "a mapping with keys: allow, deny, deny_errno"},
    {"monitor",
     "a mapping with keys: files, audit_log, audit_log_max_size, audit_log_files, osv_endpoint"},
    {"secrets", "a mapping of variable names to entries like {from: env}"},
    {"backend", "one of: native, gvisor"},
    {"install", "one of: auto, off"},
    {"syscalls", "a mapping with keys: allow"},
};
constexpr KeySpec kSyscallsKeys[] = {
    {"allow", "a list of syscall names"},
};
constexpr KeySpec kFilesystemKeys[] = {
    {"read", "a list of path strings"},  {"exec", "a list of path strings"},
    {"write", "a list of path strings"}, {"private", "a list of path strings"},
    {"deny", "a list of path strings"},
};
constexpr KeySpec kEnvKeys[] = {
    {"pass", "a list of variable names"},
    {"set", "a mapping of variable names to strings"},
};
constexpr KeySpec kLimitsKeys[] = {
    {"processes", "a positive integer"},
    {"open_files", "a positive integer"},
    {"file_size", "a positive size (bytes, or a number with a unit: 64MiB, 1GiB)"},
    {"memory", "a positive size (bytes, or a number with a unit: 64MiB, 1GiB)"},
    {"tmpfs_size", "a positive size (bytes, or a number with a unit: 64MiB, 1GiB)"},
    {"tmpfs_inodes", "a positive integer"},
    {"core_dumps", "true or false"},
};
constexpr KeySpec kNetworkKeys[] = {
    {"allow", "a list of rules like {host: example.com, ports: [443]}"},
    {"deny", "a list of rules like {host: example.com, ports: [443]}"},
    {"deny_errno", kDenyErrnoNames},
};
constexpr KeySpec kMonitorKeys[] = {
    {"files", "one of: off, opens, all"},
    {"audit_log", "a path string (/..., ~/... or ${VAR}/...)"},
    {"audit_log_max_size", "a positive size (bytes, or a number with a unit: 64MiB, 1GiB)"},
    {"audit_log_files", "a positive integer"},
    {"osv_endpoint", "an http:// or https:// URL, or off"},
};
constexpr KeySpec kSecretKeys[] = {
    {"from", "one of: env, file, command"},
    {"name", "a variable name in gander's environment"},
    {"path", "a path string (/..., ~/... or ${VAR}/...)"},
    {"run", "a shell command (run on the host with /bin/sh -c)"},
    {"json", "a dotted path into the command's JSON output (Credentials.SessionToken)"},
    {"expires", "a dotted path into the command's JSON output (Credentials.Expiration)"},
    {"timeout", "a positive duration (30s, 2m)"},
    {"ttl", "a positive duration (30s, 5m, 8h, 1h30m)"},
    {"on_expiry", "one of: refresh, kill, warn"},
    {"revoke", "a shell command (run on the host at exit, the value on its stdin)"},
    {"as", "one of: env, file"},
};
constexpr KeySpec kRuleKeys[] = {
    {"host", "a DNS name, *.suffix, IP address or CIDR block"},
    {"ports", "a non-empty list of port numbers (1-65535)"},
    {"protocol", "one of: tcp, udp"},
};

constexpr EnumName<FilesMonitoring> kFilesMonitoringNames[] = {
    {FilesMonitoring::kOff, "off"},
    {FilesMonitoring::kOpens, "opens"},
    {FilesMonitoring::kAll, "all"},
};
constexpr EnumName<Backend> kBackendNames[] = {{Backend::kNative, "native"},
                                               {Backend::kGvisor, "gvisor"}};
constexpr EnumName<SecretSource> kSecretSources[] = {{SecretSource::kEnv, "env"},
                                                     {SecretSource::kFile, "file"},
                                                     {SecretSource::kCommand, "command"}};
constexpr EnumName<ExpiryAction> kExpiryActions[] = {{ExpiryAction::kRefresh, "refresh"},
                                                     {ExpiryAction::kKill, "kill"},
                                                     {ExpiryAction::kWarn, "warn"}};
constexpr EnumName<SecretDelivery> kSecretDeliveries[] = {{SecretDelivery::kEnv, "env"},
                                                          {SecretDelivery::kFile, "file"}};

// The value named `text`, or "'text': unknown WHAT (expected one of: a, b, c)".
template <typename T, size_t N>
Result<T> ParseWord(const EnumName<T> (&words)[N], std::string_view text, std::string_view what) {
  if (std::optional<T> value = ValueOf(words, text)) return *value;
  std::string names;
  for (const EnumName<T>& word : words)
    names += (names.empty() ? "" : ", ") + std::string(word.name);
  return MakeError("'" + std::string(text) + "': unknown " + std::string(what) +
                   " (expected one of: " + names + ")");
}

constexpr std::string_view kEnvNameSyntax = "[A-Za-z_][A-Za-z0-9_]*";

// Paths must be able to become absolute: "/...", "~", "~/..." or "${VAR}...".
Status CheckPathSyntax(const std::string& path) {
  if (path.empty()) return MakeError("empty path");
  if (path.find('\0') != std::string::npos) return MakeError("path contains a NUL character");
  if (path.starts_with('~')) {
    if (path.size() > 1 && path[1] != '/') {
      return MakeError(Quote(path) + ": ~user paths are not supported (use ~/ or ${HOME})");
    }
  } else if (!path.starts_with('/') && !path.starts_with("${")) {
    return MakeError(Quote(path) + " is not absolute (expected /..., ~/... or ${VAR}/...)");
  }
  return CheckVariableSyntax(path);
}

class Parser : public YamlReader {
 public:
  explicit Parser(std::string file) : YamlReader(std::move(file)) {}

  Result<Policy> Parse(const YAML::Node& root) const;

 private:
  Result<std::vector<PathEntry>> Paths(const YAML::Node& node, const std::string& where) const;
  Status Filesystem(const YAML::Node& node, FilesystemRules& out) const;
  Status Env(const YAML::Node& node, EnvRules& out) const;
  Status LimitsSection(const YAML::Node& node, Limits& out) const;
  Status Network(const YAML::Node& node, NetworkRules& out) const;
  Status Monitor(const YAML::Node& node, MonitorRules& out) const;
  Status Secrets(const YAML::Node& node, std::map<std::string, SecretRule>& out) const;
  Status Syscalls(const YAML::Node& node, SyscallRules& out) const;
  Result<SecretRule> Secret(const YAML::Node& node, const std::string& where) const;
  Result<NetworkRule> Rule(const YAML::Node& node, const std::string& where,
                           bool ports_required) const;
};

Result<Policy> Parser::Parse(const YAML::Node& root) const {
  Policy policy;
  policy.source = file_;
  policy.chain = {file_};
  bool has_version = false;
  if (!root.IsMap()) {
    return Fail(root, "expected a mapping of policy keys (" + JoinNames(kPolicyKeys) + ")");
  }
  Status status = ForEachEntry(
      root, "policy", kPolicyKeys,
      [&](const KeySpec& spec, const std::string& where, const YAML::Node& value) -> Status {
        if (spec.name == "version") {
          if (!IsPlainScalar(value) || value.Scalar() != std::to_string(kPolicyVersion)) {
            return Fail(value, "version: unsupported policy version " +
                                   Quote(value.IsScalar() ? value.Scalar() : "?") + " (expected " +
                                   std::to_string(kPolicyVersion) + ")");
          }
          has_version = true;
          return {};
        }
        if (spec.name == "extends") {
          Result<std::string> ref = String(value, where, spec.expected);
          if (!ref) return ref.error();
          bool is_path = ref->find('/') != std::string::npos || ref->ends_with(".yaml");
          if (!is_path && !IsValidProfileName(*ref)) {
            return Fail(value, "extends: " + Quote(*ref) +
                                   " is neither a profile name ([A-Za-z0-9_-]+) nor a path "
                                   "(containing '/' or ending in .yaml)");
          }
          policy.extends = std::move(*ref);
          policy.extends_mark = MarkOf(value);
          return {};
        }
        if (spec.name == "filesystem") return Filesystem(value, policy.filesystem);
        if (spec.name == "env") return Env(value, policy.env);
        if (spec.name == "limits") return LimitsSection(value, policy.limits);
        if (spec.name == "monitor") return Monitor(value, policy.monitor);
        if (spec.name == "secrets") return Secrets(value, policy.secrets);
        if (spec.name == "syscalls") return Syscalls(value, policy.syscalls);
        if (spec.name == "backend") {
          Result<std::string> word = String(value, where, spec.expected);
          if (!word) return word.error();
          Result<Backend> backend = ParseBackend(*word);
          if (!backend) return Fail(value, where + ": " + backend.error().message);
          policy.backend = *backend;
          policy.backend_mark = MarkOf(value);
          return {};
        }
        if (spec.name == "install") {
          Result<std::string> word = String(value, where, spec.expected);
          if (!word) return word.error();
          if (*word != "auto" && *word != "off") {
            return Fail(value,
                        where + ": " + Quote(*word) + ": expected " + std::string(spec.expected));
          }
          policy.install = *word == "auto";
          return {};
        }
        return Network(value, policy.network);
      });
  if (!status) return status.error();
  if (!has_version) {
    return Fail(root, "missing required key 'version' in policy (expected 'version: " +
                          std::to_string(kPolicyVersion) + "')");
  }
  return policy;
}

Result<std::vector<PathEntry>> Parser::Paths(const YAML::Node& node,
                                             const std::string& where) const {
  if (!node.IsSequence()) return Fail(node, where + ": expected a list of path strings");
  std::vector<PathEntry> out;
  for (const YAML::Node& item : node) {
    std::string item_where = where + "[" + std::to_string(out.size()) + "]";
    if (item.IsNull()) {
      return Fail(item, item_where +
                            ": expected a path string (a bare ~ is YAML null; "
                            "write \"~\" or ~/...)");
    }
    Result<std::string> path = String(item, item_where, "a path string");
    if (!path) return path.error();
    if (Status status = CheckPathSyntax(*path); !status) {
      return Fail(item, item_where + ": " + status.error().message);
    }
    out.push_back(PathEntry{std::move(*path), MarkOf(item)});
  }
  return out;
}

Status Parser::Filesystem(const YAML::Node& node, FilesystemRules& out) const {
  return ForEachEntry(
      node, "filesystem", kFilesystemKeys,
      [&](const KeySpec& spec, const std::string& where, const YAML::Node& value) -> Status {
        Result<std::vector<PathEntry>> paths = Paths(value, where);
        if (!paths) return paths.error();
        std::vector<PathEntry>* list = spec.name == "read"    ? &out.read
                                       : spec.name == "exec"  ? &out.exec
                                       : spec.name == "write" ? &out.write
                                       : spec.name == "deny"  ? &out.deny
                                                              : &out.private_;
        *list = std::move(*paths);
        return {};
      });
}

Status Parser::Env(const YAML::Node& node, EnvRules& out) const {
  const std::string bad_name =
      " is not a valid variable name (expected " + std::string(kEnvNameSyntax) + ")";
  return ForEachEntry(
      node, "env", kEnvKeys,
      [&](const KeySpec& spec, const std::string& where, const YAML::Node& value) -> Status {
        if (spec.name == "pass") {
          if (!value.IsSequence()) {
            return Fail(value, where + ": expected " + std::string(spec.expected));
          }
          for (const YAML::Node& item : value) {
            std::string item_where = where + "[" + std::to_string(out.pass.size()) + "]";
            Result<std::string> name = String(item, item_where, "a variable name");
            if (!name) return name.error();
            if (!IsValidEnvName(*name)) {
              return Fail(item, item_where + ": " + Quote(*name) + bad_name);
            }
            out.pass.push_back(std::move(*name));
          }
          return {};
        }
        if (!value.IsMap()) return Fail(value, where + ": expected " + std::string(spec.expected));
        std::set<std::string> seen;
        for (auto it = value.begin(); it != value.end(); ++it) {
          Result<std::string> name = KeyName(it->first, where, seen);
          if (!name) return name.error();
          if (!IsValidEnvName(*name)) {
            return Fail(it->first, where + ": " + Quote(*name) + bad_name);
          }
          std::string value_where = where + "." + *name;
          const std::string expected = "a string (write \"\" for an empty value)";
          if (it->second.IsNull()) return Fail(it->first, value_where + ": expected " + expected);
          Result<std::string> text = String(it->second, value_where, expected);
          if (!text) return text.error();
          if (Status status = CheckVariableSyntax(*text); !status) {
            return Fail(it->second, value_where + ": " + status.error().message);
          }
          out.set[*name] = std::move(*text);
          out.set_marks[*name] = MarkOf(it->second);
        }
        return {};
      });
}

Status Parser::LimitsSection(const YAML::Node& node, Limits& out) const {
  return ForEachEntry(
      node, "limits", kLimitsKeys,
      [&](const KeySpec& spec, const std::string& where, const YAML::Node& value) -> Status {
        if (spec.name == "core_dumps") {
          if (!IsPlainScalar(value) || (value.Scalar() != "true" && value.Scalar() != "false")) {
            return Fail(value, where + ": expected true or false");
          }
          out.core_dumps = value.Scalar() == "true";
          return {};
        }
        bool is_size =
            spec.name == "file_size" || spec.name == "memory" || spec.name == "tmpfs_size";
        Result<uint64_t> number =
            is_size ? PositiveSize(value, where, spec.expected) : PositiveInteger(value, where);
        if (!number) return number.error();
        (spec.name == "processes"      ? out.processes
         : spec.name == "open_files"   ? out.open_files
         : spec.name == "file_size"    ? out.file_size
         : spec.name == "tmpfs_size"   ? out.tmpfs_size
         : spec.name == "tmpfs_inodes" ? out.tmpfs_inodes
                                       : out.memory) = *number;
        return {};
      });
}

Status Parser::Network(const YAML::Node& node, NetworkRules& out) const {
  return ForEachEntry(
      node, "network", kNetworkKeys,
      [&](const KeySpec& spec, const std::string& where, const YAML::Node& value) -> Status {
        if (spec.name == "deny_errno") {
          Result<std::string> name = String(value, where, spec.expected);
          if (!name) return name.error();
          if (!DenyErrnoValue(*name)) {
            return Fail(value, where + ": expected " + std::string(spec.expected) + ", got '" +
                                   *name + "'");
          }
          out.deny_errno = *name;
          return {};
        }
        if (!value.IsSequence()) {
          return Fail(value, where + ": expected " + std::string(spec.expected));
        }
        std::vector<NetworkRule>& rules = spec.name == "allow" ? out.allow : out.deny;
        for (const YAML::Node& item : value) {
          Result<NetworkRule> rule =
              Rule(item, where + "[" + std::to_string(rules.size()) + "]", spec.name == "allow");
          if (!rule) return rule.error();
          rules.push_back(std::move(*rule));
        }
        return {};
      });
}

Status Parser::Monitor(const YAML::Node& node, MonitorRules& out) const {
  return ForEachEntry(
      node, "monitor", kMonitorKeys,
      [&](const KeySpec& spec, const std::string& where, const YAML::Node& value) -> Status {
        if (spec.name == "files") {
          Result<std::string> word = String(value, where, spec.expected);
          if (!word) return word.error();
          Result<FilesMonitoring> mode = ParseFilesMonitoring(*word);
          if (!mode) return Fail(value, where + ": " + mode.error().message);
          out.files = *mode;
          return {};
        }
        if (spec.name == "audit_log") {
          Result<std::string> path = String(value, where, spec.expected);
          if (!path) return path.error();
          if (Status status = CheckPathSyntax(*path); !status) {
            return Fail(value, where + ": " + status.error().message);
          }
          out.audit_log = PathEntry{std::move(*path), MarkOf(value)};
          return {};
        }
        if (spec.name == "osv_endpoint") {
          Result<std::string> url = String(value, where, spec.expected);
          if (!url) return url.error();
          if (*url != "off" && !url->starts_with("http://") && !url->starts_with("https://")) {
            return Fail(
                value, where + ": expected " + std::string(spec.expected) + ", got " + Quote(*url));
          }
          out.osv_endpoint = std::move(*url);
          return {};
        }
        if (spec.name == "audit_log_max_size") {
          Result<uint64_t> size = PositiveSize(value, where, spec.expected);
          if (!size) return size.error();
          out.audit_log_max_size = *size;
          return {};
        }
        Result<uint64_t> files = PositiveInteger(value, where);
        if (!files) return files.error();
        if (*files > static_cast<uint64_t>(kMaxAuditLogFiles)) {
          return Fail(value, where + ": at most " + std::to_string(kMaxAuditLogFiles) +
                                 " rotated files are kept, got " + Quote(value.Scalar()));
        }
        out.audit_log_files = *files;
        return {};
      });
}

Status Parser::Syscalls(const YAML::Node& node, SyscallRules& out) const {
  return ForEachEntry(
      node, "syscalls", kSyscallsKeys,
      [&](const KeySpec& spec, const std::string& where, const YAML::Node& value) -> Status {
        if (!value.IsSequence()) {
          return Fail(value, where + ": expected " + std::string(spec.expected));
        }
        std::vector<SyscallEntry> names;
        for (const YAML::Node& item : value) {
          std::string item_where = where + "[" + std::to_string(names.size()) + "]";
          Result<std::string> name = String(item, item_where, "a syscall name");
          if (!name) return name.error();
          if (!IsSyscallName(*name)) {
            return Fail(item, item_where + ": unknown syscall " + Quote(*name) +
                                  " (not a syscall name on this architecture)");
          }
          names.push_back(SyscallEntry{std::move(*name), MarkOf(item)});
        }
        out.allow = std::move(names);
        out.allow_mark = MarkOf(value);
        return {};
      });
}

Status Parser::Secrets(const YAML::Node& node, std::map<std::string, SecretRule>& out) const {
  if (!node.IsMap()) {
    return Fail(node, "secrets: expected a mapping of variable names to entries like {from: env}");
  }
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    Result<std::string> name = KeyName(it->first, "secrets", seen);
    if (!name) return name.error();
    if (!IsValidEnvName(*name)) {
      return Fail(it->first, "secrets: " + Quote(*name) +
                                 " is not a valid variable name (expected " +
                                 std::string(kEnvNameSyntax) + ")");
    }
    std::string where = "secrets." + *name;
    if (it->second.IsNull()) {
      return Fail(it->first, where + ": expected a mapping like {from: env}");
    }
    Result<SecretRule> rule = Secret(it->second, where);
    if (!rule) return rule.error();
    rule->mark = MarkOf(it->first);
    out[*name] = std::move(*rule);
  }
  return {};
}

// One secret: its source and the keys that go with it, its lifetime, its delivery. Keys that
// belong to another source are errors, so a typo never silently does nothing.
Result<SecretRule> Parser::Secret(const YAML::Node& node, const std::string& where) const {
  SecretRule rule;
  std::map<std::string, YAML::Node> given;  // key -> value node, for errors after the loop
  Status status = ForEachEntry(
      node, where, kSecretKeys,
      [&](const KeySpec& spec, const std::string& key_where, const YAML::Node& value) -> Status {
        given[std::string(spec.name)] = value;
        if (spec.name == "timeout" || spec.name == "ttl") {
          Result<uint64_t> seconds = PositiveDuration(value, key_where);
          if (!seconds) return seconds.error();
          if (spec.name == "ttl") {
            rule.ttl_s = *seconds;
          } else {
            rule.timeout_ms = *seconds * 1000;
          }
          return {};
        }
        Result<std::string> text = String(value, key_where, spec.expected);
        if (!text) return text.error();
        auto word_error = [&](const Error& e) { return Fail(value, key_where + ": " + e.message); };
        if (spec.name == "from") {
          Result<SecretSource> from = ParseWord(kSecretSources, *text, "secret source");
          if (!from) return word_error(from.error());
          rule.from = *from;
        } else if (spec.name == "on_expiry") {
          Result<ExpiryAction> action = ParseWord(kExpiryActions, *text, "expiry action");
          if (!action) return word_error(action.error());
          rule.on_expiry = *action;
        } else if (spec.name == "as") {
          Result<SecretDelivery> as = ParseWord(kSecretDeliveries, *text, "delivery");
          if (!as) return word_error(as.error());
          rule.as = *as;
        } else if (spec.name == "name") {
          if (!IsValidEnvName(*text)) {
            return Fail(value, key_where + ": " + Quote(*text) +
                                   " is not a valid variable name (expected " +
                                   std::string(kEnvNameSyntax) + ")");
          }
          rule.env_name = std::move(*text);
        } else if (spec.name == "path") {
          if (Status path = CheckPathSyntax(*text); !path) {
            return Fail(value, key_where + ": " + path.error().message);
          }
          rule.path = PathEntry{std::move(*text), MarkOf(value)};
        } else if (spec.name == "json" || spec.name == "expires") {
          bool bad = text->empty() || text->front() == '.' || text->back() == '.' ||
                     text->find("..") != std::string::npos;
          if (bad) {
            return Fail(value, key_where + ": " + Quote(*text) +
                                   " is not a dotted field path (expected e.g. "
                                   "Credentials.SessionToken)");
          }
          (spec.name == "json" ? rule.json : rule.expires) = std::move(*text);
        } else {
          if (text->find_first_not_of(" \t\n") == std::string::npos) {
            return Fail(value, key_where + ": expected " + std::string(spec.expected) +
                                   ", got an empty command");
          }
          (spec.name == "run" ? rule.run : rule.revoke) = std::move(*text);
        }
        return {};
      });
  if (!status) return status.error();
  if (!given.contains("from")) {
    return Fail(node,
                where + ": missing required key 'from' (expected one of: env, file, command)");
  }
  const std::string source(NameOf(kSecretSources, rule.from));
  // Which source each source-specific key belongs to.
  const std::pair<const char*, SecretSource> owners[] = {{"name", SecretSource::kEnv},
                                                         {"path", SecretSource::kFile},
                                                         {"run", SecretSource::kCommand},
                                                         {"json", SecretSource::kCommand},
                                                         {"expires", SecretSource::kCommand}};
  for (const auto& [key, owner] : owners) {
    auto it = given.find(key);
    if (it != given.end() && owner != rule.from) {
      return Fail(it->second, where + "." + key +
                                  ": only for from: " + std::string(NameOf(kSecretSources, owner)) +
                                  " (this secret is from: " + source + ")");
    }
  }
  if (rule.from == SecretSource::kCommand && rule.run.empty()) {
    return Fail(node, where + ": from: command needs 'run' (the command to run on the host)");
  }
  if (rule.from == SecretSource::kFile && rule.path.path.empty()) {
    return Fail(node, where + ": from: file needs 'path' (the file to read on the host)");
  }
  if (given.contains("timeout") && rule.from != SecretSource::kCommand && rule.revoke.empty()) {
    return Fail(given["timeout"], where + ".timeout: only for from: command or with revoke");
  }
  if (rule.on_expiry && !rule.ttl_s && rule.expires.empty()) {
    return Fail(given["on_expiry"], where + ".on_expiry: needs a lifetime: ttl" +
                                        (rule.from == SecretSource::kCommand ? " or expires" : ""));
  }
  if (rule.on_expiry == ExpiryAction::kRefresh && rule.from == SecretSource::kEnv) {
    return Fail(given["on_expiry"], where +
                                        ".on_expiry: refresh needs a source that can give a new "
                                        "value (file or command); gander's environment does not "
                                        "change");
  }
  return rule;
}

// One {host, ports} rule. Allow rules must name their ports; a deny rule without ports denies
// every port of the host.
Result<NetworkRule> Parser::Rule(const YAML::Node& node, const std::string& where,
                                 bool ports_required) const {
  NetworkRule rule;
  rule.mark = MarkOf(node);
  bool has_host = false;
  bool has_ports = false;
  Status status = ForEachEntry(
      node, where, kRuleKeys,
      [&](const KeySpec& spec, const std::string& key_where, const YAML::Node& value) -> Status {
        if (spec.name == "host") {
          Result<std::string> host = String(value, key_where, spec.expected);
          if (!host) return host.error();
          if (Result<HostKind> kind = ClassifyHost(*host); !kind) {
            return Fail(value, key_where + ": " + kind.error().message);
          }
          rule.host = std::move(*host);
          has_host = true;
          return {};
        }
        if (spec.name == "protocol") {
          std::optional<Protocol> protocol;
          if (IsPlainScalar(value)) protocol = ProtocolValue(value.Scalar());
          if (!protocol) {
            return Fail(value, key_where + ": expected " + std::string(spec.expected) +
                                   (value.IsScalar() ? ", got " + Quote(value.Scalar()) : ""));
          }
          rule.protocol = protocol;
          return {};
        }
        if (!value.IsSequence() || value.size() == 0) {
          return Fail(value, key_where + ": expected " + std::string(spec.expected));
        }
        for (const YAML::Node& item : value) {
          std::optional<uint64_t> port;
          if (IsPlainScalar(item)) port = ParseUnsigned(item.Scalar());
          if (!port || *port == 0 || *port > std::numeric_limits<uint16_t>::max()) {
            return Fail(item, key_where + "[" + std::to_string(rule.ports.size()) +
                                  "]: expected a port number (1-65535)" +
                                  (item.IsScalar() ? ", got " + Quote(item.Scalar()) : ""));
          }
          rule.ports.push_back(static_cast<uint16_t>(*port));
        }
        has_ports = true;
        return {};
      });
  if (!status) return status.error();
  if (!has_host) return Fail(node, where + ": missing required key 'host'");
  if (ports_required && !has_ports) {
    return Fail(node, where + ": missing required key 'ports' (allow rules list their ports)");
  }
  return rule;
}

}  // namespace

Result<Policy> ParsePolicy(std::string_view yaml_text, const std::string& source_name) {
  try {
    const std::string text(yaml_text);
    // One pass when it suffices: without a document marker ("---" or "..." at a line's start)
    // a text holds at most one document, and a block mapping there (which runs to the end of the
    // text: no trailing token can end it) is a policy to check. Anything
    // else takes the second pass that counts documents (half of a start's user-space
    // instructions were yaml-cpp scanning the default profile twice, issue 20).
    YAML::Node root = YAML::Load(text);
    if (root.IsMap() && root.Style() == YAML::EmitterStyle::Block &&
        !HasDocumentMarker(yaml_text)) {
      return Parser(source_name).Parse(root);
    }
    Result<int> documents = CountDocuments(text, source_name);
    if (!documents) return documents.error();
    if (*documents == 0 || root.IsNull()) {
      return MakeError(source_name + ":1:1: empty policy (expected a mapping starting with " +
                       "'version: " + std::to_string(kPolicyVersion) + "')");
    }
    return Parser(source_name).Parse(root);
  } catch (const YAML::Exception& e) {
    return MakeError(FormatMark(ToSourceMark(e.mark, source_name)) +
                     ": YAML syntax error: " + e.msg);
  } catch (const std::exception& e) {
    return MakeError(source_name + ": cannot parse policy: " + e.what());
  }
}

std::string_view ToString(SecretSource source) { return NameOf(kSecretSources, source); }
std::string_view ToString(ExpiryAction action) { return NameOf(kExpiryActions, action); }
std::string_view ToString(SecretDelivery delivery) { return NameOf(kSecretDeliveries, delivery); }
std::string_view ToString(FilesMonitoring mode) { return NameOf(kFilesMonitoringNames, mode); }
std::string_view ToString(Backend backend) { return NameOf(kBackendNames, backend); }

Result<FilesMonitoring> ParseFilesMonitoring(std::string_view text) {
  return ParseWord(kFilesMonitoringNames, text, "files monitoring mode");
}

Result<Backend> ParseBackend(std::string_view text) {
  return ParseWord(kBackendNames, text, "backend");
}

bool IsSyscallName(const std::string& name) {
  // Names only: libseccomp also accepts a number, which is not a name.
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  return seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, name.c_str()) >= 0;
}

bool IsValidEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return (c < 0x80 && std::isalnum(c) != 0) || c == '_';
  });
}

bool IsValidProfileName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return (c < 0x80 && std::isalnum(c) != 0) || c == '_' || c == '-';
  });
}

std::string FormatMark(const SourceMark& mark) {
  if (mark.line <= 0) return mark.file;
  return mark.file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column);
}

}  // namespace gander::policies
