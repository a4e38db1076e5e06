// Secret sources (launcher/secret_source.h): host commands with a timeout, JSON fields,
// expiry timestamps, and errors that never carry a value.
#include "launcher/secret_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

namespace gander::launcher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

// A rule set field by field (designated initializers warn about the fields left out).
policies::SecretRule Rule(policies::SecretSource from,
                          const std::function<void(policies::SecretRule&)>& edit = {}) {
  policies::SecretRule rule;
  rule.from = from;
  if (edit) edit(rule);
  return rule;
}

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin"};

policies::SecretRule Command(std::string run) {
  return Rule(policies::SecretSource::kCommand, [&](policies::SecretRule& r) { r.run = run; });
}

Result<SecretValue> Fetch(const policies::SecretRule& rule,
                          const std::map<std::string, std::string>& env = {
                              {"PATH", "/usr/bin:/bin"}}) {
  return FetchSecret("TOKEN", rule, env, {});
}

TEST(RunHostCommandTest, CapturesOutputStatusAndStdin) {
  auto r = RunHostCommand("cat; echo err >&2; exit 3", "from stdin", 5s, kEnv);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->out, "from stdin");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->status, 3);
  EXPECT_FALSE(r->timed_out);
}

TEST(RunHostCommandTest, GetsNoStdinByDefaultAndOnlyTheGivenEnvironment) {
  auto r = RunHostCommand("cat; echo \"[$HOME]\"", "", 5s, {"PATH=/usr/bin:/bin", "X=1"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "[]\n");
  EXPECT_EQ(r->status, 0);
}

// gander run holds SIGTERM, SIGINT and SIGHUP for its loop from its first instruction: a fetch
// command (a password prompt, say) that is still running when one comes is stopped, and the
// signal stays pending for the loop. A revoke is not stopped (it is not asked to be).
TEST(RunHostCommandTest, AHeldTerminationSignalStopsAFetch) {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &term, &old);
  std::thread signaller([] {
    std::this_thread::sleep_for(200ms);
    kill(getpid(), SIGTERM);
  });
  auto started = std::chrono::steady_clock::now();
  auto r = RunHostCommand("sleep 60", "", 60s, kEnv, /*stop_on_termination=*/true);
  auto took = std::chrono::steady_clock::now() - started;
  signaller.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->interrupted);
  EXPECT_FALSE(r->timed_out);
  EXPECT_LT(took, 30s) << "waited for the command's end instead";  // bounds a hang only
  timespec none{};
  EXPECT_EQ(sigtimedwait(&term, nullptr, &none), SIGTERM) << "the signal was consumed";
  auto revoke = RunHostCommand("exit 0", "", 5s, kEnv);  // not asked: runs to its end
  ASSERT_TRUE(revoke.ok());
  EXPECT_FALSE(revoke->interrupted);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// No clock thresholds: the grandchild (which would outlive its shell) writes its pid before the
// shell goes to sleep, so the timeout always finds it running (a control: the pid file is
// there, else the timeout came first and is doubled); then the test waits for that pid to be
// gone. The deadline only bounds a hang: a surviving grandchild fails it.
TEST(RunHostCommandTest, TimeoutKillsTheWholeProcessGroup) {
  const std::string pidfile = "/tmp/gander-secret-test-" + std::to_string(getpid()) + ".pid";
  std::filesystem::remove(pidfile);
  const std::string command = "sh -c 'echo $$ > " + pidfile + ".tmp && mv " + pidfile + ".tmp " +
                              pidfile + " && exec sleep 300' & while [ ! -s " + pidfile +
                              " ]; do :; done; sleep 300";
  Result<HostCommandResult> r = MakeError("not run");
  for (auto timeout = std::chrono::milliseconds(300); timeout <= 60s; timeout *= 2) {
    r = RunHostCommand(command, "", timeout, kEnv);
    if (std::filesystem::exists(pidfile)) break;  // the grandchild ran before the timeout
  }
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->status, 128 + SIGKILL);
  pid_t grandchild = 0;
  std::ifstream(pidfile) >> grandchild;
  std::filesystem::remove(pidfile);
  ASSERT_GT(grandchild, 0) << "the grandchild never started: the test shows nothing";
  auto gone = [&] {
    // Gone, or a zombie its new parent has not reaped yet.
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto paren = text.rfind(')');
    return text.empty() ||
           (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z');
  };
  auto deadline = std::chrono::steady_clock::now() + 30s;  // bounds a hang only
  while (!gone() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone()) << "grandchild " << grandchild << " survived the timeout's group kill";
  if (!gone()) kill(grandchild, SIGKILL);
}

