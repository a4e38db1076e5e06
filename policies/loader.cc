// Policy files, profiles and `extends` resolution; see loader.h.
#include "policies/loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "common/unique_fd.h"
#include "policies/builtin_profiles.h"
#include "policies/parsed_profiles.h"

namespace gander::policies {
namespace {

constexpr off_t kMaxPolicyFileSize = 1 << 20;  // a policy is a few hundred lines at most
constexpr std::string_view kBuiltinPrefix = "profile:";

ParsedProfileLookup parsed_profiles = nullptr;  // UseParsedProfiles

// A profile's text, as the build parsed it when it is a shipped profile's, else parsed now.
Result<Policy> ParseProfile(const std::string& name, std::string_view yaml,
                            const std::string& source) {
  if (parsed_profiles) {
    if (auto parsed = parsed_profiles(name, yaml, source)) return std::move(*parsed);
  }
  return ParsePolicy(yaml, source);
}

// The whole of a small regular file. O_NONBLOCK: opening a FIFO (a policy path, or an
// `extends` one, can name anything) must not wait for a writer; the type is checked on the
// open file, so a swap after the check changes nothing. A regular file ignores the flag.
Result<std::string> ReadSmallFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return ErrnoError("cannot open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("cannot stat " + path);
  if (S_ISDIR(st.st_mode)) return Error{EISDIR, "cannot read " + path};
  if (!S_ISREG(st.st_mode)) return MakeError(path + " is not a regular file");
  if (st.st_size > kMaxPolicyFileSize) {
    return MakeError(path + " is too large for a policy (over 1 MiB)");
  }
  std::string text;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read " + path);
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxPolicyFileSize)) {
      return MakeError(path + " is too large for a policy (over 1 MiB)");
    }
  }
  return text;
}

// Every profile name a LoadProfile call could find, for "unknown profile" errors.
std::vector<std::string> AvailableProfileNames(const std::vector<std::string>& search_dirs) {
  std::set<std::string> names;
  for (const std::string& name : BuiltinProfileNames()) names.insert(name);
  for (const std::string& dir : search_dirs) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::filesystem::path& file = it->path();
      if (file.extension() == ".yaml" && IsValidProfileName(file.stem().string())) {
        names.insert(file.stem().string());
      }
    }
  }
  return {names.begin(), names.end()};
}

std::string Join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// What makes two policies in a chain the same one: the built-in name, or the file's absolute
// lexically normal path.
std::string IdentityOf(const std::string& source) {
  if (source.starts_with(kBuiltinPrefix)) return source;
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(source, ec);
  if (ec) return source;
  return absolute.lexically_normal().string();
}

// The policy that `derived.extends` names.
Result<Policy> LoadBase(const Policy& derived, const std::vector<std::string>& search_dirs) {
  const std::string& ref = *derived.extends;
  bool is_path = ref.find('/') != std::string::npos || ref.ends_with(".yaml");
  if (!is_path) return LoadProfile(ref, search_dirs);
  if (derived.source.starts_with(kBuiltinPrefix)) {
    return MakeError("a built-in profile can only extend other profiles, not a file");
  }
  std::filesystem::path path(ref);
  if (path.is_relative()) path = std::filesystem::path(derived.source).parent_path() / path;
  return LoadPolicyFile(path.lexically_normal().string());
}

template <typename T, typename Key>
void AppendUnique(std::vector<T>& into, const std::vector<T>& from, Key key) {
  for (const T& item : from) {
    bool seen = std::any_of(into.begin(), into.end(),
                            [&](const T& existing) { return key(existing) == key(item); });
    if (!seen) into.push_back(item);
  }
}

template <typename T>
void Override(std::optional<T>& base, const std::optional<T>& derived) {
  if (derived) base = derived;
}

// `syscalls.allow`: a derived list narrows the base's (intersection); a name the base's list
// leaves out is an error, never a silent widening.
Status MergeSyscalls(SyscallRules& base, const SyscallRules& derived) {
  if (!derived.allow) return {};
  if (base.allow) {
    std::set<std::string> allowed;
    for (const SyscallEntry& entry : *base.allow) allowed.insert(entry.name);
    for (size_t i = 0; i < derived.allow->size(); ++i) {
      const SyscallEntry& entry = (*derived.allow)[i];
      if (!allowed.contains(entry.name)) {
        return MakeError(FormatMark(entry.mark) + ": syscalls.allow[" + std::to_string(i) + "]: '" +
                         entry.name + "' is not in the base policy's allowlist (" +
                         FormatMark(base.allow_mark) +
                         "); a derived policy's allowlist can only narrow its base's");
      }
    }
  }
  base.allow = derived.allow;
  base.allow_mark = derived.allow_mark;
  return {};
}

