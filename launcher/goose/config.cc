#include "launcher/goose/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "common/path.h"
#include "launcher/goose/envs.h"

namespace gander::launcher::goose {
namespace {

// Where a scalar is written: byte offsets [begin, end) of its source text on one line.
struct Span {
  size_t begin = 0, end = 0;
};

// One splice of the text.
struct Edit {
  size_t offset = 0, length = 0;
  std::string text;
};

class Source {
 public:
  explicit Source(const std::string& text) : text_(text) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }
  const std::string& text() const { return text_; }

  Result<size_t> Offset(const YAML::Mark& mark) const {
    if (mark.line < 0 || static_cast<size_t>(mark.line) >= line_starts_.size()) {
      return MakeError("position out of range");
    }
    size_t offset = line_starts_[mark.line] + mark.column;
    if (offset > text_.size()) return MakeError("position out of range");
    return offset;
  }
  size_t LineStart(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return *(it - 1);
  }
  // The offset just past the line holding `offset` (its newline included).
  size_t NextLineStart(size_t offset) const {
    size_t nl = text_.find('\n', offset);
    return nl == std::string::npos ? text_.size() : nl + 1;
  }
  std::string Eol(size_t offset) const {
    size_t nl = text_.find('\n', offset);
    if (nl == std::string::npos) return "\n";
    return nl > 0 && text_[nl - 1] == '\r' ? "\r\n" : "\n";
  }

  // The source text of the single-line scalar `node`; `flow` inside a flow collection.
  Result<Span> ScalarSpan(const YAML::Node& node, bool flow) const {
    auto begin = Offset(node.Mark());
    if (!begin) return begin.error();
    size_t i = *begin, n = text_.size();
    if (i >= n) return MakeError("scalar past the end");
    char c = text_[i];
    if (c == '"') {
      for (++i; i < n && text_[i] != '\n'; ++i) {
        if (text_[i] == '\\') {
          ++i;
        } else if (text_[i] == '"') {
          return Span{*begin, i + 1};
        }
      }
      return MakeError("a double-quoted string over several lines is not supported");
    }
    if (c == '\'') {
      for (++i; i < n && text_[i] != '\n'; ++i) {
        if (text_[i] == '\'') {
          if (i + 1 < n && text_[i + 1] == '\'') {
            ++i;
          } else {
            return Span{*begin, i + 1};
          }
        }
      }
      return MakeError("a single-quoted string over several lines is not supported");
    }
    if (c == '|' || c == '>') return MakeError("block scalars (| or >) are not supported");
    size_t end = i;
    for (; end < n && text_[end] != '\n'; ++end) {
      char d = text_[end];
      if (d == '#' && end > *begin && (text_[end - 1] == ' ' || text_[end - 1] == '\t')) break;
      if (flow && (d == ',' || d == ']' || d == '}')) break;
    }
    while (end > *begin &&
           (text_[end - 1] == ' ' || text_[end - 1] == '\t' || text_[end - 1] == '\r')) {
      --end;
    }
    // A plain scalar reads as its text; anything else (continued on the next line, or a mark
    // that does not point where we think) is refused rather than guessed at.
    if (text_.compare(*begin, end - *begin, node.Scalar()) != 0) {
      return MakeError("unsupported form of '" + node.Scalar() + "' (written over several lines?)");
    }
    return Span{*begin, end};
  }
  std::string Text(Span span) const { return text_.substr(span.begin, span.end - span.begin); }

 private:
  const std::string& text_;
  std::vector<size_t> line_starts_;
};

std::string Apply(std::string text, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.offset > b.offset; });
  for (const Edit& e : edits) text.replace(e.offset, e.length, e.text);
  return text;
}