TEST(RunHostCommandTest, CapsStdout) {
  auto r = RunHostCommand("head -c 3000000 /dev/zero", "", 10s, kEnv);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), kMaxSecretOutput + 1);
}

TEST(JsonFieldTest, DottedPathsAndTypes) {
  const char* doc = R"({"Credentials": {"SessionToken": "tok", "Expiration": "2026-11-30T12:00:00Z",
                       "n": 42, "b": true, "nul": null, "list": ["a", {"k": "v"}]}})";
  EXPECT_EQ(*JsonField(doc, "Credentials.SessionToken"), "tok");
  EXPECT_EQ(*JsonField(doc, "Credentials.n"), "42");
  EXPECT_EQ(*JsonField(doc, "Credentials.b"), "true");
  EXPECT_EQ(*JsonField(doc, "Credentials.list.0"), "a");
  EXPECT_EQ(*JsonField(doc, "Credentials.list.1.k"), "v");
  EXPECT_EQ(JsonField(doc, "Credentials.Missing").error().message,
            "the output has no JSON field Credentials.Missing");
  EXPECT_EQ(JsonField(doc, "Credentials.list.2").error().message,
            "the output has no JSON field Credentials.list.2");
  EXPECT_EQ(JsonField(doc, "Credentials.nul").error().message,
            "the JSON field Credentials.nul is null, not a string");
  EXPECT_EQ(JsonField(doc, "Credentials").error().message,
            "the JSON field Credentials is an object, not a string");
}

TEST(JsonFieldTest, ParseErrorsNeverQuoteTheText) {
  auto r = JsonField("sk-live-abcdef0123456789 not json", "a");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("the output is not JSON (parse error at byte"));
  EXPECT_THAT(r.error().message, Not(HasSubstr("sk-live")));
  r = JsonField("{\"a\": \"sk-live-abcdef\", ", "a");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, Not(HasSubstr("sk-live")));
}

TEST(ParseExpiryTest, Rfc3339AndEpoch) {
  EXPECT_EQ(*ParseExpiry("2026-11-30T12:00:00Z"), 1796040000);
  EXPECT_EQ(*ParseExpiry("2026-11-30T12:00:00+00:00"), 1796040000);
  EXPECT_EQ(*ParseExpiry("2026-11-30T14:00:00+02:00"), 1796040000);
  EXPECT_EQ(*ParseExpiry("2026-11-30T10:30:00-0130"), 1796040000);
  EXPECT_EQ(*ParseExpiry("2026-11-30 12:00:00.123456Z"), 1796040000);
  EXPECT_EQ(*ParseExpiry("1796040000"), 1796040000);
  EXPECT_EQ(*ParseExpiry("1796040000123"), 1796040000);  // milliseconds
  EXPECT_EQ(ParseExpiry("2026-11-30T12:00:00").error().message,
            "a timestamp without a time zone (expected Z or +HH:MM)");
  for (const char* bad : {"", "soon", "2026-13-30T12:00:00Z", "2026-11-30T12:00Z",
                          "2026-11-30T12:00:00+2", "-5", "12.5"}) {
    EXPECT_FALSE(ParseExpiry(bad).ok()) << bad;
  }
}

TEST(ScrubTest, ReplacesEveryOccurrenceOfLongEnoughValues) {
  EXPECT_EQ(Scrub("a tok-123 b tok-123", {"tok-123", "ab"}), "a [redacted] b [redacted]");
  EXPECT_EQ(Scrub("ab", {"ab"}), "ab");
}

