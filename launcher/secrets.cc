// The secrets of one run; see secrets.h.
#include "launcher/secrets.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <system_error>

#include "common/remove_tree.h"
#include "common/unique_fd.h"
#include "policies/parser.h"

namespace gander::launcher {
namespace {

int64_t WallNowMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

policies::ExpiryAction ActionOf(const policies::SecretRule& rule) {
  return rule.on_expiry.value_or(policies::ExpiryAction::kKill);
}

// A 0700 directory on a tmpfs for file-delivered secrets (never on disk where avoidable).
Result<std::string> MakeSecretsDir(const std::map<std::string, std::string>& env,
                                   const std::string& extension) {
  std::vector<std::string> bases;
  if (auto it = env.find("XDG_RUNTIME_DIR"); it != env.end() && it->second.starts_with('/')) {
    bases.push_back(it->second);
  }
  bases.insert(bases.end(), {"/dev/shm", "/tmp"});
  for (const std::string& base : bases) {
    if (access(base.c_str(), W_OK | X_OK) != 0) continue;
    std::string pattern = base + "/gander-secrets-" + extension + "-XXXXXX";
    if (mkdtemp(pattern.data())) return pattern;  // mkdtemp makes it 0700
  }
  return MakeError("no writable directory for file secrets ($XDG_RUNTIME_DIR, /dev/shm, /tmp)");
}

void Wipe(std::string& value) {
  explicit_bzero(value.data(), value.size());
  value.clear();
}

}  // namespace

int64_t ExpiryMs(const policies::SecretRule& rule, int64_t now_ms,
                 std::optional<int64_t> source_expiry_s) {
  int64_t expiry = 0;
  if (rule.ttl_s) expiry = now_ms + static_cast<int64_t>(*rule.ttl_s) * 1000;
  if (source_expiry_s) {
    int64_t source = *source_expiry_s * 1000;
    expiry = expiry == 0 ? source : std::min(expiry, source);
  }
  return expiry;
}

int64_t ActionTimeMs(const policies::SecretRule& rule, int64_t minted_ms, int64_t expiry_ms) {
  if (ActionOf(rule) != policies::ExpiryAction::kRefresh) return expiry_ms;
  int64_t lead = std::min<int64_t>(60'000, std::max<int64_t>(0, expiry_ms - minted_ms) / 10);
  return expiry_ms - lead;
}

Result<std::unique_ptr<SecretManager>> SecretManager::Load(
    const std::map<std::string, policies::SecretRule>& rules,
    const std::map<std::string, std::string>& launcher_env, const std::string& extension) {
  std::unique_ptr<SecretManager> manager(new SecretManager(launcher_env, extension));
  bool files = std::any_of(rules.begin(), rules.end(), [](const auto& entry) {
    return entry.second.as == policies::SecretDelivery::kFile;
  });
  if (files) {
    Result<std::string> dir = MakeSecretsDir(launcher_env, extension);
    if (!dir) return dir.error();
    manager->dir_ = std::move(*dir);
  }
  for (const auto& [name, rule] : rules) {
    auto secret = std::make_unique<Secret>();
    secret->name = name;
    secret->rule = rule;
    // On failure the manager's destructor revokes what was fetched before.
    if (Status fetched = manager->Fetch(*secret); !fetched) return fetched.error();
    if (rule.as == policies::SecretDelivery::kFile) {
      if (Status written = manager->WriteFile(*secret); !written) return written.error();
    }
    manager->secrets_.push_back(std::move(secret));
  }
  for (const auto& secret : manager->secrets_) {
    spdlog::debug("{}: secret {} loaded from {} (delivered as {}{})", extension, secret->name,
                  policies::ToString(secret->rule.from), policies::ToString(secret->rule.as),
                  secret->expiry_ms ? ", with a lifetime" : "");
  }
  return manager;
}

SecretManager::~SecretManager() {
  RevokeAll();  // joins the threads of the jobs too
  for (auto& secret : secrets_) {
    if (secret->timer_fd >= 0) close(secret->timer_fd);
    Wipe(secret->value);
  }
  for (auto& [name, value] : replaced_) Wipe(value);
  if (!dir_.empty()) RemoveTree(dir_);
}

Status SecretManager::Fetch(Secret& secret) {
  int64_t now = WallNowMs();  // the start's fetch: stopped if gander is told to end meanwhile
  return Accept(secret, now,
                FetchSecret(secret.name, secret.rule, launcher_env_, Values(),
                            /*stop_on_termination=*/true));
}

Status SecretManager::Accept(Secret& secret, int64_t now, Result<SecretValue> fetched) {
  if (!fetched) return fetched.error();
  int64_t expiry = ExpiryMs(secret.rule, now, fetched->expires_at);
  if (expiry != 0 && expiry <= WallNowMs()) {
    // It is a value all the same: revoke it (the caller keeps the previous one, if any).
    Revoke(secret.name, secret.rule, std::move(fetched->value));
    return MakeError("secret " + secret.name +
                     ": the source gave a value that has already expired");
  }
  if (!secret.value.empty()) replaced_.emplace_back(secret.name, secret.value);
  secret.value = std::move(fetched->value);
  secret.revoked = false;
  secret.expiry_ms = expiry;
  if (secret.timer_fd >= 0 && expiry != 0) Arm(secret, ActionTimeMs(secret.rule, now, expiry));
  return {};
}

// Written in place atomically: a temporary file in the same directory, then rename, so the
// extension reads either the old value or the new one, never a mix.
Status SecretManager::WriteFile(const Secret& secret) const {
  std::string path = dir_ + "/" + secret.name;
  std::string tmp = dir_ + "/." + secret.name + ".new";
  unlink(tmp.c_str());
  UniqueFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0400));
  if (!fd) return ErrnoError("secret " + secret.name + ": cannot create " + tmp);
  size_t done = 0;
  while (done < secret.value.size()) {
    ssize_t n = write(fd.get(), secret.value.data() + done, secret.value.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("secret " + secret.name + ": cannot write " + tmp);
    done += static_cast<size_t>(n);
  }
  fd.Reset();
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return ErrnoError("secret " + secret.name + ": cannot rename " + tmp + " to " + path);
  }
  return {};
}

