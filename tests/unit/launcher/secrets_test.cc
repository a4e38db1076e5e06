// SecretManager (launcher/secrets.h): loading, delivery, expiry actions, refresh and revoke,
// driven through its timer watches without a sandbox.
#include "launcher/secrets.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace gander::launcher {
namespace {

using policies::ExpiryAction;
using policies::SecretDelivery;
using policies::SecretRule;
using policies::SecretSource;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

// A rule set field by field (designated initializers warn about the fields left out).
SecretRule Rule(SecretSource from, const std::function<void(SecretRule&)>& edit = {}) {
  SecretRule rule;
  rule.from = from;
  if (edit) edit(rule);
  return rule;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class SecretManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("gander-secrets-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    env_ = {{"PATH", "/usr/bin:/bin"}, {"XDG_RUNTIME_DIR", dir_.string()}};
    // Mints numbered tokens; the revoke script appends what it gets on stdin to a file.
    mint_ = "n=$(cat " + (dir_ / "n").string() + " 2>/dev/null || echo 0); n=$((n+1)); echo $n > " +
            (dir_ / "n").string() + "; echo tok-$n";
    revoke_ = "cat >> " + (dir_ / "revoked").string() + "; echo >> " + (dir_ / "revoked").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Waits for one timer of `watches` and runs its callback.
  static bool FireOne(std::vector<monitor::Watch>& watches, int timeout_ms) {
    std::vector<pollfd> fds;
    for (const auto& w : watches) fds.push_back({w.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return false;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents) return watches[i].on_ready(fds[i].revents);
    }
    return false;
  }

  // A supervisor loop in small: runs the callbacks of `watches` as their fds get ready (the
  // timers, and the eventfd of the commands run off the loop) until `done` or the time limit.
  static bool LoopUntil(std::vector<monitor::Watch>& watches, const std::function<bool()>& done,
                        int limit_ms = 10000) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
    while (!done() && std::chrono::steady_clock::now() < end) {
      std::vector<pollfd> fds;
      for (const auto& w : watches) fds.push_back({w.fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 100) <= 0) continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents && !watches[i].on_ready(fds[i].revents)) watches[i].fd = -1;
      }
    }
    return done();
  }

  fs::path dir_;
  std::map<std::string, std::string> env_;
  std::string mint_, revoke_;
};

