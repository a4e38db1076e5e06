// The first stages of `gander run`: from the options to everything a start needs (prepare),
// and the policy compiled once into what the monitor and the broker match against (compile),
// before any clone. Each start and restart copies the compiled rules; none compiles them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "launcher/command.h"
#include "launcher/run.h"
#include "launcher/run/stage.h"
#include "launcher/secrets.h"
#include "monitor/path_classifier.h"
#include "policies/expand.h"
#include "policies/network_matcher.h"
#include "sandbox/cgroup_limit.h"
#include "sandbox/cgroup_view.h"
#include "sandbox/environment.h"
#include "sandbox/workspace_guard.h"

namespace gander::launcher {

// The policy in the forms the watchers use, built in the compile stage.
struct CompiledPolicy {
  // The host's cgroup mounts and where a run's cgroup can be made, read once per run.
  std::vector<sandbox::CgroupMount> host_cgroups;
  sandbox::CgroupPlace host_cgroup_place;
  bool host_cgroups_read = false;
  sandbox::CgroupPlace cgroup_place;  // host_cgroup_place, or none when the run needs no cgroup
  // This start's cgroup (sandbox/cgroup_limit.h), a new name at every compile, and the host's
  // mounts pointed at it: the plan shows them, the classifier calls them system.
  std::string cgroup_name;
  std::vector<sandbox::CgroupMount> cgroups;
  // The broker's: what the sandbox enforces, and the policy on trial (monitor and learn mode).
  policies::NetworkMatcher network = policies::NetworkMatcher::Everything();
  std::optional<policies::NetworkMatcher> network_trial;
  // The path classifier's, for the mode the rules were compiled for (`namespaces`: what the
  // sandbox shows of its own cgroup differs).
  bool namespaces = true;
  monitor::ClassifierRules files{std::vector<monitor::ClassifierRule>{}};
  std::optional<monitor::ClassifierRules> files_trial;
};

// Everything a start attempt needs that does not depend on namespaces being available.
struct Prepared {
  std::string name;
  std::string workspace;
  std::string home;
  policies::ExpandedPolicy policy;
  ResolvedCommand command;
  std::vector<std::string> argv;
  std::map<std::string, std::string> environ;
  int landlock_abi = 0;
  bool notify = false;  // seccomp user notification available
  policies::FilesWatch files = policies::FilesWatch::kOpens;
  RunMode mode = RunMode::kEnforce;
  std::optional<policies::ExpandedPolicy> trial;  // --mode monitor: the policy on trial
  std::vector<std::string> protected_paths;       // ProtectedHomePaths: never writable
  // The workspace's git and direnv entries (sandbox/workspace_guard.h): bound read-only where
  // there is a mount view, and what they were at the start, put back at the end or a restart.
  std::vector<std::string> read_only_entries;
  sandbox::WorkspaceSnapshot workspace_snapshot;
  bool workspace_writable = true;  // false: a $HOME workspace NarrowHomeWrites made read-only
  std::unique_ptr<SecretManager> secrets_owner;  // revoked when the run ends
  SecretManager* secrets = nullptr;              // the policy's secrets, fetched
  policies::Backend backend = policies::Backend::kNative;
  std::string audit_log;     // --audit-log, else the policy's, else DefaultAuditLogPath
  std::string policy_label;  // how a refusal notice names the policy (launcher/denial_notice.h)
  CompiledPolicy compiled;
  // Readable while gander is told to end (monitor::TerminationSignalFd): the sandbox's set-up
  // waits watch it (sandbox::SandboxSpec::stop_fd).
  UniqueFd stop_signals;

  bool gvisor() const { return backend == policies::Backend::kGvisor; }
  bool learn() const { return mode == RunMode::kLearn; }
};

// Stage "prepare": the workspace, the policy (loaded, expanded, put on trial or widened for
// learning, gander's own directories denied), the command, the kernel's features, the secrets.
std::optional<Stop> Prepare(const RunOptions& options, Prepared& p);

// Stage "compile": the network matchers and the classifier rules, for a sandbox with or
// without namespaces. Run again only when the start falls back to no namespaces.
std::optional<Stop> CompilePolicy(Prepared& p, bool use_namespaces);

// mkdir -p of a file's parents; errors are left to the open that follows.
void MakeParentDirs(const std::string& file);

}  // namespace gander::launcher