TEST(FetchSecretTest, FromEnvBySameOrOtherName) {
  std::map<std::string, std::string> env = {{"TOKEN", "t1"}, {"SLACK_TOKEN", "xoxb"}};
  EXPECT_EQ(Fetch(Rule(policies::SecretSource::kEnv), env)->value, "t1");
  EXPECT_EQ(
      Fetch(Rule(policies::SecretSource::kEnv, [](auto& r) { r.env_name = "SLACK_TOKEN"; }), env)
          ->value,
      "xoxb");
  EXPECT_EQ(Fetch(Rule(policies::SecretSource::kEnv, [](auto& r) { r.env_name = "NOPE"; }), env)
                .error()
                .message,
            "secret TOKEN: NOPE is not set in gander's environment");
  EXPECT_EQ(Fetch(Rule(policies::SecretSource::kEnv), {{"TOKEN", ""}}).error().message,
            "secret TOKEN: the value is empty");
}

TEST(FetchSecretTest, FromFile) {
  std::string path = ::testing::TempDir() + "/gander-secret-file";
  std::ofstream(path) << "file-token\n";
  policies::SecretRule rule = Rule(policies::SecretSource::kFile, [&](auto& r) {
    r.path = {path, {}};
  });
  EXPECT_EQ(Fetch(rule)->value, "file-token");
  std::filesystem::remove(path);
  auto missing = Fetch(rule);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ENOENT);
  EXPECT_EQ(missing.error().message, "secret TOKEN: cannot open " + path);
  rule.path.path = "/";
  EXPECT_EQ(Fetch(rule).error().message, "secret TOKEN: / is not a regular file");
}

TEST(FetchSecretTest, FromCommandRawOrJsonWithExpiry) {
  EXPECT_EQ(Fetch(Command("echo raw-token"))->value, "raw-token");
  EXPECT_EQ(Fetch(Command("echo \"$GANDER_SECRET\""))->value, "TOKEN");
  auto rule = Command(
      "echo "
      "'{\"Credentials\":{\"SessionToken\":\"sess\",\"Expiration\":\"2026-11-30T12:00:00Z\"}}'");
  rule.json = "Credentials.SessionToken";
  rule.expires = "Credentials.Expiration";
  auto v = Fetch(rule);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->value, "sess");
  EXPECT_EQ(v->expires_at, 1796040000);
}

TEST(FetchSecretTest, CommandFailuresAreClearAndCarryNoValue) {
  const std::string value = "sk-live-0123456789abcdef";
  // Fails, echoing its would-be value on both streams.
  auto failing = Command("echo " + value + "; echo \"denied: " + value + "\" >&2; exit 4");
  auto r = Fetch(failing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "secret TOKEN: its command exited with status 4: denied: [redacted]");

  auto slow = Command("sleep 10");
  slow.timeout_ms = 200;
  r = Fetch(slow);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("secret TOKEN: its command timed out"));

  auto no_field = Command("echo '{\"other\": \"" + value + "\"}'");
  no_field.json = "Credentials.SessionToken";
  EXPECT_EQ(Fetch(no_field).error().message,
            "secret TOKEN: the output has no JSON field Credentials.SessionToken");

  auto not_json = Command("echo " + value);
  not_json.json = "a";
  r = Fetch(not_json);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, Not(HasSubstr(value)));

  // `expires` pointing at the token by mistake: the error does not quote it.
  auto wrong_expiry = Command("echo '{\"t\": \"" + value + "\"}'");
  wrong_expiry.json = "t";
  wrong_expiry.expires = "t";
  r = Fetch(wrong_expiry);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("the JSON field t is not a timestamp"));
  EXPECT_THAT(r.error().message, Not(HasSubstr(value)));

  EXPECT_EQ(Fetch(Command("true")).error().message, "secret TOKEN: the value is empty");
  EXPECT_EQ(Fetch(Command("printf 'a\\0b'")).error().message,
            "secret TOKEN: the value contains a NUL byte");
}

}  // namespace
}  // namespace gander::launcher