TEST_F(SecretManagerTest, LoadsAndDeliversAsEnvAndFile) {
  env_["GH"] = "ghp-1234";
  std::map<std::string, SecretRule> rules = {
      {"GITHUB_TOKEN", Rule(SecretSource::kEnv, [](auto& r) { r.env_name = "GH"; })},
      {"MINTED", Rule(SecretSource::kCommand, [&](auto& r) {
         r.run = mint_;
         r.as = SecretDelivery::kFile;
       })}};
  auto m = SecretManager::Load(rules, env_, "ext");
  ASSERT_TRUE(m.ok()) << m.error().Describe();
  auto with_ns = (*m)->Environment(true);
  EXPECT_EQ(with_ns.at("GITHUB_TOKEN"), "ghp-1234");
  EXPECT_EQ(with_ns.at("MINTED_FILE"), "/run/secrets/MINTED");
  EXPECT_FALSE(with_ns.contains("MINTED"));
  std::string host_file = (*m)->Environment(false).at("MINTED_FILE");
  EXPECT_TRUE(host_file.starts_with(dir_.string() + "/gander-secrets-ext-")) << host_file;
  EXPECT_EQ(ReadAll(host_file), "tok-1");
  struct stat st {};
  ASSERT_EQ(stat(host_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  ASSERT_EQ(stat(fs::path(host_file).parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_THAT((*m)->Redactions(),
              ElementsAre(std::pair<std::string, std::string>{"GITHUB_TOKEN", "ghp-1234"},
                          std::pair<std::string, std::string>{"MINTED", "tok-1"}));
  EXPECT_TRUE((*m)->Watches().empty()) << "no lifetime, no timer";

  sandbox::SandboxSpec spec;
  spec.use_namespaces = true;
  spec.landlock.abi = 1;
  ASSERT_TRUE((*m)->AddToSandbox(spec).ok());
  ASSERT_EQ(spec.mounts.size(), 1u);
  EXPECT_EQ(spec.mounts[0].target, "/run/secrets");
  EXPECT_EQ(spec.mounts[0].source, fs::path(host_file).parent_path().string());
  EXPECT_FALSE(spec.mounts[0].writable);
  ASSERT_EQ(spec.landlock.rules.size(), 1u);
  EXPECT_EQ(spec.landlock.rules[0].path, "/run/secrets");

  sandbox::SandboxSpec covered;
  covered.use_namespaces = true;
  covered.mounts.push_back({sandbox::MountOp::Kind::kBind, "/run", "/run", false, false});
  EXPECT_THAT((*m)->AddToSandbox(covered).error().message, HasSubstr("would cover"));

  fs::path secrets_dir = fs::path(host_file).parent_path();
  m = MakeError("dropped");  // the destructor removes the directory
  EXPECT_FALSE(fs::exists(secrets_dir));
}

TEST_F(SecretManagerTest, ASourceFailureStopsTheLoadAndRevokesWhatWasFetched) {
  std::map<std::string, SecretRule> rules = {{"A_FIRST", Rule(SecretSource::kCommand,
                                                              [&](auto& r) {
                                                                r.run = mint_;
                                                                r.revoke = revoke_;
                                                              })},
                                             {"B_MISSING", Rule(SecretSource::kEnv)}};
  auto m = SecretManager::Load(rules, env_, "ext");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "secret B_MISSING: B_MISSING is not set in gander's environment");
  EXPECT_EQ(ReadAll(dir_ / "revoked"), "tok-1\n");
}

TEST_F(SecretManagerTest, RefreshRewritesTheFileAndRevokesTheOldValue) {
  std::map<std::string, SecretRule> rules = {{"T", Rule(SecretSource::kCommand, [&](auto& r) {
                                                r.run = mint_;
                                                r.ttl_s = 1;
                                                r.on_expiry = ExpiryAction::kRefresh;
                                                r.revoke = revoke_;
                                                r.as = SecretDelivery::kFile;
                                              })}};
  auto m = SecretManager::Load(rules, env_, "ext");
  ASSERT_TRUE(m.ok()) << m.error().Describe();
  std::vector<std::string> events;
  int changed = 0;
  (*m)->hooks.report = [&](const std::string& d) { events.push_back(d); };
  (*m)->hooks.values_changed = [&] { ++changed; };
  std::string file = (*m)->Environment(false).at("T_FILE");
  auto watches = (*m)->Watches();
  ASSERT_EQ(watches.size(), 2u) << "the timer and the eventfd of the commands run off the loop";
  ASSERT_TRUE(LoopUntil(watches, [&] { return ReadAll(dir_ / "revoked") == "tok-1\n"; }));
  EXPECT_EQ(ReadAll(file), "tok-2");
  ASSERT_TRUE(LoopUntil(watches, [&] { return ReadAll(dir_ / "revoked") == "tok-1\ntok-2\n"; }));
  EXPECT_EQ(ReadAll(file), "tok-3");
  EXPECT_EQ(changed, 2);
  EXPECT_THAT(events, ElementsAre("secret T refreshed (file rewritten)", "secret T revoked",
                                  "secret T refreshed (file rewritten)", "secret T revoked"));
  EXPECT_EQ((*m)->Redactions().size(), 3u) << "old values stay redacted";
  (*m)->RevokeAll();
  (*m)->RevokeAll();
  EXPECT_EQ(ReadAll(dir_ / "revoked"), "tok-1\ntok-2\ntok-3\n");
}

TEST_F(SecretManagerTest, EnvRefreshWithoutRestartIsAWarning) {
  std::map<std::string, SecretRule> rules = {{"T", Rule(SecretSource::kCommand, [&](auto& r) {
                                                r.run = mint_;
                                                r.ttl_s = 1;
                                                r.on_expiry = ExpiryAction::kRefresh;
                                              })}};
  auto m = SecretManager::Load(rules, env_, "ext");
  ASSERT_TRUE(m.ok());
  std::vector<std::string> events;
  (*m)->hooks.report = [&](const std::string& d) { events.push_back(d); };
  auto watches = (*m)->Watches();
  EXPECT_FALSE(FireOne(watches, 3000)) << "the timer stops";
  EXPECT_EQ((*m)->Environment(true).at("T"), "tok-1");
  EXPECT_THAT(events, ElementsAre(HasSubstr("not possible: treated as warn")));
}

TEST_F(SecretManagerTest, EnvRefreshCallsTheRestartHook) {
  std::map<std::string, SecretRule> rules = {{"T", Rule(SecretSource::kCommand, [&](auto& r) {
                                                r.run = mint_;
                                                r.ttl_s = 1;
                                                r.on_expiry = ExpiryAction::kRefresh;
                                                r.revoke = revoke_;
                                              })}};
  auto m = SecretManager::Load(rules, env_, "ext");
  ASSERT_TRUE(m.ok());
  std::vector<std::string> seen;
  (*m)->hooks.restart = [&](const std::string& reason) {
    seen.push_back(reason + ": " + (*m)->Environment(true).at("T"));
  };
  auto watches = (*m)->Watches();
  ASSERT_TRUE(LoopUntil(watches, [&] { return !seen.empty(); }));
  EXPECT_THAT(seen, ElementsAre("secret T refreshed: tok-2"));
  EXPECT_FALSE(fs::exists(dir_ / "revoked")) << "the old value is revoked after the restart";
  EXPECT_EQ((*m)->Redactions().size(), 2u) << "old and new values are redacted";
  (*m)->OnRestarted();
  ASSERT_TRUE(LoopUntil(watches, [&] { return ReadAll(dir_ / "revoked") == "tok-1\n"; }));
  (*m)->RevokeAll();
  EXPECT_EQ(ReadAll(dir_ / "revoked"), "tok-1\ntok-2\n");
}

// The minting command runs off the loop: while it runs, the loop's other fds are served.
TEST_F(SecretManagerTest, TheMintingCommandDoesNotStallTheLoop) {
  std::string gate = (dir_ / "gate").string(), started = (dir_ / "started").string();
  std::map<std::string, SecretRule> rules = {{"T", Rule(SecretSource::kCommand, [&](auto& r) {
                                                // The second mint says it started, then waits until
                                                // the test opens the gate (a file).
                                                r.run = "if [ -e " + (dir_ / "n").string() +
                                                        " ]; then touch " + started +
                                                        "; while [ ! -e " + gate +
                                                        " ]; do sleep 0.05; done; fi; " + mint_;
                                                r.ttl_s = 1;
                                                r.on_expiry = ExpiryAction::kRefresh;
                                                r.revoke = revoke_;
                                              })}};
  auto m = SecretManager::Load(rules, env_, "ext");
  ASSERT_TRUE(m.ok()) << m.error().Describe();
  std::vector<std::string> restarts;
  (*m)->hooks.restart = [&](const std::string&) {
    restarts.push_back((*m)->Environment(true).at("T"));
  };
  auto watches = (*m)->Watches();
  // Another fd of the loop: a pipe the test writes to once the mint is running.
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  int served = 0;
  watches.push_back({p[0], [&](short) {
                       char c;
                       while (read(p[0], &c, 1) == 1) ++served;
                       return true;
                     }});
  // The timer fires: the mint starts and waits at the gate.
  ASSERT_TRUE(LoopUntil(watches, [&] { return fs::exists(started); }));
  ASSERT_EQ(write(p[1], "x", 1), 1);
  EXPECT_TRUE(LoopUntil(watches, [&] { return served == 1; })) << "the loop went on meanwhile";
  EXPECT_TRUE(restarts.empty());
  std::ofstream(gate).put('\n');
  ASSERT_TRUE(LoopUntil(watches, [&] { return !restarts.empty(); }));
  EXPECT_THAT(restarts, ElementsAre("tok-2"));
  close(p[0]);
  close(p[1]);
}

TEST_F(SecretManagerTest, KillAndWarn) {
  env_["K"] = "kill-me";
  env_["W"] = "warn-me";
  std::map<std::string, SecretRule> rules = {{"K", Rule(SecretSource::kEnv,
                                                        [](auto& r) {
                                                          r.ttl_s = 1;
                                                          r.on_expiry = ExpiryAction::kKill;
                                                        })},
                                             {"W", Rule(SecretSource::kEnv, [](auto& r) {
                                                r.ttl_s = 1;
                                                r.on_expiry = ExpiryAction::kWarn;
                                              })}};
  auto m = SecretManager::Load(rules, env_, "ext");
  ASSERT_TRUE(m.ok());
  int stops = 0;
  std::vector<std::string> events;
  (*m)->hooks.stop = [&] { ++stops; };
  (*m)->hooks.report = [&](const std::string& d) { events.push_back(d); };
  auto watches = (*m)->Watches();
  ASSERT_EQ(watches.size(), 3u) << "two timers and the eventfd of the commands run off the loop";
  ASSERT_TRUE(LoopUntil(watches, [&] { return events.size() == 2; }));
  EXPECT_EQ(stops, 1);
  std::sort(events.begin(), events.end());
  EXPECT_THAT(events, ElementsAre("secret K expired (on_expiry: kill): stopping the extension",
                                  "secret W expired (on_expiry: warn)"));
  for (const auto& e : events) {
    EXPECT_THAT(e, ::testing::Not(HasSubstr("-me")));
  }
}

TEST(ExpiryTest, TtlSourceExpiryAndRefreshLead) {
  SecretRule rule;
  rule.ttl_s = 100;
  EXPECT_EQ(ExpiryMs(rule, 1'000'000, std::nullopt), 1'100'000);
  EXPECT_EQ(ExpiryMs(rule, 1'000'000, 1'050), 1'050'000);  // the source's is earlier
  EXPECT_EQ(ExpiryMs(rule, 1'000'000, 9'999), 1'100'000);
  EXPECT_EQ(ExpiryMs(SecretRule{}, 1'000'000, std::nullopt), 0);
  EXPECT_EQ(ExpiryMs(SecretRule{}, 1'000'000, 2'000), 2'000'000);
  EXPECT_EQ(ActionTimeMs(rule, 0, 100'000), 100'000) << "kill acts at the expiry";
  rule.on_expiry = ExpiryAction::kRefresh;
  EXPECT_EQ(ActionTimeMs(rule, 0, 100'000), 90'000) << "refresh a tenth early";
  EXPECT_EQ(ActionTimeMs(rule, 0, 3'600'000), 3'540'000) << "at most a minute early";
}

}  // namespace
}  // namespace gander::launcher