// `derived` layered over `base` (see the merge rules in loader.h).
Status MergeInto(Policy& base, const Policy& derived) {
  if (Status syscalls = MergeSyscalls(base.syscalls, derived.syscalls); !syscalls) {
    return syscalls;
  }
  auto path_of = [](const PathEntry& entry) -> const std::string& { return entry.path; };
  FilesystemRules& fs = base.filesystem;
  AppendUnique(fs.read, derived.filesystem.read, path_of);
  AppendUnique(fs.exec, derived.filesystem.exec, path_of);
  AppendUnique(fs.write, derived.filesystem.write, path_of);
  AppendUnique(fs.private_, derived.filesystem.private_, path_of);
  AppendUnique(fs.deny, derived.filesystem.deny, path_of);
  AppendUnique(base.env.pass, derived.env.pass, [](const std::string& s) { return s; });
  for (const auto& [name, value] : derived.env.set) {
    base.env.set[name] = value;
    auto mark = derived.env.set_marks.find(name);
    if (mark != derived.env.set_marks.end()) {
      base.env.set_marks[name] = mark->second;
    } else {
      base.env.set_marks.erase(name);
    }
  }
  Override(base.limits.processes, derived.limits.processes);
  Override(base.limits.open_files, derived.limits.open_files);
  Override(base.limits.file_size, derived.limits.file_size);
  Override(base.limits.core_dumps, derived.limits.core_dumps);
  Override(base.limits.memory, derived.limits.memory);
  Override(base.limits.tmpfs_size, derived.limits.tmpfs_size);
  Override(base.limits.tmpfs_inodes, derived.limits.tmpfs_inodes);
  if (derived.backend) {
    base.backend = derived.backend;
    base.backend_mark = derived.backend_mark;
  }
  Override(base.install, derived.install);
  Override(base.monitor.files, derived.monitor.files);
  Override(base.monitor.audit_log, derived.monitor.audit_log);
  Override(base.monitor.audit_log_max_size, derived.monitor.audit_log_max_size);
  Override(base.monitor.audit_log_files, derived.monitor.audit_log_files);
  Override(base.monitor.osv_endpoint, derived.monitor.osv_endpoint);
  // A secret is one entry: the derived policy's replaces the base's of the same name whole.
  for (const auto& [name, rule] : derived.secrets) base.secrets[name] = rule;
  base.network.allow.insert(base.network.allow.end(), derived.network.allow.begin(),
                            derived.network.allow.end());
  base.network.deny.insert(base.network.deny.end(), derived.network.deny.begin(),
                           derived.network.deny.end());
  Override(base.network.deny_errno, derived.network.deny_errno);
  return {};
}

}  // namespace

Result<Policy> LoadPolicyFile(const std::string& path) {
  Result<std::string> text = ReadSmallFile(path);
  if (!text) return std::move(text).error().Context("cannot load policy");
  return ParsePolicy(*text, path);
}

void UseParsedProfiles(ParsedProfileLookup lookup) { parsed_profiles = lookup; }

Result<Policy> LoadProfile(const std::string& name, const std::vector<std::string>& search_dirs) {
  if (!IsValidProfileName(name)) {
    return MakeError("invalid profile name '" + name + "' (expected [A-Za-z0-9_-]+)");
  }
  for (const std::string& dir : search_dirs) {
    std::string path = (std::filesystem::path(dir) / (name + ".yaml")).string();
    Result<std::string> text = ReadSmallFile(path);
    if (text) return ParseProfile(name, *text, path);
    if (text.error().code != ENOENT && text.error().code != ENOTDIR) {
      return std::move(text).error().Context("cannot load profile '" + name + "'");
    }
  }
  for (const BuiltinProfile& profile : BuiltinProfiles()) {
    if (profile.name == name) {
      return ParseProfile(name, profile.yaml, std::string(kBuiltinPrefix) + name);
    }
  }
  return MakeError("unknown profile '" + name +
                   "' (available: " + Join(AvailableProfileNames(search_dirs), ", ") + ")");
}

std::vector<std::string> BuiltinProfileNames() {
  std::vector<std::string> names;
  for (const BuiltinProfile& profile : BuiltinProfiles()) names.emplace_back(profile.name);
  std::sort(names.begin(), names.end());
  return names;
}

Result<Policy> ResolveExtends(Policy leaf, const std::vector<std::string>& search_dirs) {
  std::vector<Policy> chain;  // most derived first
  std::vector<std::string> identities{IdentityOf(leaf.source)};
  chain.push_back(std::move(leaf));
  auto sources = [&chain](const std::string& next) {
    std::vector<std::string> names;
    for (const Policy& policy : chain) names.push_back(policy.source);
    names.push_back(next);
    return Join(names, " -> ");
  };
  while (chain.back().extends) {
    const Policy& derived = chain.back();
    std::string where = FormatMark(derived.extends_mark) + ": extends '" + *derived.extends + "'";
    if (chain.size() > static_cast<size_t>(kMaxExtendsDepth)) {
      return MakeError(where + ": extends chain deeper than " + std::to_string(kMaxExtendsDepth) +
                       ": " + sources("..."));
    }
    Result<Policy> base = LoadBase(derived, search_dirs);
    if (!base) return std::move(base).error().Context(where);
    std::string identity = IdentityOf(base->source);
    if (std::find(identities.begin(), identities.end(), identity) != identities.end()) {
      return MakeError(where + ": extends cycle: " + sources(base->source));
    }
    identities.push_back(std::move(identity));
    chain.push_back(std::move(*base));
  }

  std::vector<std::string> names;
  for (const Policy& policy : chain) names.push_back(policy.source);
  Policy merged = std::move(chain.back());
  for (size_t i = chain.size() - 1; i-- > 0;) {
    if (Status status = MergeInto(merged, chain[i]); !status) return status.error();
  }
  merged.version = kPolicyVersion;
  merged.extends.reset();
  merged.extends_mark = SourceMark{};
  merged.source = Join(names, " <- ");
  merged.chain = std::move(names);
  return merged;
}

}  // namespace gander::policies
