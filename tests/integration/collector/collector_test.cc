// Integration tier: a real `gander collect` process on a temporary socket and port, real
// CollectorClient objects streaming events, /metrics scraped over HTTP. The collector is
// SIGKILLed and restarted mid-stream: the totals must equal what was sent (nothing lost,
// nothing counted twice), and what was sent while it was down must arrive after the restart.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exporters/collector_client.h"
#include "exporters/collector_wire.h"
#include "tests/unit/temp_dir_test.h"

namespace gander::exporters {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) response.append(buf, n);
  close(fd);
  auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// The value of the series written exactly as `series` (name{labels}), or -1.
double ValueOf(const std::string& exposition, const std::string& series) {
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

events::Event Read(int i) {
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = "itest";
  e.pid = 1000 + i;
  if (i % 10 == 0) {
    e.payload = events::FileEvent{.syscall = "openat",
                                  .raw_path = "/etc/passwd",
                                  .path = "/etc/passwd",
                                  .path_class = events::PathClass::kOutside,
                                  .access = events::FileAccess::kRead};
  } else {
    e.payload = events::SyscallEvent{
        .name = "read", .nr = 0, .action = events::SyscallAction::kCounted, .count = 1};
  }
  return e;
}

events::Event Start() {
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = "itest";
  e.payload = events::LifecycleEvent{events::LifecyclePhase::kStart, "/bin/true"};
  return e;
}

class CollectorTest : public unit::TempDirTest {
 protected:
  CollectorTest() : TempDirTest("collector") {}
  void SetUp() override {
    TempDirTest::SetUp();
    if (HasFatalFailure()) return;
    socket_ = dir_ + "/run/collector.sock";
    port_ = FreePort();
  }
  void TearDown() override {
    if (pid_ > 0) Kill(SIGTERM);
    TempDirTest::TearDown();
  }

  std::vector<std::string> CollectArgs() const {
    return {"--socket",
            socket_,
            "--state",
            dir_ + "/state.json",
            "--token",
            TokenPath(),
            "--listen",
            "127.0.0.1:" + std::to_string(port_),
            "--persist-interval-ms",
            "20",
            "--log-level",
            "warn"};
  }

  // `gander collect ...` (through the CLI, as a user would), waiting for its socket.
  void StartCollector(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {GANDER_BIN, "collect"};
    for (auto& a : CollectArgs()) args.push_back(a);
    for (auto& a : extra) args.push_back(a);
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      // Its own state directory: the audit logs it writes itself land under the test's.
      setenv("XDG_STATE_HOME", (dir_ + "/xdg-state").c_str(), 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    ASSERT_TRUE(WaitUntil([&] { return CanConnect() && !Scrape().empty(); }, 10s))
        << "the collector did not come up";
  }

  void Kill(int signal) {
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  bool CanConnect() const {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socket_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    return ok;
  }

  std::string Scrape() const { return HttpGet(port_, "/metrics"); }
  std::string TokenPath() const { return dir_ + "/state/collector.token"; }

  // Sends `lines` on a fresh connection and reads until an ack (accepted) or the hang-up.
  std::string Exchange(const std::string& lines) const {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socket_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      return "connect failed";
    }
    (void)!send(fd, lines.data(), lines.size(), MSG_NOSIGNAL);
    std::string reply;
    char buf[512];
    for (ssize_t n; reply.find("\"t\":\"ack\"") == std::string::npos &&
                    (n = read(fd, buf, sizeof(buf))) > 0;) {
      reply.append(buf, n);
    }
    close(fd);
    return reply;
  }

  template <typename F>
  static bool WaitUntil(F done, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return done();
  }

  std::unique_ptr<CollectorClient> Client(size_t max_backlog = 65536) {
    CollectorClientOptions o;
    o.hello.extension = "itest";
    o.hello.info.run.isolation = "full";
    o.hello.info.run.policy_sha256 = "00";
    o.hello.info.run.syscall_accounting = "watched";
    o.socket_path = socket_;
    o.token_path = TokenPath();
    o.audit_log.path = dir_ + "/audit/itest.jsonl";
    o.max_backlog_events = max_backlog;
    o.retry_interval = 20ms;
    return CollectorClient::Create(std::move(o));
  }

  // Flushes (as the poll loop would) until everything is acknowledged.
  static bool Drain(CollectorClient& client, std::chrono::milliseconds limit = 10s) {
    return WaitUntil(
        [&] {
          pollfd p{client.fd(), POLLIN, 0};
          if (poll(&p, 1, 5) > 0) client.OnReadable();
          client.Flush();
          return client.backlog() == 0;
        },
        limit);
  }

  // A collector that naps 1 s after a turn that applied records (longer than the exit
  // budgets below), and a client whose start it acknowledged; null if that failed.
  std::unique_ptr<CollectorClient> NappingCollectorsClient() {
    StartCollector({"--coalesce-ms", "1000"});
    auto client = Client();
    if (!client->connected()) {
      ADD_FAILURE() << client->last_error()->Describe();
      return nullptr;
    }
    client->Publish(Start());
    if (!Drain(*client)) return nullptr;
    return client;
  }

  static void ExpectAllAcknowledged(const CollectorClient& client) {
    EXPECT_FALSE(client.fallback()) << client.last_error()->Describe();
    EXPECT_EQ(client.stats().written_directly, 0u);
    EXPECT_EQ(client.backlog(), 0u);
  }

  size_t AuditLines() const {
    std::ifstream in(dir_ + "/audit/itest.jsonl");
    size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  std::string socket_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(CollectorTest, SigkillMidStreamLosesNothingAndCountsNothingTwice) {
  StartCollector();
  auto client = Client();
  ASSERT_TRUE(client->connected()) << client->last_error()->Describe();
  client->Publish(Start());
  constexpr int kEvents = 30000;
  size_t sent_while_down = 0;
  for (int i = 0; i < kEvents; ++i) {
    client->Publish(Read(i));
    if (i % 50 == 0) client->Flush();
    if (i == kEvents / 4) Kill(SIGKILL);  // acknowledged, unacknowledged and unsent records
    if (pid_ < 0) ++sent_while_down;
    if (i == kEvents / 2) StartCollector();
    if (i == 3 * kEvents / 4) {
      Kill(SIGKILL);  // again, right after a burst: resends must be skipped, not recounted
      StartCollector();
    }
  }
  ASSERT_GT(sent_while_down, 1000u);
  ASSERT_TRUE(Drain(*client)) << client->backlog() << " events never acknowledged";
  client->Finish(60s);  // returns once the bye is sent: a hang bound
  EXPECT_FALSE(client->fallback());

  std::string metrics = Scrape();
  EXPECT_EQ(
      ValueOf(metrics, "gander_syscalls_total{extension=\"itest\",syscall=\"read\",phase=\"run\"}"),
      kEvents - kEvents / 10);
  EXPECT_EQ(
      ValueOf(metrics,
              "gander_file_access_outside_workspace_total{extension=\"itest\",path=\"/etc/"
              "passwd\",path_class=\"outside\",access=\"read\",result=\"allowed\",phase=\"run\"}"),
      kEvents / 10);
  EXPECT_EQ(ValueOf(metrics, "gander_extension_starts_total{extension=\"itest\"}"), 1);
  EXPECT_EQ(ValueOf(metrics, "gander_events_dropped_total{extension=\"itest\",stage=\"backlog\"}"),
            0);
  EXPECT_EQ(client->stats().dropped, 0u);
  // The audit log is at least once: a record written just before a SIGKILL, whose
  // acknowledgement never left, is written again when resent.
  EXPECT_GE(AuditLines(), static_cast<size_t>(kEvents + 1));
}

// The collector's coalesce nap leaves the launchers' sockets unread: an exiting launcher's
// sync waits in its socket, and the launcher rings (a connection) so that its exit does not
// wait out the nap. Here the nap (1 s) is longer than the exit's budget: without the ring the
// acknowledgement comes too late and the launcher writes its records itself.
TEST_F(CollectorTest, AnExitingLauncherEndsTheCollectorsNap) {
  auto client = NappingCollectorsClient();
  ASSERT_TRUE(client);
  for (int i = 1; i <= 20; ++i) client->Publish(Read(i));
  client->Flush();  // applied at once, then the collector naps
  ASSERT_TRUE(WaitUntil(
      [&] {
        return ValueOf(Scrape(),
                       "gander_syscalls_total{extension=\"itest\",syscall=\"read\","
                       "phase=\"run\"}") == 18;
      },
      10s));
  client->Publish(Read(21));
  client->Flush();  // unread: the collector naps
  client->Finish(700ms);
  ExpectAllAcknowledged(*client);
}

// The launcher asks for its final acknowledgement before it tears its sandbox down
// (StartFinish), then waits for it (Finish): an event published in between is synced (and
// rung for) again, so that it does not wait out the nap either.
TEST_F(CollectorTest, AnEventAfterTheFirstFinalSyncIsSyncedAgain) {
  auto client = NappingCollectorsClient();
  ASSERT_TRUE(client);
  client->Publish(Read(1));
  client->StartFinish();
  ASSERT_TRUE(Drain(*client));  // acknowledged, then the collector naps
  client->Publish(Read(2));
  client->Finish(700ms);
  ExpectAllAcknowledged(*client);
}

TEST_F(CollectorTest, EventsSentWhileTheCollectorIsDownArriveAfterItRestarts) {
  StartCollector();
  auto client = Client();
  ASSERT_TRUE(client->connected());
  client->Publish(Start());
  ASSERT_TRUE(Drain(*client));
  Kill(SIGKILL);
  for (int i = 1; i <= 500; ++i) client->Publish(Read(i));  // 50 file events, 450 syscalls
  client->Flush();
  EXPECT_FALSE(client->connected());
  EXPECT_EQ(client->backlog(), 500u);
  StartCollector();
  ASSERT_TRUE(Drain(*client));
  std::string metrics = Scrape();
  EXPECT_EQ(
      ValueOf(metrics, "gander_syscalls_total{extension=\"itest\",syscall=\"read\",phase=\"run\"}"),
      450);
  EXPECT_EQ(ValueOf(metrics, "gander_extension_running{extension=\"itest\"}"), 1);
  client->Finish(60s);  // returns once the bye is sent: a hang bound
  EXPECT_TRUE(WaitUntil(
      [&] { return ValueOf(Scrape(), "gander_extension_running{extension=\"itest\"}") == 0; },
      60s))  // a hang bound: the gauge drops when the collector reads the bye
      << "the extension still counted as running a minute after its bye";
}

TEST_F(CollectorTest, BacklogOverflowIsDroppedAndCounted) {
  StartCollector();
  auto client = Client(/*max_backlog=*/100);
  ASSERT_TRUE(client->connected());
  ASSERT_TRUE(Drain(*client));
  Kill(SIGKILL);
  for (int i = 1; i <= 300; ++i) client->Publish(Read(i * 10 + 1));  // all syscalls
  EXPECT_EQ(client->stats().dropped, 200u);
  StartCollector();
  ASSERT_TRUE(Drain(*client));
  client->Publish(Read(1));  // room again: the drop notice goes first
  ASSERT_TRUE(Drain(*client));
  std::string metrics = Scrape();
  EXPECT_EQ(
      ValueOf(metrics, "gander_syscalls_total{extension=\"itest\",syscall=\"read\",phase=\"run\"}"),
      101);
  EXPECT_EQ(ValueOf(metrics, "gander_events_dropped_total{extension=\"itest\",stage=\"backlog\"}"),
            200);
}

TEST_F(CollectorTest, WithoutACollectorTheClientWritesTheAuditLogItself) {
  auto client = Client();
  EXPECT_TRUE(client->fallback());
  client->Publish(Start());
  client->Publish(Read(1));
  client->Flush();
  EXPECT_EQ(AuditLines(), 2u);
  pollfd p{client->fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the fallback's fd must never wake the loop";
}

TEST_F(CollectorTest, ALauncherStartsTheCollectorAndOnlyOneRuns) {
  std::vector<std::string> command = {GANDER_COLLECT_BIN};
  for (auto& a : CollectArgs()) command.push_back(a);
  std::vector<std::unique_ptr<CollectorClient>> clients;
  std::vector<std::thread> threads;
  clients.resize(3);
  for (int i = 0; i < 3; ++i) {  // three launchers starting at once
    threads.emplace_back([&, i] {
      CollectorClientOptions o;
      o.hello.extension = "itest";
      o.socket_path = socket_;
      o.audit_log.path = dir_ + "/audit/itest.jsonl";
      o.start_command = command;
      o.start_wait = 5s;
      clients[i] = CollectorClient::Create(std::move(o));
    });
  }
  for (auto& t : threads) t.join();
  for (auto& c : clients) EXPECT_TRUE(c->connected());
  clients.clear();  // say bye before the collector is stopped
  // Exactly one collector: a fourth refuses to start (it cannot take the lock).
  std::string cmd =
      std::string(GANDER_COLLECT_BIN) + " --socket " + socket_ + " --listen none --log-level off";
  int status = system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 3);
  // Stop the one we started, found by its unique socket path.
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline.find(socket_) != std::string::npos &&
        cmdline.find("gander-collect") != std::string::npos) {
      pid_t pid = std::stoi(entry.path().filename());
      kill(pid, SIGTERM);
      // Not our child: wait until it is gone, or TearDown races its last writes.
      for (int i = 0; i < 500 && kill(pid, 0) == 0; ++i) usleep(10000);
    }
  }
}

TEST_F(CollectorTest, ABadLauncherIsDisconnectedAndTheCollectorLivesOn) {
  StartCollector();
  for (const std::string& garbage : {std::string("{\"t\":\"hello\",\"v\":99}\n"),
                                     std::string("not json\n"), std::string(200 * 1024, 'x')}) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socket_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    (void)!send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL);
    std::string reply;
    char buf[512];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) reply.append(buf, n);
    close(fd);
    EXPECT_EQ(reply.rfind("{\"t\":\"error\"", 0), 0u) << reply;
  }
  EXPECT_NE(Scrape().find("gander_label_overflow_total"), std::string::npos);
}