bool IsValidName(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// `s` as a YAML scalar: plain when that reads back as the same string, else double-quoted.
std::string YamlScalar(const std::string& s) {
  static const std::set<std::string> kSpecial = {"true", "false", "yes", "no", "on",
                                                 "off",  "null",  "y",   "n",  "~"};
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool plain = !s.empty() && !kSpecial.contains(lower) &&
               !std::isdigit(static_cast<unsigned char>(s[0])) &&
               (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '/' || s[0] == '_' ||
                s[0] == '.' || (s[0] == '-' && s.size() > 1 && s[1] != ' ' && s != "---"));
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string_view("_./@+=-").find(c) != std::string_view::npos)) {
      plain = false;
    }
  }
  if (plain) return s;
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Raw source text of a plain cmd is reused in a flow sequence only when it stays one item.
std::string ForFlow(const std::string& raw, const std::string& value) {
  if (raw.empty() || raw[0] == '"' || raw[0] == '\'') return raw;
  if (raw.find_first_of(",[]{}") == std::string::npos) return raw;
  return YamlScalar(value);
}

std::string Scalar(const YAML::Node& map, const char* key) {
  YAML::Node v = map[key];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

// The items of a `gander run ... -- CMD ARGS` argument list: where `--` is, and the options.
struct WrappedArgs {
  size_t separator = 0;  // index of `--`
  std::string name, profile, policy;
};

std::optional<WrappedArgs> ParseWrapped(const std::string& cmd, const YAML::Node& args) {
  if (Basename(cmd) != "gander" || !args || !args.IsSequence() || args.size() < 3) {
    return std::nullopt;
  }
  std::vector<std::string> items;
  for (const auto& item : args) {
    if (!item.IsScalar()) return std::nullopt;
    items.push_back(item.Scalar());
  }
  if (items[0] != "run") return std::nullopt;
  WrappedArgs w;
  for (size_t i = 1; i < items.size(); ++i) {
    if (items[i] == "--") {
      if (i + 1 >= items.size()) return std::nullopt;
      w.separator = i;
      return w;
    }
    auto value = [&](std::string& out) {
      if (i + 1 < items.size()) out = items[++i];
    };
    if (items[i] == "--name") value(w.name);
    if (items[i] == "--profile") value(w.profile);
    if (items[i] == "--policy") value(w.policy);
  }
  return std::nullopt;
}

// env_keys are Goose's secrets (keyring, secrets.yaml); an `envs` entry is one only when its
// name or value says so, else it is a plain variable.
void ClassifyEnvs(const YAML::Node& entry, ExtensionEntry& e) {
  std::set<std::string> secrets, plain;
  YAML::Node envs = entry["envs"];
  if (envs && envs.IsMap()) {
    for (const auto& kv : envs) {
      if (!kv.first.IsScalar()) continue;
      std::string value = kv.second.IsScalar() ? kv.second.Scalar() : std::string();
      (IsSecretEnv(kv.first.Scalar(), value) ? secrets : plain).insert(kv.first.Scalar());
    }
  }
  YAML::Node keys = entry["env_keys"];
  if (keys && keys.IsSequence()) {
    for (const auto& k : keys) {
      if (k.IsScalar()) secrets.insert(k.Scalar());
    }
  }
  for (const std::string& name : secrets) plain.erase(name);
  e.secrets.assign(secrets.begin(), secrets.end());
  e.plain_envs.assign(plain.begin(), plain.end());
}

Result<YAML::Node> Parse(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return MakeError("line " + std::to_string(e.mark.line + 1) + ", column " +
                     std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

// Reads one entry; fills everything but what an operation decides.
ExtensionEntry Describe(const std::string& key, const YAML::Node& entry) {
  ExtensionEntry e;
  e.key = key;
  if (!entry.IsMap()) {
    e.note = "not a mapping";
    return e;
  }
  e.type = Scalar(entry, "type");
  YAML::Node enabled = entry["enabled"];
  if (enabled && enabled.IsScalar()) {
    bool value = false;
    if (YAML::convert<bool>::decode(enabled, value)) e.enabled = value;
  }
  std::string cmd = Scalar(entry, "cmd");
  YAML::Node args = entry["args"];
  std::vector<std::string> argv;
  if (args && args.IsSequence()) {
    for (const auto& a : args) argv.push_back(a.IsScalar() ? a.Scalar() : std::string());
  }
  ClassifyEnvs(entry, e);
  e.argv.push_back(cmd);
  e.argv.insert(e.argv.end(), argv.begin(), argv.end());
  if (YAML::Node envs = entry["envs"]; envs && envs.IsMap()) {
    for (const auto& kv : envs) {
      if (kv.first.IsScalar() && kv.second.IsScalar())
        e.envs[kv.first.Scalar()] = kv.second.Scalar();
    }
  }
  e.cwd = Scalar(entry, "cwd");
  if (YAML::Node t = entry["timeout"]; t && t.IsScalar()) {
    int seconds = 0;
    if (YAML::convert<int>::decode(t, seconds) && seconds > 0) e.timeout = seconds;
  }
  e.gander_mcp =
      std::filesystem::path(cmd).filename() == "gander" && !argv.empty() && argv.front() == "mcp";
  if (auto w = ParseWrapped(cmd, args)) {
    e.wrapped = true;
    e.profile = w->profile;
    e.policy = w->policy;
    e.command.assign(argv.begin() + static_cast<long>(w->separator) + 1, argv.end());
  } else {
    e.command.push_back(cmd);
    e.command.insert(e.command.end(), argv.begin(), argv.end());
  }
  return e;
}

Result<std::vector<std::pair<std::string, YAML::Node>>> Entries(const YAML::Node& root) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  if (!root || root.IsNull()) return out;
  if (!root.IsMap()) return MakeError("the config is not a YAML mapping");
  YAML::Node extensions = root["extensions"];
  if (!extensions || extensions.IsNull()) return out;
  if (!extensions.IsMap()) return MakeError("extensions: expected a mapping");
  for (const auto& kv : extensions) {
    out.emplace_back(kv.first.IsScalar() ? kv.first.Scalar() : std::string("?"), kv.second);
  }
  return out;
}

// The edits that wrap one entry, or an error saying why it cannot be.
Result<std::vector<Edit>> WrapEdits(const Source& src, const YAML::Node& entry,
                                    const std::string& gander_path,
                                    const std::vector<std::string>& prefix_values) {
  YAML::Node cmd = entry["cmd"], args = entry["args"];
  if (!cmd || !cmd.IsScalar() || cmd.Scalar().empty()) return MakeError("no cmd");
  if (!args || !args.IsSequence()) {
    return MakeError("args is missing or not a list (write `args: []`)");
  }
  auto cmd_span = src.ScalarSpan(cmd, /*flow=*/false);
  if (!cmd_span) return cmd_span.error().Context("cmd");
  std::string cmd_raw = src.Text(*cmd_span);
  std::vector<Edit> edits;
  bool flow = args.Style() == YAML::EmitterStyle::Flow;
  std::vector<std::string> items;
  for (const std::string& v : prefix_values) items.push_back(YamlScalar(v));
  if (flow) {
    items.push_back(ForFlow(cmd_raw, cmd.Scalar()));
    std::string joined;
    for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
    if (args.size() > 0) {
      auto first = src.Offset(args[0].Mark());
      if (!first) return first.error().Context("args");
      edits.push_back({*first, 0, joined + ", "});
    } else {
      auto open = src.Offset(args.Mark());
      if (!open || src.text()[*open] != '[') return MakeError("args: cannot find its '['");
      edits.push_back({*open + 1, 0, joined});
    }
  } else {
    if (args.size() == 0) return MakeError("args: an empty block list");
    auto first = src.Offset(args[0].Mark());
    if (!first) return first.error().Context("args");
    size_t line = src.LineStart(*first);
    std::string dash = src.text().substr(line, *first - line);
    if (dash.find_first_not_of(" \t-") != std::string::npos ||
        std::count(dash.begin(), dash.end(), '-') != 1) {
      return MakeError("args: unsupported list layout");
    }
    items.push_back(cmd_raw);
    std::string eol = src.Eol(*first), lines;
    for (const std::string& item : items) lines += dash + item + eol;
    edits.push_back({line, 0, lines});
  }
  edits.push_back({cmd_span->begin, cmd_span->end - cmd_span->begin, YamlScalar(gander_path)});
  return edits;
}

Result<std::vector<Edit>> UnwrapEdits(const Source& src, const YAML::Node& entry,
                                      size_t separator) {
  YAML::Node cmd = entry["cmd"], args = entry["args"];
  auto cmd_span = src.ScalarSpan(cmd, /*flow=*/false);
  if (!cmd_span) return cmd_span.error().Context("cmd");
  bool flow = args.Style() == YAML::EmitterStyle::Flow;
  auto original = src.ScalarSpan(args[separator + 1], flow);
  if (!original) return original.error().Context("args");
  auto first = src.Offset(args[0].Mark());
  if (!first) return first.error().Context("args");
  std::vector<Edit> edits;
  edits.push_back({cmd_span->begin, cmd_span->end - cmd_span->begin, src.Text(*original)});
  bool more = args.size() > separator + 2;
  size_t end = 0;
  if (flow) {
    if (more) {
      auto next = src.Offset(args[separator + 2].Mark());
      if (!next) return next.error().Context("args");
      end = *next;
    } else {
      end = original->end;
    }
    if (src.text().substr(*first, end - *first).find('\n') != std::string::npos) {
      return MakeError("args: gander's items span several lines; unwrap it by hand");
    }
    edits.push_back({*first, end - *first, ""});
  } else {
    size_t begin = src.LineStart(*first);
    if (more) {
      auto next = src.Offset(args[separator + 2].Mark());
      if (!next) return next.error().Context("args");
      end = src.LineStart(*next);
    } else {
      end = src.NextLineStart(original->end);
    }
    edits.push_back({begin, end - begin, ""});
  }
  return edits;
}

// Re-reads the rewritten entry: it must hold exactly the command we meant.
Status Verify(const std::string& text, const std::string& key, const std::string& cmd,
              const std::vector<std::string>& args) {
  auto root = Parse(text);
  if (!root) return root.error();
  YAML::Node entry = (*root)["extensions"][key];
  std::vector<std::string> got;
  for (const auto& a : entry["args"]) got.push_back(a.Scalar());
  if (Scalar(entry, "cmd") != cmd || got != args) {
    return MakeError("the rewritten entry does not read back as intended");
  }
  return {};
}

template <typename Decide>
Result<Rewrite> RewriteEach(const std::string& text, Decide decide) {
  auto root = Parse(text);
  if (!root) return root.error();
  auto entries = Entries(*root);
  if (!entries) return entries.error();
  Rewrite out;
  out.text = text;
  // Each entry is rewritten on the text as the previous ones left it, re-reading the marks:
  // simple, and config files are small.
  for (const auto& [key, entry] : *entries) {
    ExtensionEntry e = Describe(key, entry);
    auto current = Parse(out.text);
    if (!current) return current.error();
    YAML::Node now = (*current)["extensions"][key];
    Source src(out.text);
    auto result = decide(src, now, e);
    if (!result) return result.error().Context("extension '" + key + "'");
    if (!result->empty()) {
      out.text = Apply(out.text, *result);
      e.changed = true;
    }
    out.extensions.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::string ProfileForCommand(const std::vector<std::string>& command) {
  static const std::set<std::string> kKnown = {
      "filesystem", "memory",   "sequential-thinking", "everything",   "github", "gitlab",
      "slack",      "postgres", "puppeteer",           "brave-search", "fetch"};
  auto known = [&](std::string name) -> std::string {
    size_t at = name.find('@', 1);  // server-github@1.2.3
    if (at != std::string::npos) name.resize(at);
    for (const char* prefix : {"mcp-server-", "server-"}) {
      if (name.starts_with(prefix)) {
        std::string rest = name.substr(std::string_view(prefix).size());
        if (kKnown.contains(rest)) return rest;
      }
    }
    return "";
  };
  for (const std::string& word : command) {
    if (std::string p = known(Basename(word)); !p.empty()) return p;
    // `node …/node_modules/@modelcontextprotocol/server-memory/dist/index.js`: the package is
    // the directory right after node_modules (and its @scope), not the file's name.
    std::vector<std::string> parts;
    std::istringstream path(word);
    for (std::string part; std::getline(path, part, '/');) parts.push_back(part);
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i] != "node_modules" && parts[i] != "site-packages") continue;
      size_t pkg = i + 1 < parts.size() && parts[i + 1].starts_with('@') ? i + 2 : i + 1;
      if (pkg + 1 >= parts.size()) continue;  // the package's own directory, then a file in it
      std::string name = parts[pkg];
      std::replace(name.begin(), name.end(), '_', '-');  // site-packages/mcp_server_fetch
      if (std::string p = known(name); !p.empty()) return p;
    }
  }
  return "default";
}

bool IsUnsafeWriteGrant(const std::string& path, const std::string& home) {
  auto within = [](const std::string& p, const std::string& dir) {
    return dir == "/" || p == dir || (p.starts_with(dir) && p[dir.size()] == '/');
  };
  if (!home.empty() && home != "/" && within(home, path)) return true;  // ~, /home, /
  for (const char* system : {"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                             "/boot", "/proc", "/sys", "/dev", "/run", "/root"}) {
    if (within(path, system)) return true;
  }
  // /var/lib/app or /opt/tool can be a project; /var and /opt themselves are the system's.
  for (const char* top : {"/", "/var", "/opt", "/home", "/srv", "/mnt", "/media", "/tmp"}) {
    if (path == top) return true;
  }
  return false;
}

std::vector<std::string> DirectoryArguments(const std::vector<std::string>& command,
                                            const WrapSettings& settings) {
  std::vector<std::string> out;
  if (!settings.is_directory) return out;
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& arg = command[i];
    std::string path = arg;
    if (arg.starts_with("~/") && !settings.home.empty()) path = settings.home + arg.substr(1);
    if (!path.starts_with("/") || path == "/" || path.find('$') != std::string::npos) continue;
    if (std::find(out.begin(), out.end(), arg) != out.end()) continue;
    if (settings.is_directory(path)) out.push_back(arg);
  }
  return out;
}

std::string ExtensionPolicyYaml(const ExtensionEntry& e) {
  std::ostringstream out;
  out << "# Written by `gander goose wrap` for the Goose extension '" << e.key << "'.\n"
      << "# Edit freely: wrap does not overwrite this file.\n"
      << "version: 1\n"
      << "extends: " << e.profile << "\n";
  if (!e.directories.empty()) {
    out << "filesystem:\n"
        << "  # The directories Goose hands this extension as arguments are its working set\n"
        << "  # (server-filesystem serves exactly those): readable and writable in the sandbox.\n"
        << "  write:\n";
    for (const std::string& dir : e.directories) out << "    - " << YamlScalar(dir) << "\n";
  }
  if (!e.read_directories.empty()) {
    if (e.directories.empty()) out << "filesystem:\n";
    out << "  # System directories and your home (or a directory holding it) are never made\n"
        << "  # writable by wrap: shown read-only. Name a project directory to write there.\n"
        << "  read:\n";
    for (const std::string& dir : e.read_directories) out << "    - " << YamlScalar(dir) << "\n";
  }
  std::vector<std::string> plain;
  for (const std::string& name : e.plain_envs) {
    if (IsValidName(name)) plain.push_back(name);
  }
  if (!plain.empty()) {
    out << "env:\n"
        << "  # Goose's envs that are configuration, not credentials: passed as they are.\n"
        << "  pass: [";
    for (size_t i = 0; i < plain.size(); ++i) out << (i ? ", " : "") << plain[i];
    out << "]\n";
  }
  bool any = false;
  for (const std::string& name : e.secrets) {
    if (!IsValidName(name)) continue;
    if (!any) {
      out << "# Goose's env_keys, and the envs whose name or value is a credential's: named\n"
          << "# secrets (gander passes nothing else of Goose's environment; a secret's value is\n"
          << "# redacted from the extension's output).\n"
          << "secrets:\n";
    }
    any = true;
    out << "  " << name << ": {from: env}\n";
  }
  return out.str();
}

Result<std::vector<ExtensionEntry>> InspectConfig(const std::string& text) {
  auto root = Parse(text);
  if (!root) return root.error();
  auto entries = Entries(*root);
  if (!entries) return entries.error();
  std::vector<ExtensionEntry> out;
  for (const auto& [key, entry] : *entries) out.push_back(Describe(key, entry));
  return out;
}

Result<Rewrite> WrapConfig(const std::string& text, const WrapSettings& settings) {
  return RewriteEach(
      text,
      [&](const Source& src, const YAML::Node& entry,
          ExtensionEntry& e) -> Result<std::vector<Edit>> {
        if (e.type != "stdio" || !e.enabled || e.wrapped) return std::vector<Edit>{};
        if (e.gander_mcp) {
          // Each of its sandboxes is already a `gander run`: wrapped once more, the server's
          // own sandbox would refuse what it needs to build them (memfd_create, namespaces).
          e.note = "gander mcp runs every sandbox under gander itself; left as it is";
          return std::vector<Edit>{};
        }
        e.profile = ProfileForCommand(e.command);
        std::vector<std::string> prefix = {"run", "--name", e.key};
        for (std::string& dir : DirectoryArguments(e.command, settings)) {
          std::string path = dir.starts_with("~") ? settings.home + dir.substr(1) : dir;
          while (path.size() > 1 && path.back() == '/') path.pop_back();
          if (IsUnsafeWriteGrant(path, settings.home)) {
            e.read_directories.push_back(std::move(dir));
          } else {
            e.directories.push_back(std::move(dir));
          }
        }
        if (!e.read_directories.empty()) {
          std::string list;
          for (const auto& d : e.read_directories) list += (list.empty() ? "" : ", ") + d;
          e.note = "directory arguments " + list +
                   " are a system directory or your home: granted read-only, not writable";
        }
        std::vector<std::string> bad;
        for (const auto* names : {&e.secrets, &e.plain_envs}) {
          for (const std::string& s : *names) {
            if (!IsValidName(s)) bad.push_back(s);
          }
        }
        if (!e.secrets.empty() || !e.plain_envs.empty() || !e.directories.empty() ||
            !e.read_directories.empty()) {
          std::string safe_key;
          for (char c : e.key)
            safe_key += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
          e.policy = settings.policy_dir + "/goose-" + safe_key + ".yaml";
          e.policy_file = PolicyFile{e.policy, ExtensionPolicyYaml(e)};
          prefix.insert(prefix.end(), {"--policy", e.policy});
          for (const std::string& s : bad)
            e.note += "'" + s + "' is not a variable name; not passed. ";
        } else {
          prefix.insert(prefix.end(), {"--profile", e.profile});
        }
        prefix.push_back("--");
        auto edits = WrapEdits(src, entry, settings.gander_path, prefix);
        if (!edits) {
          e.note = edits.error().message + "; left as it is";
          e.policy_file.reset();
          return std::vector<Edit>{};
        }
        std::vector<std::string> args = prefix;
        args.insert(args.end(), e.command.begin(), e.command.end());
        auto check = Verify(Apply(src.text(), *edits), e.key, settings.gander_path, args);
        if (!check) return check.error();
        e.wrapped = true;
        return edits;
      });
}

Result<Rewrite> UnwrapConfig(const std::string& text) {
  return RewriteEach(text,
                     [&](const Source& src, const YAML::Node& entry,
                         ExtensionEntry& e) -> Result<std::vector<Edit>> {
                       if (e.type != "stdio" || !e.wrapped) return std::vector<Edit>{};
                       auto w = ParseWrapped(Scalar(entry, "cmd"), entry["args"]);
                       if (!w) return std::vector<Edit>{};
                       auto edits = UnwrapEdits(src, entry, w->separator);
                       if (!edits) {
                         e.note = edits.error().message + "; left as it is";
                         return std::vector<Edit>{};
                       }
                       auto check =
                           Verify(Apply(src.text(), *edits), e.key, e.command.at(0),
                                  std::vector<std::string>(e.command.begin() + 1, e.command.end()));
                       if (!check) return check.error();
                       e.wrapped = false;
                       e.profile.clear();
                       e.policy.clear();
                       return edits;
                     });
}

std::string UnifiedDiff(const std::string& before, const std::string& after,
                        const std::string& before_name, const std::string& after_name) {
  if (before == after) return "";
  auto split = [](const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  std::vector<std::string> a = split(before), b = split(after);
  struct Op {
    char kind;  // ' ', '-', '+'
    size_t ai, bi;
  };
  // Common head and tail first, then a longest-common-subsequence table over what is left:
  // the changed region of a config file is small.
  size_t n = a.size(), m = b.size(), head = 0, tail = 0;
  while (head < n && head < m && a[head] == b[head]) ++head;
  while (tail < n - head && tail < m - head && a[n - 1 - tail] == b[m - 1 - tail]) ++tail;
  size_t an = n - head - tail, bm = m - head - tail;
  std::vector<std::vector<unsigned>> lcs(an + 1, std::vector<unsigned>(bm + 1, 0));
  for (size_t i = an; i-- > 0;) {
    for (size_t j = bm; j-- > 0;) {
      lcs[i][j] = a[head + i] == b[head + j] ? lcs[i + 1][j + 1] + 1
                                             : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<Op> ops;
  for (size_t k = 0; k < head; ++k) ops.push_back({' ', k, k});
  size_t i = 0, j = 0;
  while (i < an || j < bm) {
    if (i < an && j < bm && a[head + i] == b[head + j]) {
      ops.push_back({' ', head + i++, head + j++});
    } else if (i < an && (j == bm || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', head + i++, head + j});
    } else {
      ops.push_back({'+', head + i, head + j++});
    }
  }
  for (size_t k = 0; k < tail; ++k) ops.push_back({' ', n - tail + k, m - tail + k});
  std::ostringstream out;
  out << "--- " << before_name << "\n+++ " << after_name << "\n";
  constexpr size_t kContext = 3;
  size_t k = 0;
  while (k < ops.size()) {
    if (ops[k].kind == ' ') {
      ++k;
      continue;
    }
    size_t start = k >= kContext ? k - kContext : 0, end = k;
    // Extend the hunk while changes are closer than twice the context.
    size_t last_change = k;
    for (end = k; end < ops.size(); ++end) {
      if (ops[end].kind != ' ') last_change = end;
      if (end - last_change > 2 * kContext) break;
    }
    end = std::min(ops.size(), last_change + kContext + 1);
    size_t a_count = 0, b_count = 0;
    for (size_t x = start; x < end; ++x) {
      if (ops[x].kind != '+') ++a_count;
      if (ops[x].kind != '-') ++b_count;
    }
    out << "@@ -" << ops[start].ai + (a_count ? 1 : 0) << "," << a_count << " +"
        << ops[start].bi + (b_count ? 1 : 0) << "," << b_count << " @@\n";
    for (size_t x = start; x < end; ++x) {
      out << ops[x].kind << (ops[x].kind == '+' ? b[ops[x].bi] : a[ops[x].ai]) << "\n";
    }
    k = end;
  }
  return out.str();
}

}  // namespace gander::launcher::goose