std::map<std::string, std::string> SecretManager::Environment(bool use_namespaces) const {
  std::map<std::string, std::string> env;
  for (const auto& secret : secrets_) {
    if (secret->rule.as == policies::SecretDelivery::kFile) {
      env[secret->name + "_FILE"] = FilePath(secret->name, use_namespaces);
    } else {
      env[secret->name] = secret->value;
    }
  }
  return env;
}

std::string SecretManager::FilePath(const std::string& name, bool use_namespaces) const {
  return (use_namespaces ? std::string(kSecretsMountPoint) : dir_) + "/" + name;
}

Status SecretManager::AddToSandbox(sandbox::SandboxSpec& spec) const {
  if (dir_.empty()) return {};
  std::string inside = spec.use_namespaces ? kSecretsMountPoint : dir_;
  if (spec.use_namespaces) {
    if (Status added = AddMount(spec.mounts); !added) return added;
  }
  if (spec.landlock.abi > 0) spec.landlock.rules.push_back({inside, sandbox::landlock::kRead});
  return {};
}

Status SecretManager::AddMount(std::vector<sandbox::MountOp>& mounts) const {
  if (dir_.empty()) return {};
  for (const sandbox::MountOp& mount : mounts) {
    if (IsWithin(kSecretsMountPoint, mount.target)) {
      return MakeError(std::string("secrets delivered as files appear at ") + kSecretsMountPoint +
                       ", which the policy's mount of " + mount.target +
                       " would cover; grant paths below /run instead of /run itself");
    }
  }
  mounts.push_back({sandbox::MountOp::Kind::kBind, dir_, kSecretsMountPoint, /*writable=*/false,
                    /*executable=*/false});
  return {};
}

std::vector<std::pair<std::string, std::string>> SecretManager::Redactions() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& secret : secrets_) out.emplace_back(secret->name, secret->value);
  out.insert(out.end(), replaced_.begin(), replaced_.end());
  return out;
}

std::vector<std::string> SecretManager::Values() const {
  std::vector<std::string> values;
  for (const auto& [name, value] : Redactions()) values.push_back(value);
  return values;
}

std::vector<monitor::Watch> SecretManager::Watches() {
  std::vector<monitor::Watch> watches;
  int64_t now = WallNowMs();
  for (auto& owned : secrets_) {
    Secret& secret = *owned;
    if (secret.expiry_ms == 0 || secret.timer_fd >= 0) continue;
    secret.timer_fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
    if (secret.timer_fd < 0) {
      spdlog::error("{}: secret {}: timerfd_create: {}; its expiry is not watched", extension_,
                    secret.name, strerror(errno));
      continue;
    }
    Arm(secret, ActionTimeMs(secret.rule, now, secret.expiry_ms));
    watches.push_back({secret.timer_fd, [this, &secret](short) { return OnTimer(secret); }});
  }
  if (!watches.empty() && !jobs_done_) {
    jobs_done_.Reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (jobs_done_) {
      watches.push_back({jobs_done_.get(), [this](short) {
                           uint64_t count;
                           while (read(jobs_done_.get(), &count, sizeof(count)) > 0) {
                           }
                           FinishJobs(false);
                           return true;
                         }});
    }
  }
  return watches;
}