// A forged hello naming a file (a sandbox that reached the socket once made the collector
// rotate ~/.bashrc aside and write attacker text in its place): refused, the file untouched.
TEST_F(CollectorTest, AHelloNamingAPathIsRefusedAndTheFileIsUntouched) {
  StartCollector();
  const std::string target = dir_ + "/bashrc";
  { std::ofstream(target) << "# the user's own\n"; }
  wire::Hello h;
  h.launcher = "forged";
  h.extension = "itest";
  h.audit_log_max_bytes = 1;  // rotate at once: the original is moved aside
  std::string hello = wire::EncodeHello(h);
  const std::string local = "\"audit_log_local\":false";
  ASSERT_NE(hello.find(local), std::string::npos) << hello;
  hello.replace(hello.find(local), local.size(), "\"audit_log\":\"" + target + "\"");
  std::string reply = Exchange(hello + wire::EncodeRecord(1, Start()) +
                               wire::EncodeRecord(2, Read(1)) + wire::EncodeSync(2));
  EXPECT_EQ(reply.rfind("{\"t\":\"error\"", 0), 0u) << "the forged hello was accepted: " << reply;
  EXPECT_NE(reply.find("names a path"), std::string::npos) << reply;
  std::ifstream in(target);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "# the user's own\n");
  EXPECT_FALSE(fs::exists(target + ".1")) << "the collector rotated " << target;
}

