// The secrets of one run (policy `secrets`): fetched from their sources before the sandbox
// starts, delivered into it (environment variables, or files under /run/secrets), watched for
// expiry from the supervisor loop (a timerfd per secret), refreshed, reported or ended at
// expiry, and revoked when the extension ends.
//
// Once the supervisor loop runs, the host commands of a refresh (the minting command) and of a
// revoke run on a thread each, so the stdio relay keeps forwarding while they run; the loop
// learns of their end through an eventfd and finishes the work on its own thread.
//
// gander never writes a value anywhere but into the sandbox: not in logs, audit events, errors
// or the argv of the commands it runs (`revoke` gets the value on stdin).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "launcher/secret_source.h"
#include "monitor/supervisor.h"
#include "policies/policy.h"
#include "sandbox/sandbox.h"

namespace gander::launcher {

// Where file-delivered secrets appear inside a sandbox with a mount namespace.
inline constexpr const char* kSecretsMountPoint = "/run/secrets";

class SecretManager {
 public:
  // What the launcher connects. Each may stay empty.
  struct Hooks {
    // Asks for the extension to be restarted behind the stdio relay with a fresh environment
    // (built again from Environment()), at the end of the loop turn; the launcher then calls
    // OnRestarted(). Without it, refreshing an environment secret is reported and treated as
    // on_expiry: warn.
    std::function<void(const std::string& reason)> restart;
    // An audit event about a secret (a lifecycle detail); never carries a value.
    std::function<void(const std::string& detail)> report;
    // The values changed (a refresh): hand Redactions() to the relay again.
    std::function<void()> values_changed;
    // Ends the extension (on_expiry: kill, or a refresh that cannot mint in time). Default:
    // SIGTERM to gander itself, which the supervisor loop turns into its shutdown sequence.
    std::function<void()> stop;
  };

  // Fetches every secret (in name order). Any failure is an error naming the secret and what
  // went wrong, never its value; what was already fetched is revoked. File-delivered secrets
  // are written into a fresh 0700 directory on a tmpfs ($XDG_RUNTIME_DIR, else /dev/shm).
  static Result<std::unique_ptr<SecretManager>> Load(
      const std::map<std::string, policies::SecretRule>& rules,
      const std::map<std::string, std::string>& launcher_env, const std::string& extension);

  // Revokes what is not revoked yet, wipes the values and removes the file directory.
  ~SecretManager();
  SecretManager(const SecretManager&) = delete;
  SecretManager& operator=(const SecretManager&) = delete;

  bool empty() const { return secrets_.empty(); }

  // For BuildEnvironment: NAME -> value (env delivery), NAME_FILE -> the file's path as the
  // extension sees it (file delivery: /run/secrets/NAME, or the host directory's path without
  // a mount namespace).
  std::map<std::string, std::string> Environment(bool use_namespaces) const;
  // A file-delivered secret's path as the extension sees it (the NAME_FILE of Environment).
  std::string FilePath(const std::string& name, bool use_namespaces) const;

  // File delivery: a read-only bind of the directory at /run/secrets (with namespaces) and a
  // Landlock read rule for it. An error when the policy's own mounts cover /run/secrets.
  Status AddToSandbox(sandbox::SandboxSpec& spec) const;
  // The read-only bind of the directory at /run/secrets alone (the gVisor bundle's mounts).
  Status AddMount(std::vector<sandbox::MountOp>& mounts) const;

  // (name, value) of every value of this run, current and replaced, for the relay's redaction.
  std::vector<std::pair<std::string, std::string>> Redactions() const;

  // One timerfd watch per secret with a lifetime, and the eventfd of the commands run off the
  // loop, for SupervisorOptions::watches.
  std::vector<monitor::Watch> Watches();

  // The restart asked for by a refresh happened (or failed, and the extension is gone): the
  // values it replaced are revoked now.
  void OnRestarted();

  // No core dump, no ptrace or /proc/PID/mem by other processes of the user: prctl
  // PR_SET_DUMPABLE 0 (StartSandbox lifts it around its clone, see sandbox.cc).
  static void Protect();

  // Waits for the commands still running off the loop, then runs `revoke` for every value not
  // yet revoked (each with its timeout). Idempotent; call it once the loop has ended.
  void RevokeAll();

  Hooks hooks;

 private:
  struct Secret {
    std::string name;
    policies::SecretRule rule;
    std::string value;
    int64_t expiry_ms = 0;  // wall clock, ms since the epoch; 0: no lifetime
    int timer_fd = -1;
    bool revoked = false;
    bool minting = false;  // a refresh's command is running
  };

  // A host command run off the supervisor loop: `work` on a thread of its own, then `finish` on
  // the loop's thread once the eventfd said it is done.
  struct Job {
    std::thread thread;
    std::atomic<bool> done{false};
    std::function<void()> finish;
  };

  SecretManager(std::map<std::string, std::string> launcher_env, std::string extension)
      : launcher_env_(std::move(launcher_env)), extension_(std::move(extension)) {}

  Status Fetch(Secret& secret);
  // Takes a fetched value (minted at `minted_ms`) as the secret's current one.
  Status Accept(Secret& secret, int64_t minted_ms, Result<SecretValue> fetched);
  Status WriteFile(const Secret& secret) const;
  void Arm(Secret& secret, int64_t at_ms);
  bool OnTimer(Secret& secret);
  void Refresh(Secret& secret);
  void Refreshed(Secret& secret, int64_t minted_ms, Result<SecretValue> fetched);
  // Runs `revoke` with `value` on its stdin: off the loop while it runs, else here and now.
  void Revoke(const std::string& name, const policies::SecretRule& rule, std::string value);
  // Off the loop (a thread) once Watches() made the eventfd and until RevokeAll; else inline.
  void RunInBackground(std::function<void()> work, std::function<void()> finish);
  // The loop's side of the eventfd: finishes the jobs that are done (all, waiting, if `wait`).
  void FinishJobs(bool wait);
  void Report(const std::string& detail) const;
  void Stop() const;
  std::vector<std::string> Values() const;

  std::map<std::string, std::string> launcher_env_;
  std::string extension_;
  std::string dir_;  // host directory of file-delivered secrets; "" when none
  std::vector<std::unique_ptr<Secret>> secrets_;
  std::vector<std::pair<std::string, std::string>> replaced_;  // old values, for redaction
  // Values replaced by a refresh, revoked once the restart it asked for happened.
  std::vector<std::pair<const Secret*, std::string>> awaiting_restart_;
  std::vector<std::unique_ptr<Job>> jobs_;
  UniqueFd jobs_done_;     // eventfd: a job ended
  bool stopping_ = false;  // RevokeAll began: no more background work
};

// When a value minted at `now_ms` stops being good: the earlier of now + ttl and the source's
// expiry; 0 when it has no lifetime. Pure (the unit tests' clock).
int64_t ExpiryMs(const policies::SecretRule& rule, int64_t now_ms,
                 std::optional<int64_t> source_expiry_s);

// When to act on an expiry: the expiry itself for kill and warn; for refresh a little before
// (a tenth of the lifetime, at most 60 s), so the new value is in place when the old one ends.
int64_t ActionTimeMs(const policies::SecretRule& rule, int64_t minted_ms, int64_t expiry_ms);

}  // namespace gander::launcher
