// Variable and `~` expansion and lexical path normalisation; see expand.h.
#include "policies/expand.h"

#include <algorithm>
#include <set>
#include <vector>

#include "policies/parser.h"

namespace gander::policies {
namespace {

// One pass over `text`: with a context, substitutes; without one, only checks the syntax.
Result<std::string> Substitute(std::string_view text, const ExpansionContext* ctx) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (i + 1 >= text.size() || text[i + 1] != '{') {
      return MakeError("a lone '$' in '" + std::string(text) +
                       "' (write ${NAME} for a variable or $$ for a literal $)");
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return MakeError("unterminated '${' in '" + std::string(text) + "'");
    }
    std::string name(text.substr(i + 2, close - i - 2));
    if (!IsValidEnvName(name)) {
      return MakeError("invalid variable name '${" + name + "}' in '" + std::string(text) +
                       "' (expected [A-Za-z_][A-Za-z0-9_]*)");
    }
    if (ctx != nullptr) {
      std::string value;
      if (name == "WORKSPACE") {
        value = ctx->workspace;
      } else if (name == "HOME") {
        value = ctx->home;
      } else if (name == "DATA") {
        value = ctx->data;
      } else if (auto it = ctx->environ.find(name); it != ctx->environ.end()) {
        value = it->second;
      }
      if (value.empty()) {
        return MakeError("undefined variable ${" + name + "} in '" + std::string(text) + "'");
      }
      out += value;
    }
    i = close + 1;
  }
  return out;
}

Result<std::string> ExpandPath(const std::string& path, const ExpansionContext& ctx) {
  std::string_view rest = path;
  std::string prefix;
  if (rest.starts_with('~')) {
    if (rest.size() > 1 && rest[1] != '/') {
      return MakeError("'" + path + "': ~user paths are not supported (use ~/ or ${HOME})");
    }
    if (ctx.home.empty()) {
      return MakeError("'" + path + "' uses ~ but the home directory is unknown");
    }
    prefix = ctx.home;
    rest.remove_prefix(1);
  }
  Result<std::string> expanded = ExpandVariables(rest, ctx);
  if (!expanded) return expanded.error();
  std::string full = prefix + *expanded;
  if (!full.starts_with('/')) {
    return MakeError("'" + full + "' is not an absolute path" +
                     (full == path ? std::string() : " (expanded from '" + path + "')"));
  }
  return NormalizePath(full);
}

Result<std::vector<std::string>> ExpandPaths(const std::vector<PathEntry>& entries,
                                             const std::string& list_name,
                                             const ExpansionContext& ctx) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const PathEntry& entry : entries) {
    Result<std::string> path = ExpandPath(entry.path, ctx);
    if (!path) {
      return MakeError(FormatMark(entry.mark) + ": filesystem." + list_name + ": " +
                       path.error().message);
    }
    if (seen.insert(*path).second) out.push_back(std::move(*path));
  }
  return out;
}

// Secrets: file paths expanded; a secret's variable (or NAME_FILE, for file delivery) may not
// also come from env.pass or env.set, where one would silently replace the other.
Status ExpandSecrets(const Policy& merged, const ExpansionContext& ctx,
                     std::map<std::string, SecretRule>& out) {
  std::map<std::string, std::string> taken;  // variable -> what sets it
  for (const auto& name : merged.env.pass) taken[name] = "env.pass";
  for (const auto& [name, value] : merged.env.set) taken[name] = "env.set";
  for (const auto& [name, rule] : merged.secrets) {
    std::string where = FormatMark(rule.mark) + ": secrets." + name;
    std::string variable = rule.as == SecretDelivery::kFile ? name + "_FILE" : name;
    if (auto it = taken.find(variable); it != taken.end()) {
      return MakeError(where + ": the variable " + variable + " is also in " + it->second +
                       " (a variable comes from one place)");
    }
    taken[variable] = "secrets." + name;
    SecretRule expanded = rule;
    if (rule.from == SecretSource::kFile) {
      Result<std::string> path = ExpandPath(rule.path.path, ctx);
      if (!path) return MakeError(where + ".path: " + path.error().message);
      expanded.path.path = std::move(*path);
    }
    out[name] = std::move(expanded);
  }
  return {};
}

}  // namespace