// A process of our own uid that reached the socket (but cannot read gander's state directory,
// as no sandbox can) forges a hello for an extension: without the token, or with a wrong one,
// it is refused, counted under gander_collector_refused_total{reason="token"}, and nothing it
// sent is counted or written. A real client (which reads the token) is still accepted.
TEST_F(CollectorTest, AHelloWithoutTheTokenIsRefusedAndCounted) {
  StartCollector();
  struct stat st {};
  ASSERT_EQ(stat(TokenPath().c_str(), &st), 0) << "the collector made no token";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string real_token;
  std::ifstream(TokenPath()) >> real_token;
  ASSERT_EQ(real_token.size(), 64u);
  EXPECT_EQ(ValueOf(Scrape(), "gander_collector_refused_total{reason=\"token\"}"), 0);

  for (const std::string& token :
       {std::string(), std::string(64, 'a'), real_token.substr(0, 63) + "x", real_token + "0"}) {
    wire::Hello h;
    h.launcher = "forged-" + std::to_string(token.size());
    h.extension = "forged";
    h.token = token;
    std::string reply =
        Exchange(wire::EncodeHello(h) + wire::EncodeRecord(1, Start()) + wire::EncodeSync(1));
    EXPECT_EQ(reply.rfind("{\"t\":\"error\"", 0), 0u)
        << "a hello with token '" << token << "' was accepted: " << reply;
    EXPECT_NE(reply.find("token"), std::string::npos) << reply;
  }
  std::string metrics = Scrape();
  EXPECT_EQ(ValueOf(metrics, "gander_collector_refused_total{reason=\"token\"}"), 4) << metrics;
  EXPECT_EQ(metrics.find("extension=\"forged\""), std::string::npos) << metrics;
  EXPECT_FALSE(fs::exists(dir_ + "/xdg-state/gander/audit/forged.jsonl"));

  // The control: the same hello with the token is accepted and its start counted.
  wire::Hello h;
  h.launcher = "with-token";
  h.extension = "itest";
  h.token = real_token;
  std::string reply =
      Exchange(wire::EncodeHello(h) + wire::EncodeRecord(1, Start()) + wire::EncodeSync(1));
  EXPECT_NE(reply.find("\"t\":\"welcome\""), std::string::npos) << reply;
  EXPECT_NE(reply.find("\"t\":\"ack\""), std::string::npos) << reply;
  EXPECT_EQ(ValueOf(Scrape(), "gander_extension_starts_total{extension=\"itest\"}"), 1);
  // ... and written where the forged one's would have been.
  EXPECT_TRUE(fs::exists(dir_ + "/xdg-state/gander/audit/itest.jsonl"));
}

