#include "learn/suggest.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/enum_names.h"
#include "common/path.h"
#include "learn/destination_risk.h"
#include "monitor/path_classifier.h"
#include "policies/denied_syscalls.h"
#include "policies/network_matcher.h"

namespace gander::learn {
namespace {

using events::PathClass;
using monitor::ClassifierRules;

bool IsUnder(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir ||
         (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

bool UnderAny(std::string_view path, const std::vector<std::string>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(), [&](const auto& d) { return IsUnder(path, d); });
}

std::vector<std::string> Components(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

std::string Join(const std::string& root, const std::vector<std::string>& parts, size_t n) {
  std::string out = root;
  for (size_t i = 0; i < n && i < parts.size(); ++i) {
    if (out.empty() || out.back() != '/') out += '/';
    out += parts[i];
  }
  return out;
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

constexpr EnumName<Need> kNeedWords[] = {
    {Need::kRead, "read"}, {Need::kWrite, "write"}, {Need::kExec, "exec"}};

const char* NeedWord(Need need) { return NameOf(kNeedWords, need); }

// "2026-11-30 10:01-10:05" (UTC, to the minute) from a usage's first and last time; the date
// again when it changed; "" without times.
std::string When(const Usage& u) {
  auto ok = [](const std::string& t) { return t.size() >= 16 && t[10] == 'T'; };
  if (!ok(u.first) || !ok(u.last)) return "";
  std::string out = u.first.substr(0, 10) + " " + u.first.substr(11, 5);
  if (u.last.substr(0, 16) == u.first.substr(0, 16)) return out;
  if (u.last.substr(0, 10) != u.first.substr(0, 10))
    return out + " - " + u.last.substr(0, 10) + " " + u.last.substr(11, 5);
  return out + "-" + u.last.substr(11, 5);
}

// "3x; tools: a, b; 2026-11-30 10:01-10:05" with at most five tool names.
std::string Describe(const Usage& u) {
  std::string out = std::to_string(u.count) + "x; tools: ";
  size_t shown = 0;
  for (const auto& tool : u.tools) {
    if (shown == 5) {
      out += ", and " + std::to_string(u.tools.size() - shown) + " more";
      break;
    }
    out += (shown++ ? ", " : "") + tool;
  }
  if (std::string when = When(u); !when.empty()) out += "; " + when;
  // A comment is one line: no control characters from tool names.
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

// Credentials and keys under home, and the system's password and key files: never suggested,
// whatever the base says.
bool IsSecretPath(const std::string& path, const std::string& home) {
  static constexpr std::array<std::string_view, 24> kHome = {".ssh",
                                                             ".gnupg",
                                                             ".aws",
                                                             ".azure",
                                                             ".config/gcloud",
                                                             ".kube",
                                                             ".docker",
                                                             ".netrc",
                                                             ".git-credentials",
                                                             ".npmrc",
                                                             ".pypirc",
                                                             ".config/goose",
                                                             ".local/share/keyrings",
                                                             ".password-store",
                                                             ".config/gh",
                                                             ".vault-token",
                                                             ".terraform.d",
                                                             ".cargo/credentials",
                                                             ".cargo/credentials.toml",
                                                             ".bash_history",
                                                             ".zsh_history",
                                                             ".mozilla",
                                                             ".config/google-chrome",
                                                             ".config/chromium"};
  static constexpr std::array<std::string_view, 11> kSystem = {
      "/etc/shadow",      "/etc/shadow-",        "/etc/gshadow",
      "/etc/gshadow-",    "/etc/sudoers",        "/etc/sudoers.d",
      "/etc/ssh",         "/etc/ssl/private",    "/root",
      "/run/docker.sock", "/var/run/docker.sock"};
  if (!home.empty() && home != "/") {
    for (auto rel : kHome) {
      if (IsUnder(path, home + "/" + std::string(rel))) return true;
    }
  }
  for (auto p : kSystem) {
    if (p == "/root" && home == "/root") continue;  // running as root: home is /root
    if (IsUnder(path, p)) return true;
  }
  std::string base = Basename(path);
  static constexpr std::array<std::string_view, 6> kKeyPrefixes = {
      "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "credentials", ".env"};
  static constexpr std::array<std::string_view, 5> kKeySuffixes = {".pem", ".key", ".p12", ".pfx",
                                                                   ".kdbx"};
  for (auto p : kKeyPrefixes) {
    if (base.starts_with(p)) return true;
  }
  for (auto s : kKeySuffixes) {
    if (base.ends_with(s)) return true;
  }
  return false;
}

bool IsSharedLibrary(const std::string& path) {
  std::string base = Basename(path);
  return base.ends_with(".so") || base.find(".so.") != std::string::npos || base.ends_with(".node");
}

// Where interpreters and tool chains keep their trees: a path below one of these collapses to
// the prefix plus `extra` components (/opt/node, ~/.nvm/versions/node/v22.1.0).
struct KnownPrefix {
  std::string_view dir;  // "~/" for home-relative
  size_t extra;
};
constexpr std::array<KnownPrefix, 13> kKnownPrefixes = {{
    {"/usr/lib/node_modules", 0},
    {"/usr/local/lib/node_modules", 0},
    {"/opt", 1},
    {"/nix/store", 1},
    {"/snap", 2},
    {"~/.nvm/versions/node", 1},
    {"~/.local/lib", 1},
    {"~/.pyenv/versions", 1},
    {"~/.cargo", 0},
    {"~/.rustup", 0},
    {"~/.deno", 0},
    {"~/.bun", 0},
    {"~/.volta", 0},
}};

struct Candidate {
  std::string written;   // as the policy says it: ${WORKSPACE}/x, ~/x, /x
  std::string absolute;  // expanded
};

class Collapser {
 public:
  Collapser(const Learned& learned, const std::string& workspace, const std::string& home)
      : workspace_(workspace), home_(home) {
    // An interpreter's prefix: PREFIX/bin/PROGRAM that was executed, PREFIX not / or /usr.
    for (const auto& [path, needs] : learned.files) {
      if (!needs.contains(Need::kExec)) continue;
      std::string bin = Parent(path);
      if (Basename(bin) != "bin") continue;
      std::string prefix = Parent(bin);
      if (prefix == "/" || prefix == "/usr" || prefix == home_) continue;
      prefixes_.push_back(prefix);
    }
    directories_ = learned.directories;
    for (const auto& [path, needs] : learned.files) {
      for (std::string dir = Parent(path); dir != "/" && directories_.insert(dir).second;) {
        dir = Parent(dir);
      }
    }
  }

  Candidate For(const std::string& path) const {
    if (!workspace_.empty() && workspace_ != "/" && IsUnder(path, workspace_)) {
      auto parts = Components(path.substr(workspace_.size()));
      return {Join("${WORKSPACE}", parts, 1), Join(workspace_, parts, 1)};
    }
    for (const auto& prefix : prefixes_) {
      if (IsUnder(path, prefix)) return Written(prefix);
    }
    for (const auto& known : kKnownPrefixes) {
      std::string dir(known.dir);
      if (dir.starts_with("~/")) {
        if (home_.empty() || home_ == "/") continue;
        dir = home_ + dir.substr(1);
      }
      if (IsUnder(path, dir) && path != dir) {
        auto parts = Components(path.substr(dir.size()));
        if (parts.size() > known.extra) return Written(Join(dir, parts, known.extra));
      }
    }
    if (IsSharedLibrary(path)) return Written(Parent(path));
    if (!home_.empty() && home_ != "/" && IsUnder(path, home_)) {
      auto parts = Components(path.substr(home_.size()));
      return Written(Join(home_, parts, std::min<size_t>(parts.size(), 2)));
    }
    // A directory (listed, or opened to reach what is below): itself.
    if (directories_.contains(path)) return Written(path);
    // Elsewhere: the file's directory (a top-level name stays itself: never all of `/`).
    std::string parent = Parent(path);
    return Written(parent == "/" ? path : parent);
  }

 private:
  Candidate Written(const std::string& absolute) const {
    if (!home_.empty() && home_ != "/" && IsUnder(absolute, home_)) {
      return {absolute == home_ ? "~/" : "~" + absolute.substr(home_.size()), absolute};
    }
    return {absolute, absolute};
  }

  std::string workspace_, home_;
  std::vector<std::string> prefixes_;
  std::set<std::string> directories_;
};

// A policy path as a YAML double-quoted scalar: `$` doubled (a literal in policy paths), `"`
// and `\` escaped; the ${WORKSPACE} prefix kept as the variable.
std::string QuotePath(const std::string& written) {
  std::string out = "\"";
  size_t start = 0;
  if (written.starts_with("${WORKSPACE}")) {
    out += "${WORKSPACE}";
    start = 12;
  }
  for (size_t i = start; i < written.size(); ++i) {
    char c = written[i];
    if (c == '$')
      out += "$$";
    else if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out + "\"";
}

bool IsNameHost(const std::string& host) { return !policies::IpAddress::Parse(host).has_value(); }

bool NetworkCovered(const policies::NetworkMatcher& matcher, const std::string& host, uint16_t port,
                    policies::Protocol protocol = policies::Protocol::kTcp) {
  policies::Destination d;
  d.port = port;
  d.protocol = protocol;
  if (auto ip = policies::IpAddress::Parse(host)) {
    d.ip = *ip;
  } else {
    d.ip = *policies::IpAddress::Parse("192.0.2.1");  // TEST-NET: the name decides
    std::string lower = host;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    d.names.push_back(lower);
  }
  return matcher.Match(d).allowed;
}

struct FileVerdict {
  bool covered = false;
  bool refused = false;  // under a deny rule
};

FileVerdict FileCovered(const ClassifierRules& rules, const policies::ExpandedPolicy& policy,
                        const Learned& learned, const std::string& path, Need need) {
  PathClass cls = rules.Classify(path);
  if (cls == PathClass::kDenied) return {false, true};
  // The command's own files: gander grants them again whenever the same command runs.
  if (need != Need::kWrite && UnderAny(path, learned.command_grants)) return {true, false};
  switch (need) {
    case Need::kExec:
      return {cls != PathClass::kOutside && UnderAny(path, policy.exec), false};
    case Need::kWrite:
      return {cls == PathClass::kWorkspace || cls == PathClass::kPrivate ||
                  cls == PathClass::kAllowedWrite || cls == PathClass::kSystem,
              false};
    case Need::kRead:
      if (cls == PathClass::kPrivate) {
        // Its own scratch file, or the real one the tmpfs hides?
        auto it = learned.files.find(path);
        return {it != learned.files.end() && it->second.contains(Need::kWrite), false};
      }
      return {cls != PathClass::kOutside, false};
  }
  return {};
}

// Was a delivered secret used? A file secret when its file was read; an environment secret
// always counts (getenv is not observable: delivery is all there is to go on).
bool SecretUsed(const SecretSeen& seen) { return seen.as != "file" || seen.reads.count > 0; }

std::string SecretComment(const SecretSeen& seen) {
  std::string out = "delivered to " + std::to_string(seen.delivered.count) + " run" +
                    (seen.delivered.count == 1 ? "" : "s");
  if (std::string when = When(seen.delivered); !when.empty()) out += " (" + when + ")";
  if (seen.as == "file") {
    out += seen.reads.count > 0 ? "; file read " + Describe(seen.reads)
                                : "; its file was never read: drop it if not needed";
  } else {
    out += "; reads of an environment variable are not observable, only its delivery";
  }
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

// The `secrets` section: the names and deliveries of the secrets the runs were given (never a
// value). A secret from gander's environment is written as an entry; one from a file or a
// command as a commented entry, since its source (a path, a script) is not in the audit log.
std::string SecretsSection(const Learned& learned, const policies::ExpandedPolicy& base,
                           std::vector<std::string>& flagged) {
  std::string entries, sourced;
  for (const auto& [name, seen] : learned.secrets) {
    auto rule = base.secrets.find(name);
    if (rule != base.secrets.end() &&
        (rule->second.as == policies::SecretDelivery::kFile) == (seen.as == "file")) {
      continue;  // the base delivers it already, from its own source
    }
    std::string as = seen.as == "file" ? ", as: file" : "";
    std::string comment = "  # " + SecretComment(seen) + "\n";
    if (seen.from == "env" || seen.from.empty()) {
      entries += "  " + name + ": {from: env" + as + "}" + comment;
    } else {
      std::string key = seen.from == "file" ? "path" : "run";
      sourced +=
          "#   " + name + ": {from: " + seen.from + ", " + key + ": ..." + as + "}" + comment;
      flagged.push_back("secret " + name + ": from " + seen.from +
                        ": copy its source from the policy learned under");
    }
    if (!SecretUsed(seen)) flagged.push_back("secret " + name + ": delivered, never read");
  }
  if (entries.empty() && sourced.empty()) return "";
  std::string out = entries.empty() ? "" : "secrets:\n" + entries;
  if (!sourced.empty()) {
    out += "# secrets from a file or a command: fill in the source and uncomment\n" + sourced;
  }
  return out;
}
// Syscalls that need a capability or change credentials: an MCP server has no business with
// them, so `suggest` lists them for review instead of allowing them.
constexpr std::string_view kPrivilegedSyscalls[] = {
    "setuid",   "setgid",   "setreuid", "setregid", "setresuid",   "setresgid", "setgroups",
    "setfsuid", "setfsgid", "capset",   "unshare",  "personality", "mknod",     "mknodat",
};

}  // namespace

std::vector<SyscallSuggestion> SuggestSyscalls(const Learned& learned,
                                               const policies::ExpandedPolicy& base) {
  std::map<std::string, const policies::DeniedSyscall*> floor_always;
  std::map<std::string, std::string> floor_conditional;  // name -> labels
  static const auto floor = policies::DeniedSyscalls({});
  for (const auto& d : floor) {
    if (d.any_of.empty()) {
      floor_always.emplace(std::string(d.name), &d);
    } else {
      std::string& labels = floor_conditional[std::string(d.name)];
      labels += (labels.empty() ? "" : ", ") + std::string(d.label);
    }
  }
  std::set<std::string> base_allows;
  if (base.syscalls_allow)
    base_allows.insert(base.syscalls_allow->begin(), base.syscalls_allow->end());
  std::vector<SyscallSuggestion> out;
  for (const auto& [name, calls] : learned.syscalls) {
    SyscallSuggestion s{name, calls, "", ""};
    if (auto c = floor_conditional.find(name); c != floor_conditional.end()) s.floor = c->second;
    auto always = floor_always.find(name);
    if (name.starts_with("nr ")) {
      s.not_added = "no name on this architecture";
    } else if (always != floor_always.end()) {
      if (always->second->silent) continue;  // a compatibility answer (clone3), seen or not
      s.not_added = "gander's floor denies it whatever the allowlist says";
    } else if (std::find(std::begin(kPrivilegedSyscalls), std::end(kPrivilegedSyscalls), name) !=
               std::end(kPrivilegedSyscalls)) {
      s.not_added = "privileged (credentials, capabilities, namespaces, devices)";
    } else if (base.syscalls_allow && !base_allows.contains(name)) {
      s.not_added = "not in the base's syscalls.allow (a derived list can only narrow it)";
    }
    out.push_back(std::move(s));
  }
  return out;
}

Coverage CheckCoverage(const Learned& learned, const policies::ExpandedPolicy& policy,
                       const std::string& workspace, const std::string& home) {
  (void)home;
  Coverage out;
  auto rules = ClassifierRules::From(policy, workspace);
  for (const auto& [path, needs] : learned.files) {
    for (const auto& [need, usage] : needs) {
      auto v = FileCovered(rules, policy, learned, path, need);
      std::string line = std::string(NeedWord(need)) + " " + path + " (" + Describe(usage) + ")";
      if (v.refused)
        out.refused.push_back(line);
      else if (!v.covered)
        out.uncovered.push_back(line);
    }
  }
  for (const auto& [path, usage] : learned.denied_files) {
    out.refused.push_back("file " + path + " (" + Describe(usage) + ")");
  }
  auto matcher = policies::NetworkMatcher::Compile(policy.network);
  for (const auto& [dest, usage] : learned.network) {
    if (matcher && NetworkCovered(*matcher, dest.first, dest.second)) continue;
    out.uncovered.push_back("connect " + dest.first + ":" + std::to_string(dest.second) + " (" +
                            Describe(usage) + ")");
  }
  for (const auto& [dest, usage] : learned.network_udp) {
    if (matcher && NetworkCovered(*matcher, dest.first, dest.second, policies::Protocol::kUdp)) {
      continue;
    }
    out.uncovered.push_back("udp " + dest.first + ":" + std::to_string(dest.second) + " (" +
                            Describe(usage) + ")");
  }
  for (const auto& [name, usage] : learned.dns_names) {
    if (matcher && matcher->MayResolve(name)) continue;
    out.uncovered.push_back("resolve " + name + " (" + Describe(usage) + ")");
  }
  for (const auto& [name, seen] : learned.secrets) {
    if (!SecretUsed(seen)) continue;
    auto rule = policy.secrets.find(name);
    std::string as = seen.as == "file" ? "file" : "env";
    if (rule == policy.secrets.end()) {
      out.uncovered.push_back("secret " + name + " as " + as + " (" + SecretComment(seen) + ")");
    } else if ((rule->second.as == policies::SecretDelivery::kFile) != (as == "file")) {
      out.uncovered.push_back("secret " + name + " as " + as + ": the policy delivers it as " +
                              (as == "file" ? "env" : "file") + " (" + SecretComment(seen) + ")");
    }
  }
  if (policy.syscalls_allow) {
    std::set<std::string> allowed(policy.syscalls_allow->begin(), policy.syscalls_allow->end());
    for (const char* name : policies::kImplicitSyscalls) allowed.insert(name);
    for (const auto& s : SuggestSyscalls(learned, {})) {
      const std::string line = "syscall " + s.name + " (" + std::to_string(s.calls) + "x)";
      if (s.not_added.starts_with("gander's floor")) {
        out.refused.push_back(line + ": gander's floor");
      } else if (!allowed.contains(s.name)) {
        out.uncovered.push_back(line);
      }
    }
  }
  return out;
}

namespace {

// The filesystem grants, by need (read, exec, write): one line per directory, the learned
// paths collapsed into it. What must not be granted goes to `review`.
std::map<Need, std::vector<std::string>> FileGrants(const Learned& learned,
                                                    const SuggestContext& ctx,
                                                    std::vector<std::string>& review) {
  auto rules = ClassifierRules::From(ctx.base, ctx.workspace);
  Collapser collapse(learned, ctx.workspace, ctx.home);
  auto merge = [](Usage& into, const Usage& from) { into.Merge(from); };
  // Candidate directory -> need -> usage (merged over the paths it stands for).
  std::map<std::string, std::pair<std::string, std::map<Need, Usage>>> grants;
  for (const auto& [path, usage] : learned.denied_files) {
    review.push_back("file " + path + ": under a deny rule (" + Describe(usage) + ")");
  }
  for (const auto& [path, needs] : learned.files) {
    for (const auto& [need, usage] : needs) {
      auto v = FileCovered(rules, ctx.base, learned, path, need);
      if (v.covered) continue;
      std::string what = std::string(NeedWord(need)) + " " + path;
      if (v.refused) {
        review.push_back("file " + what + ": under a deny rule of the base (" + Describe(usage) +
                         ")");
        continue;
      }
      if (IsSecretPath(path, ctx.home)) {
        review.push_back("file " + what + ": credentials or keys (" + Describe(usage) + ")");
        continue;
      }
      if (rules.Classify(path) == PathClass::kPrivate) {
        // The real home behind the base's private tmpfs: the user's own files, seen only
        // because learn mode showed them.
        if (IsUnder(path, ctx.home)) {
          review.push_back("file " + what +
                           ": the user's own, hidden by the base's private home (" +
                           Describe(usage) + ")");
          continue;
        }
        // Elsewhere (the host's /tmp): a file the extension wrote itself needs nothing, its
        // private tmpfs holds it; what it only read there (a data directory) is granted.
        if (needs.contains(Need::kWrite)) continue;
      }
      if (!ValidUtf8(path)) {
        review.push_back("file " + what + ": not UTF-8 (" + Describe(usage) + ")");
        continue;
      }
      Candidate c = collapse.For(path);
      // Never a grant under a deny rule, nor over a secret the extension did not ask for.
      if (UnderAny(c.absolute, ctx.base.deny) || IsSecretPath(c.absolute, ctx.home)) {
        review.push_back("file " + what + ": its directory " + c.written +
                         " is denied or secret (" + Describe(usage) + ")");
        continue;
      }
      // Interpreter trees and library directories need exec for their native code.
      Need grant = need == Need::kRead && IsSharedLibrary(path) ? Need::kExec : need;
      auto& entry = grants[c.absolute];
      entry.first = c.written;
      merge(entry.second[grant], usage);
    }
  }
  // Drop a grant nested in another that gives at least as much.
  for (auto it = grants.begin(); it != grants.end();) {
    bool nested = false;
    for (auto& [dir, other] : grants) {
      if (dir == it->first || !IsUnder(it->first, dir)) continue;
      bool superset =
          std::all_of(it->second.second.begin(), it->second.second.end(), [&](const auto& kv) {
            return other.second.contains(kv.first) ||
                   (kv.first == Need::kRead &&
                    (other.second.contains(Need::kWrite) || other.second.contains(Need::kExec)));
          });
      if (!superset) continue;
      for (const auto& [need, usage] : it->second.second) merge(other.second[need], usage);
      nested = true;
      break;
    }
    it = nested ? grants.erase(it) : std::next(it);
  }

  std::map<Need, std::vector<std::string>> lists;
  for (const auto& [dir, entry] : grants) {
    const auto& needs = entry.second;
    Usage all;
    std::string kinds;
    for (const auto& [need, usage] : needs) {
      merge(all, usage);
      kinds += (kinds.empty() ? "" : "+") + std::string(NeedWord(need));
    }
    std::string line = QuotePath(entry.first) + "  # " + kinds + " " + Describe(all);
    bool listed = false;
    if (needs.contains(Need::kWrite)) lists[Need::kWrite].push_back(line), listed = true;
    if (needs.contains(Need::kExec)) lists[Need::kExec].push_back(line), listed = true;
    if (!listed) lists[Need::kRead].push_back(line);
  }

  return lists;
}

// The addresses a host name resolved to while learning.
const std::set<std::string>& AddressesOf(const Learned& learned, const std::string& host) {
  static const std::set<std::string> kNoAddresses;
  auto it = learned.addresses.find(host);
  return it == learned.addresses.end() ? kNoAddresses : it->second;
}

// Host and protocol -> the ports used and how.
using HostGrants =
    std::map<std::pair<std::string, policies::Protocol>, std::pair<std::set<uint16_t>, Usage>>;

// The network grants: one rule per host with its ports. What must not be granted, and names
// looked up but never connected to, go to `review`.
HostGrants NetworkGrants(const Learned& learned, const SuggestContext& ctx,
                         std::vector<std::string>& review) {
  auto matcher = policies::NetworkMatcher::Compile(ctx.base.network);
  HostGrants hosts;
  std::vector<std::tuple<std::string, uint16_t, policies::Protocol, Usage>> destinations;
  for (const auto& [dest, usage] : learned.network) {
    destinations.emplace_back(dest.first, dest.second, policies::Protocol::kTcp, usage);
  }
  for (const auto& [dest, usage] : learned.network_udp) {
    destinations.emplace_back(dest.first, dest.second, policies::Protocol::kUdp, usage);
  }
  for (const auto& [host, port, protocol, usage] : destinations) {
    if (matcher && NetworkCovered(*matcher, host, port, protocol)) continue;
    std::string risk = RiskyHost(host, AddressesOf(learned, host));
    bool bad_name = IsNameHost(host) &&
                    (host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-.") != std::string::npos);
    if (!risk.empty() || bad_name) {
      review.push_back("network " + host + ":" + std::to_string(port) + ": " +
                       (bad_name ? "not a DNS name" : risk) + " (" + Describe(usage) + ")");
      continue;
    }
    auto& h = hosts[{host, protocol}];
    h.first.insert(port);
    h.second.Merge(usage);
  }
  // Names looked up but never connected to (refused by the policy learned under, most
  // likely): a person decides which ports, if any.
  for (const auto& [name, usage] : learned.dns_names) {
    if (matcher && matcher->MayResolve(name)) continue;
    bool connected = std::any_of(destinations.begin(), destinations.end(),
                                 [&](const auto& d) { return std::get<0>(d) == name; });
    if (connected) continue;  // reviewed above, with its ports
    review.push_back("network " + name + ": looked up, never connected (" + Describe(usage) +
                     "); add {host: " + name + ", ports: [...]} if intended");
  }
  return hosts;
}

}  // namespace

std::string SuggestPolicy(const Learned& learned, const SuggestContext& ctx) {
  std::vector<std::string> review;   // not granted
  std::vector<std::string> flagged;  // granted, with a `# REVIEW:` comment on the entry
  std::map<Need, std::vector<std::string>> lists = FileGrants(learned, ctx, review);
  HostGrants hosts = NetworkGrants(learned, ctx, review);
  for (const auto& [name, usage] : learned.denied_syscalls) {
    review.push_back("syscall " + name + ": refused by the seccomp filter (" + Describe(usage) +
                     "); gander's floor: syscalls.allow cannot allow it");
  }

  std::string out;
  out += "# Suggested by `gander policy suggest " + ctx.extension + "` from " +
         std::to_string(learned.lines) + " audit log lines (" + std::to_string(learned.runs) +
         " learning runs):\n";
  for (const auto& s : ctx.sources) out += "#   " + s + "\n";
  out +=
      "# Review every entry before you use it: it grants what the extension did while learning,\n"
      "# no more, and nothing the base already allows. Comments: how often, which tools,\n"
      "# first-last use (UTC). Entries marked `# REVIEW:` are granted but need a look.\n";
  if (learned.dropped > 0) {
    out += "# WARNING: " + std::to_string(learned.dropped) +
           " events were dropped while learning: this picture is incomplete.\n";
  }
  if (learned.bad_lines > 0) {
    out += "# WARNING: " + std::to_string(learned.bad_lines) + " lines did not parse (skipped).\n";
  }
  out += "version: 1\n";
  out += "extends: " + ctx.extends + "\n";
  if (!lists.empty()) {
    out += "filesystem:\n";
    for (Need need : {Need::kRead, Need::kExec, Need::kWrite}) {
      if (!lists.contains(need)) continue;
      out += std::string("  ") + NeedWord(need) + ":\n";
      for (const auto& line : lists[need]) out += "    - " + line + "\n";
    }
  }
  if (!hosts.empty()) {
    out += "network:\n  allow:\n";
    for (const auto& [key, entry] : hosts) {
      const auto& [host, protocol] = key;
      bool udp = protocol == policies::Protocol::kUdp;
      std::string ports;
      for (uint16_t p : entry.first) ports += (ports.empty() ? "" : ", ") + std::to_string(p);
      // A public destination is granted (the extension needs it to work) but never silently.
      std::string flag = IsNameHost(host) ? PublicFlag(AddressesOf(learned, host)) : "";
      if (!flag.empty()) flagged.push_back("network " + host + ": " + flag);
      out += "    - {host: \"" + host + "\", ports: [" + ports + "]" +
             (udp ? ", protocol: udp}  # " : "}  # ") +
             (flag.empty() ? "" : "REVIEW: " + flag + "; ") + (udp ? "send " : "connect ") +
             Describe(entry.second) + "\n";
    }
  }
  out += SecretsSection(learned, ctx.base, flagged);
  if (learned.census_runs > 0 && !learned.syscalls.empty()) {
    std::string list;
    size_t listed = 0;
    for (const auto& sc : SuggestSyscalls(learned, ctx.base)) {
      if (!sc.not_added.empty()) {
        review.push_back("syscall " + sc.name + ": " + sc.not_added + " (" +
                         std::to_string(sc.calls) + (sc.calls == 1 ? " call)" : " calls)"));
        continue;
      }
      ++listed;
      list += "    - " + sc.name + "  # " + std::to_string(sc.calls) +
              (sc.calls == 1 ? " call" : " calls") +
              (sc.floor.empty() ? "" : "; the floor still refuses " + sc.floor) + "\n";
    }
    out += "syscalls:\n";
    out += "  # The census of " + std::to_string(learned.census_runs) +
           (learned.census_runs == 1 ? " learning run: " : " learning runs: ") +
           std::to_string(listed) + " syscalls";
    if (ctx.default_syscalls > 0) {
      out +=
          " (gander's filter allows " + std::to_string(ctx.default_syscalls) + " without a list)";
    }
    out +=
        ";\n  # any other fails with ENOSYS. execve, write, exit, exit_group, rt_sigreturn,\n"
        "  # restart_syscall and sched_yield are always allowed.\n";
    out += "  allow:" + std::string(listed == 0 ? " []\n" : "\n") + list;
  }
  auto block = [&out](const char* title, std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += std::string("#\n# REVIEW: ") + title + ":\n";
    for (auto& line : lines) {
      for (char& c : line) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
      }
      out += "#   " + line + "\n";
    }
  };
  block("flagged in the suggestion above (each says why); remove or complete what needs it",
        flagged);
  block("used while learning but NOT added (risky); grant by hand only if intended", review);
  return out;
}

}  // namespace gander::learn