void SecretManager::RunInBackground(std::function<void()> work, std::function<void()> finish) {
  if (jobs_done_ && !stopping_) {
    auto job = std::make_unique<Job>();
    job->finish = std::move(finish);
    Job* raw = job.get();
    const int done_fd = jobs_done_.get();
    try {
      job->thread = std::thread([raw, done_fd, work = std::move(work)] {
        // gander's own signals stay with the supervisor's signalfd.
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, nullptr);
        work();
        raw->done.store(true, std::memory_order_release);
        uint64_t one = 1;
        while (write(done_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
        }
      });
      jobs_.push_back(std::move(job));
      return;
    } catch (const std::system_error& e) {
      spdlog::warn("{}: no thread for a secret's command ({}): running it in the loop", extension_,
                   e.what());
      finish = std::move(job->finish);
    }
  }
  work();
  finish();
}

void SecretManager::FinishJobs(bool wait) {
  // A finish may start another job (a refresh revokes): look again until none is left.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (!wait && !jobs_[i]->done.load(std::memory_order_acquire)) continue;
      std::unique_ptr<Job> job = std::move(jobs_[i]);
      jobs_.erase(jobs_.begin() + static_cast<std::ptrdiff_t>(i));
      job->thread.join();
      job->finish();
      progress = true;
      break;
    }
  }
}

void SecretManager::Arm(Secret& secret, int64_t at_ms) {
  itimerspec spec{};
  at_ms = std::max<int64_t>(at_ms, 1);
  spec.it_value.tv_sec = at_ms / 1000;
  spec.it_value.tv_nsec = (at_ms % 1000) * 1000000;
  timerfd_settime(secret.timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);
}

bool SecretManager::OnTimer(Secret& secret) {
  uint64_t expirations = 0;
  if (read(secret.timer_fd, &expirations, sizeof(expirations)) != sizeof(expirations)) {
    return true;  // spurious wake-up
  }
  const std::string& name = secret.name;
  switch (ActionOf(secret.rule)) {
    case policies::ExpiryAction::kWarn:
      spdlog::warn("{}: secret {} expired (on_expiry: warn); the extension keeps using it",
                   extension_, name);
      Report("secret " + name + " expired (on_expiry: warn)");
      return false;
    case policies::ExpiryAction::kKill:
      spdlog::error("{}: secret {} expired (on_expiry: kill): stopping the extension", extension_,
                    name);
      Report("secret " + name + " expired (on_expiry: kill): stopping the extension");
      Stop();
      return false;
    case policies::ExpiryAction::kRefresh:
      if (secret.rule.as == policies::SecretDelivery::kEnv && !hooks.restart) {
        spdlog::warn(
            "{}: secret {} expired (on_expiry: refresh): refreshing an environment secret needs "
            "the restart behind the relay, which this build does not have; treated as warn "
            "(deliver it `as: file` to refresh it in place)",
            extension_, name);
        Report("secret " + name + " expired (on_expiry: refresh, not possible: treated as warn)");
        return false;
      }
      Refresh(secret);
      return true;
  }
  return false;
}

// Mints a new value off the loop; Refreshed() takes it.
void SecretManager::Refresh(Secret& secret) {
  if (secret.minting) return;
  secret.minting = true;
  const int64_t now = WallNowMs();
  auto fetched = std::make_shared<Result<SecretValue>>(MakeError("not fetched"));
  RunInBackground([this, fetched, name = secret.name, rule = secret.rule,
                   known = Values()] { *fetched = FetchSecret(name, rule, launcher_env_, known); },
                  [this, fetched, &secret, now] {
                    secret.minting = false;
                    Refreshed(secret, now, std::move(*fetched));
                  });
}