// SO_PEERCRED: a peer of another uid (here 65534, let through a socket directory opened up
// for the test) is refused before it may send anything, and counted.
TEST_F(CollectorTest, APeerOfAnotherUidIsRefusedAndCounted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  StartCollector();
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(chmod(fs::path(socket_).parent_path().c_str(), 0755), 0);
  ASSERT_EQ(chmod(socket_.c_str(), 0777), 0);
  std::string token;
  std::ifstream(TokenPath()) >> token;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    wire::Hello h;
    h.launcher = "other-uid";
    h.extension = "itest";
    h.token = token;  // even with the token
    std::string reply =
        Exchange(wire::EncodeHello(h) + wire::EncodeRecord(1, Start()) + wire::EncodeSync(1));
    _exit(reply.empty() ? 0 : reply == "connect failed" ? 3 : 1);  // hung up on, no word
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  std::string metrics = Scrape();
  EXPECT_EQ(ValueOf(metrics, "gander_collector_refused_total{reason=\"uid\"}"), 1) << metrics;
  EXPECT_EQ(ValueOf(metrics, "gander_extension_starts_total{extension=\"itest\"}"), -1);
}

TEST_F(CollectorTest, ExpositionPassesPromtool) {
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  StartCollector();
  auto client = Client();
  client->Publish(Start());
  for (int i = 0; i < 20; ++i) client->Publish(Read(i));
  ASSERT_TRUE(Drain(*client));
  std::string file = dir_ + "/metrics.txt";
  std::ofstream(file) << Scrape();
  std::string cmd = "promtool check metrics < " + file + " > " + dir_ + "/promtool.txt 2>&1";
  int status = system(cmd.c_str());
  std::ifstream out(dir_ + "/promtool.txt");
  std::string report((std::istreambuf_iterator<char>(out)), {});
  EXPECT_EQ(WEXITSTATUS(status), 0) << report;
}

}  // namespace
}  // namespace gander::exporters
