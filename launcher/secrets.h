// The secrets of one run (policy `secrets`): fetched from their sources before the sandbox
// starts, delivered into it (environment variables, or files under /run/secrets), watched for
// expiry from the supervisor loop (a timerfd per secret), refreshed, reported or ended at
// expiry, and revoked when the extension ends.
//
// gander never writes a value anywhere but into the sandbox: not in logs, audit events, errors
// or the argv of the commands it runs (`revoke` gets the value on stdin).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "launcher/sandbox.h"
#include "monitor/supervisor.h"
#include "policies/policy.h"

namespace gander::launcher {

// Where file-delivered secrets appear inside a sandbox with a mount namespace.
inline constexpr const char* kSecretsMountPoint = "/run/secrets";

class SecretManager {
 public:
  // What the launcher connects. Each may stay empty.
  struct Hooks {
    // Restart the extension behind the stdio relay with a fresh environment (built again from
    // Environment()); true when it did. Without it, refreshing an environment secret is
    // reported and treated as on_expiry: warn.
    std::function<bool()> restart;
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

  // File delivery: a read-only bind of the directory at /run/secrets (with namespaces) and a
  // Landlock read rule for it. An error when the policy's own mounts cover /run/secrets.
  Status AddToSandbox(SandboxSpec& spec) const;

  // (name, value) of every value of this run, current and replaced, for the relay's redaction.
  std::vector<std::pair<std::string, std::string>> Redactions() const;

  // One timerfd watch per secret with a lifetime, for SupervisorOptions::watches.
  std::vector<monitor::Watch> Watches();

  // No core dump, no ptrace or /proc/PID/mem by other processes of the user: prctl
  // PR_SET_DUMPABLE 0 (StartSandbox lifts it around its clone, see sandbox.cc).
  static void Protect();

  // Runs `revoke` for every value not yet revoked (each with its timeout). Idempotent.
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
  };

  SecretManager(std::map<std::string, std::string> launcher_env, std::string extension)
      : launcher_env_(std::move(launcher_env)), extension_(std::move(extension)) {}

  Status Fetch(Secret& secret);
  Status WriteFile(const Secret& secret) const;
  void Arm(Secret& secret, int64_t at_ms);
  bool OnTimer(Secret& secret);
  void Refresh(Secret& secret);
  void Revoke(const std::string& name, const policies::SecretRule& rule, const std::string& value);
  void Report(const std::string& detail) const;
  void Stop() const;
  std::vector<std::string> Values() const;

  std::map<std::string, std::string> launcher_env_;
  std::string extension_;
  std::string dir_;  // host directory of file-delivered secrets; "" when none
  std::vector<std::unique_ptr<Secret>> secrets_;
  std::vector<std::pair<std::string, std::string>> replaced_;  // old values, for redaction
};

// When a value minted at `now_ms` stops being good: the earlier of now + ttl and the source's
// expiry; 0 when it has no lifetime. Pure (the unit tests' clock).
int64_t ExpiryMs(const policies::SecretRule& rule, int64_t now_ms,
                 std::optional<int64_t> source_expiry_s);

// When to act on an expiry: the expiry itself for kill and warn; for refresh a little before
// (a tenth of the lifetime, at most 60 s), so the new value is in place when the old one ends.
int64_t ActionTimeMs(const policies::SecretRule& rule, int64_t minted_ms, int64_t expiry_ms);

}  // namespace gander::launcher
