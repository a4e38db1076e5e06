#include "launcher/policy_learn.h"

#include <limits.h>
#include <seccomp.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <iostream>
#include <set>

#include "launcher/run.h"
#include "learn/audit_reader.h"
#include "learn/oci_seccomp.h"
#include "learn/suggest.h"
#include "policies/diff.h"
#include "policies/expand.h"
#include "sandbox/environment.h"

namespace gander::launcher {
namespace {

constexpr int kExitUncovered = 1;
constexpr int kExitBadInput = 2;

bool IsFile(const std::string& name) {
  return name.find('/') != std::string::npos || name.ends_with(".yaml");
}

Result<policies::Policy> Load(const std::string& name) {
  return IsFile(name) ? LoadEffectivePolicy(name, "") : LoadEffectivePolicy("", name);
}

std::string Absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) != nullptr) return buf;
  return path;
}

// How many syscalls gander's filter allows without an allowlist: every native syscall but the
// floor's unconditional entries.
size_t DefaultSyscallCount() {
  std::set<std::string> always;
  for (const auto& d : policies::DeniedSyscalls({})) {
    if (d.any_of.empty()) always.emplace(d.name);
  }
  size_t by_default = 0;
  for (int nr = 0; nr < 1024; ++nr) {
    char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    if (name == nullptr) continue;
    if (!always.contains(name)) ++by_default;
    free(name);
  }
  return by_default;
}

int PrintOciSeccomp(const learn::Learned& learned) {
  if (learned.census_runs == 0 || learned.syscalls.empty()) {
    spdlog::error(
        "policy suggest: no syscall census in the logs read (learn with `gander run --mode "
        "learn`)");
    return kExitBadInput;
  }
  if (learned.census_runs < learned.runs) {
    spdlog::warn("oci-seccomp: {} of {} runs in the logs counted only the watched syscalls",
                 learned.runs - learned.census_runs, learned.runs);
  }
  const auto floor = policies::DeniedSyscalls({});
  auto profile = learn::OciSeccompProfile(learned, floor, learn::NativeOciArch());
  for (const auto& line : profile.left_out) spdlog::warn("oci-seccomp: left out: {}", line);
  std::cerr << "gander: oci-seccomp: " << profile.allowed
            << " syscalls allowed; gander's default filter allows " << DefaultSyscallCount()
            << "\n";
  std::cout << profile.json;
  return 0;
}

}  // namespace

int PolicySuggest(const SuggestOptions& o) {
  if (o.name.empty() && o.from.empty()) {
    spdlog::error("policy suggest: name the extension, or give its audit log with --from");
    return kExitBadInput;
  }
  std::vector<std::string> from = o.from;
  if (from.empty()) from.push_back(DefaultAuditLogPath(o.name));
  auto learned = learn::ReadAuditLogs(from, o.name);
  if (!learned) {
    spdlog::error("policy suggest: {}", learned.error().Describe());
    return kExitBadInput;
  }
  if (o.format == "oci-seccomp" && o.check.empty()) return PrintOciSeccomp(*learned);
  auto env = sandbox::CurrentEnvironment();
  // Paths under a learning run's workspace are read as workspace paths of this one.
  std::string workspace = !o.workspace.empty()           ? Absolute(o.workspace)
                          : !learned->workspaces.empty() ? learned->workspaces.back()
                                                         : Absolute(".");
  learn::RebaseWorkspaces(*learned, workspace);
  for (const auto& [path, needs] : learned->files) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) learned->directories.insert(path);
  }
  const std::string home = env.contains("HOME") ? Absolute(env["HOME"]) : "/";
  policies::ExpansionContext ctx{workspace, home, env, DataDirectory(o.name)};

  const std::string& policy_name = o.check.empty() ? o.base : o.check;
  auto merged = Load(policy_name);
  if (!merged) {
    spdlog::error("{}", merged.error().Describe());
    return kExitBadInput;
  }
  auto expanded = policies::Expand(*merged, ctx);
  if (!expanded) {
    spdlog::error("{}", expanded.error().Describe());
    return kExitBadInput;
  }
  if (learned->lines == 0) {
    spdlog::warn("policy suggest: no audit log line of extension '{}' in the logs read", o.name);
  }

  if (!o.check.empty()) {
    auto coverage = learn::CheckCoverage(*learned, *expanded, workspace, home);
    for (const auto& line : coverage.refused) {
      std::cout << "refused (deny rule): " << line << "\n";
    }
    for (const auto& line : coverage.uncovered) std::cout << "not covered: " << line << "\n";
    if (!coverage.uncovered.empty()) {
      std::cerr << "gander: " << o.check << " does not cover " << coverage.uncovered.size()
                << " learned behaviours of " << (o.name.empty() ? "the extension" : o.name) << "\n";
      return kExitUncovered;
    }
    std::cout << o.check << ": covers what was learned (" << learned->lines << " lines)\n";
    return 0;
  }

  learn::SuggestContext sctx;
  sctx.extension = o.name.empty() ? "--from ..." : o.name;
  sctx.extends = IsFile(o.base) ? Absolute(o.base) : o.base;
  sctx.base = std::move(expanded).value();
  sctx.workspace = workspace;
  sctx.home = home;
  sctx.default_syscalls = DefaultSyscallCount();
  for (const auto& f : from) {
    for (const auto& file : learn::RotatedFiles(f)) sctx.sources.push_back(file);
  }
  std::cout << learn::SuggestPolicy(*learned, sctx);
  if (learned->census_runs > 0) {
    size_t listed = 0;
    for (const auto& s : learn::SuggestSyscalls(*learned, sctx.base)) listed += s.not_added.empty();
    std::cerr << "gander: policy suggest: syscalls.allow lists " << listed
              << " syscalls; gander's default filter allows " << sctx.default_syscalls << "\n";
  }
  return 0;
}

int PolicyDiff(const std::string& old_name, const std::string& new_name) {
  auto old_policy = Load(old_name);
  if (!old_policy) {
    spdlog::error("{}", old_policy.error().Describe());
    return kExitBadInput;
  }
  auto new_policy = Load(new_name);
  if (!new_policy) {
    spdlog::error("{}", new_policy.error().Describe());
    return kExitBadInput;
  }
  auto lines = policies::DiffRules(*old_policy, *new_policy);
  for (const auto& line : lines) std::cout << line << "\n";
  return lines.empty() ? 0 : 1;
}

}  // namespace gander::launcher