// Takes a minted value: a file is rewritten in place; an environment secret needs the
// extension restarted behind the relay (the old value is revoked after the restart, see
// OnRestarted). If minting failed, it is tried again (every few seconds) until the old value
// expires; then the extension is stopped.
void SecretManager::Refreshed(Secret& secret, int64_t minted_ms, Result<SecretValue> fetched) {
  const std::string& name = secret.name;
  if (stopping_) {  // the extension is gone: nothing to refresh
    if (fetched) Revoke(name, secret.rule, std::move(fetched->value));
    return;
  }
  std::string old_value = secret.value;  // revoked once the new one is in place
  Status accepted = Accept(secret, minted_ms, std::move(fetched));
  if (!accepted) {
    const int64_t now = WallNowMs();
    if (secret.expiry_ms - now > 1000) {
      int64_t retry = now + std::min<int64_t>(5000, (secret.expiry_ms - now) / 2);
      spdlog::warn("{}: {}; trying again in {} ms", extension_, accepted.error().Describe(),
                   retry - now);
      Report("secret " + name + " refresh failed; trying again");
      Arm(secret, retry);
    } else {
      spdlog::error("{}: {}; the old value expired: stopping the extension", extension_,
                    accepted.error().Describe());
      Report("secret " + name + " refresh failed: stopping the extension");
      Stop();
    }
    Wipe(old_value);
    return;
  }
  if (secret.value == old_value) {
    spdlog::info("{}: secret {} refreshed: the source gave the same value", extension_, name);
    Wipe(old_value);
    return;
  }
  if (hooks.values_changed) hooks.values_changed();  // redact the new value before it can show
  if (secret.rule.as == policies::SecretDelivery::kFile) {
    if (Status written = WriteFile(secret); !written) {
      spdlog::error("{}: {}: stopping the extension", extension_, written.error().Describe());
      Report("secret " + name + " refresh failed: stopping the extension");
      Stop();
    } else {
      spdlog::info("{}: secret {} refreshed (file rewritten)", extension_, name);
      Report("secret " + name + " refreshed (file rewritten)");
    }
    Revoke(name, secret.rule, std::move(old_value));
    return;
  }
  spdlog::info("{}: secret {} refreshed: restarting the extension behind the relay", extension_,
               name);
  Report("secret " + name + " refreshed (restarting the extension)");
  awaiting_restart_.emplace_back(&secret, std::move(old_value));
  hooks.restart("secret " + name + " refreshed");
}

void SecretManager::OnRestarted() {
  for (auto& [secret, value] : awaiting_restart_) {
    Revoke(secret->name, secret->rule, std::move(value));
  }
  awaiting_restart_.clear();
}

void SecretManager::Revoke(const std::string& name, const policies::SecretRule& rule,
                           std::string value) {
  if (rule.revoke.empty() || value.empty()) {
    Wipe(value);
    return;
  }
  auto timeout =
      std::chrono::milliseconds(rule.timeout_ms.value_or(policies::kDefaultSecretTimeoutMs));
  // Shared by the two halves; the finish wipes it (it may run long after the caller returned).
  auto held = std::make_shared<std::string>(std::move(value));
  Wipe(value);
  auto run = std::make_shared<Result<HostCommandResult>>(MakeError("not run"));
  RunInBackground(
      [run, held, script = rule.revoke, timeout,
       envp = CommandEnvironment(launcher_env_, {{"GANDER_SECRET", name}})] {
        *run = RunHostCommand(script, *held, timeout, envp);
      },
      [this, run, held, name, timeout] {
        std::string problem;
        if (!*run) {
          problem = run->error().Describe();
        } else if ((*run)->timed_out) {
          problem = "timed out after " +
                    policies::FormatDuration(static_cast<uint64_t>(timeout.count()) / 1000);
        } else if ((*run)->status != 0) {
          std::vector<std::string> values = Values();
          values.push_back(*held);
          std::string err = Scrub((*run)->err, values);
          if (err.size() > 400) err = "..." + err.substr(err.size() - 400);
          std::replace(err.begin(), err.end(), '\n', ' ');
          problem = "exited with status " + std::to_string((*run)->status) +
                    (err.empty() ? "" : ": " + err);
        }
        if (*run) {
          Wipe((*run)->out);
          Wipe((*run)->err);
        }
        Wipe(*held);
        if (problem.empty()) {
          spdlog::info("{}: secret {}: a value was revoked", extension_, name);
          Report("secret " + name + " revoked");
        } else {
          spdlog::warn("{}: secret {}: revoke failed: {}", extension_, name, problem);
          Report("secret " + name + " revoke failed");
        }
      });
}

void SecretManager::RevokeAll() {
  stopping_ = true;  // what follows runs here and now
  FinishJobs(true);
  OnRestarted();  // a restart that never came: the extension is gone all the same
  for (auto& secret : secrets_) {
    if (secret->revoked) continue;
    secret->revoked = true;
    Revoke(secret->name, secret->rule, secret->value);
  }
}

void SecretManager::Protect() { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

void SecretManager::Report(const std::string& detail) const {
  if (hooks.report) hooks.report(detail);
}

void SecretManager::Stop() const {
  if (hooks.stop) {
    hooks.stop();
  } else {
    kill(getpid(), SIGTERM);  // the supervisor's signalfd: its shutdown sequence
  }
}

}  // namespace gander::launcher