Status CheckVariableSyntax(std::string_view text) {
  Result<std::string> checked = Substitute(text, nullptr);
  if (!checked) return checked.error();
  return {};
}

Result<std::string> ExpandVariables(std::string_view text, const ExpansionContext& ctx) {
  return Substitute(text, &ctx);
}

std::string NormalizePath(std::string_view absolute_path) {
  std::vector<std::string_view> parts;
  std::string_view rest = absolute_path;
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  if (parts.empty()) return "/";
  std::string out;
  for (std::string_view part : parts) {
    out += '/';
    out += part;
  }
  return out;
}

Result<ExpandedPolicy> Expand(const Policy& merged, const ExpansionContext& ctx) {
  if (merged.extends) {
    return MakeError(FormatMark(merged.extends_mark) + ": policy still extends '" +
                     *merged.extends + "'; resolve extends before expanding");
  }
  ExpandedPolicy out;
  const FilesystemRules& fs = merged.filesystem;
  struct List {
    const std::vector<PathEntry>& in;
    const char* name;
    std::vector<std::string>& out;
  };
  for (const List& list :
       {List{fs.read, "read", out.read}, List{fs.exec, "exec", out.exec},
        List{fs.write, "write", out.write}, List{fs.private_, "private", out.private_},
        List{fs.deny, "deny", out.deny}}) {
    Result<std::vector<std::string>> paths = ExpandPaths(list.in, list.name, ctx);
    if (!paths) return paths.error();
    list.out = std::move(*paths);
  }
  for (const auto& [name, value] : merged.env.set) {
    Result<std::string> expanded = ExpandVariables(value, ctx);
    if (!expanded) {
      auto mark = merged.env.set_marks.find(name);
      SourceMark where =
          mark != merged.env.set_marks.end() ? mark->second : SourceMark{merged.source, 0, 0};
      return MakeError(FormatMark(where) + ": env.set." + name + ": " + expanded.error().message);
    }
    out.env_set[name] = std::move(*expanded);
  }
  out.env_pass = merged.env.pass;
  if (Status secrets = ExpandSecrets(merged, ctx, out.secrets); !secrets) return secrets.error();
  out.limits = merged.limits;
  out.network = merged.network;
  const MonitorRules& monitor = merged.monitor;
  out.files = monitor.files.value_or(kDefaultFilesMonitoring);
  out.backend = merged.backend.value_or(Backend::kNative);
  if (merged.syscalls.allow) {
    std::vector<std::string> names;
    for (const SyscallEntry& entry : *merged.syscalls.allow) names.push_back(entry.name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    out.syscalls_allow = std::move(names);
  }
  if (monitor.audit_log) {
    Result<std::string> path = ExpandPath(monitor.audit_log->path, ctx);
    if (!path) {
      return MakeError(FormatMark(monitor.audit_log->mark) +
                       ": monitor.audit_log: " + path.error().message);
    }
    out.audit_log = std::move(*path);
  }
  out.audit_log_max_size = monitor.audit_log_max_size.value_or(kDefaultAuditLogMaxSize);
  if (monitor.audit_log_files) {
    if (*monitor.audit_log_files == 0 ||
        *monitor.audit_log_files > static_cast<uint64_t>(kMaxAuditLogFiles)) {
      return MakeError(merged.source + ": monitor.audit_log_files: expected 1 to " +
                       std::to_string(kMaxAuditLogFiles) + ", got " +
                       std::to_string(*monitor.audit_log_files));
    }
    out.audit_log_files = static_cast<int>(*monitor.audit_log_files);
  }
  out.sources = merged.chain.empty() ? std::vector<std::string>{merged.source} : merged.chain;
  return out;
}

}  // namespace gander::policies
