// `gander run`: from the command line to a running, supervised sandbox and its exit status.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "policies/policy.h"
#include "policies/watched_syscalls.h"
#include "sandbox/isolation.h"

namespace gander::launcher {

// Exit statuses of gander itself (anything else is the extension's).
inline constexpr int kExitUsage = 2;          // bad arguments or policy: nothing started
inline constexpr int kExitSetupFailed = 125;  // the sandbox could not be built
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;

enum class RunMode {
  kEnforce,  // the policy, enforced
  kMonitor,  // the default profile enforced; the policy's extra restrictions recorded as
             // would_deny (policies/trial.h)
  kLearn,    // every syscall counted by name, every file access logged (for baselining)
};
const char* ModeName(RunMode mode);

// Where events go (docs/collector.md): to the collector, which counts them and writes the
// audit log, or to the audit log directly.
enum class CollectorUse {
  kAuto,     // connect to the collector, starting one when none runs
  kConnect,  // connect when one runs (a systemd unit), never start one
  kOff,      // no collector: write the audit log directly, no metrics
};

struct RunOptions {
  std::string policy_file;          // --policy; empty: use `profile`
  std::string profile = "default";  // --profile
  std::string name;                 // --name; empty: derived (see DefaultExtensionName)
  std::string workspace;            // --workspace; empty: the current directory
  std::optional<sandbox::IsolationLevel> require;
  bool no_namespaces = false;  // run with Landlock + seccomp only
  // --allow-home-write: a workspace or write grant that is $HOME or an ancestor of it stays
  // writable (sandbox/home_guard.h); without it, it is shown read-only.
  bool allow_home_write = false;
  // The install sandbox of launcher/install/: every event is marked install (Event).
  bool install_phase = false;
  RunMode mode = RunMode::kEnforce;
  std::optional<policies::FilesWatch> files;     // --files: overrides the policy's monitor.files
  std::string audit_log;                         // --audit-log; empty: policy, else the state dir
  CollectorUse collector = CollectorUse::kAuto;  // --collector
  std::optional<policies::Backend> backend;      // --backend; unset: the policy's
  std::vector<std::string> command;
  // Goose's side of the stdio relay; the install phase (launcher/install/) points them elsewhere.
  int client_in = 0, client_out = 1;
  // Every access in the private tmpfs over $HOME goes to the audit log, not only the notable
  // ones: the install phase, where package scripts reaching for ~ is the news.
  bool log_home = false;
};

// Where the audit log goes when neither --audit-log nor the policy says:
// $XDG_STATE_HOME/gander/audit/NAME.jsonl (default ~/.local/state/gander/audit/NAME.jsonl).
std::string DefaultAuditLogPath(const std::string& name);

// The extension's private, persistent data directory, the policies' ${DATA}:
// $XDG_DATA_HOME/gander/data/NAME (default ~/.local/share/gander/data/NAME). Outside the
// install cache (read-only to the extension) and apart from every other extension's; kept
// across runs, so a server's state (server-memory's graph) survives restarts.
std::string DataDirectory(const std::string& name);

// The user's policy directories, searched before the shipped profiles:
// $XDG_CONFIG_HOME/gander/policies (or ~/.config/gander/policies).
std::vector<std::string> UserPolicyDirs();

// --policy FILE or --profile NAME, with `extends` merged in (profiles from UserPolicyDirs(),
// then PREFIX/share/gander/profiles of an installed gander, then the built-in ones), refused when
// its own `backend` cannot honour it (policies/backend.h).
Result<policies::Policy> LoadEffectivePolicy(const std::string& policy_file,
                                             const std::string& profile);

// The extension's name when --name is absent: the name gander was invoked as when that is a
// symlink to gander (so Goose names the extension after it), else the command's basename.
std::string DefaultExtensionName(const std::string& argv0, const std::string& command);

// Runs the extension; returns gander's exit status. Errors are printed on stderr.
int Run(const RunOptions& options);

}  // namespace gander::launcher
