// The supervisor loop with a real child process (a tiny MCP server in Python): secret
// redaction on stdout and stderr, and restart behind the relay. The client side is a thread
// writing and reading pipes, as Goose would.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "events/event_sink.h"
#include "monitor/supervisor.h"
#include "relay/redactor.h"
#include "relay/rpc_monitor.h"

namespace gander::monitor {
namespace {

// Answers initialize (serverInfo.version = its pid) and tools/call (text names its pid and
// echoes TOKEN for "leak"; "hang" is never answered); "leak" also writes TOKEN to stderr, cut
// by a line break and two writes.
constexpr char kServer[] = R"PY(
import json, os, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "fake", "version": str(os.getpid())}}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
    elif m.get("method") == "tools/call":
        name = m["params"]["name"]
        if name == "hang":
            continue
        text = "pid %d %s" % (os.getpid(), name)
        if name == "leak":
            tok = os.environ["TOKEN"]
            text += " token=" + tok
            sys.stderr.write("debug: using " + tok[:6] + "\n"); sys.stderr.flush(); time.sleep(0.05)
            sys.stderr.write(tok[6:] + " for auth\n"); sys.stderr.flush()
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": text}]}}), flush=True)
)PY";

// Non-ASCII, so that Python's json.dumps writes it \u-escaped on stdout.
const std::string kToken = "tok-\xC3\xA9-12345/xyz-secret";

struct Spawned {
  int in = -1, out = -1, err = -1, pidfd = -1;
  pid_t pid = -1;
};

Spawned Spawn() {
  int in[2], out[2], err[2];
  EXPECT_EQ(pipe2(in, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  std::string env = "TOKEN=" + kToken;  // before fork: the child only calls dup2 and exec
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    char* envp[] = {env.data(), const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
    execle("/usr/bin/python3", "python3", "-c", kServer, nullptr, envp);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  Spawned s{in[1], out[0], err[0], static_cast<int>(syscall(SYS_pidfd_open, pid, 0)), pid};
  for (int fd : {s.in, s.out, s.err}) fcntl(fd, F_SETFL, O_NONBLOCK);
  return s;
}

// Reads lines from `fd` until `pred` holds for the text so far or the time is up.
std::string ReadUntil(int fd, const std::function<bool(const std::string&)>& pred,
                      std::string& buffer, int timeout_ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!pred(buffer) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    buffer.append(buf, n);
  }
  return buffer;
}

bool Contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

class SupervisorRelay : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
    int a[2], b[2], c[2];
    ASSERT_EQ(pipe2(a, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(b, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(c, O_CLOEXEC), 0);
    client_in_r_ = a[0];
    client_in_w_ = a[1];
    client_out_r_ = b[0];
    client_out_w_ = b[1];
    client_err_r_ = c[0];
    client_err_w_ = c[1];
  }
  void TearDown() override {
    for (int fd :
         {client_in_r_, client_in_w_, client_out_r_, client_out_w_, client_err_r_, client_err_w_}) {
      if (fd >= 0) close(fd);
    }
    for (const Spawned& s : children_) {
      kill(s.pid, SIGKILL);
      waitpid(s.pid, nullptr, 0);
      for (int fd : {s.out, s.err, s.pidfd}) close(fd);
    }
  }
  void Send(const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(client_in_w_, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  }
  SupervisorOptions Options(const Spawned& s) {
    SupervisorOptions o;
    o.client_in = client_in_r_;
    o.client_out = client_out_w_;
    o.client_err = client_err_w_;
    o.child_in = s.in;
    o.child_out = s.out;
    o.child_err = s.err;
    o.pidfd = s.pidfd;
    o.err.hold_lines = false;
    return o;
  }

  int client_in_r_ = -1, client_in_w_ = -1, client_out_r_ = -1, client_out_w_ = -1;
  int client_err_r_ = -1, client_err_w_ = -1;
  std::vector<Spawned> children_;
};

constexpr char kInitialize[] =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
constexpr char kInitialized[] = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

std::string Call(int id, const std::string& tool) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":")" + tool + R"(","arguments":{}}})";
}

TEST_F(SupervisorRelay, SecretNeverReachesTheClient) {
  children_.push_back(Spawn());
  events::BoundedEventQueue queue(64);
  relay::RpcMonitor rpc("t", &queue, 1 << 20);
  std::vector<std::pair<std::string, uint64_t>> hits;
  auto note = [&](const char* ch) {
    return [&, ch](const std::string& name, uint64_t n) { hits.emplace_back(name + "@" + ch, n); };
  };
  relay::Redactor out_r({{"API_TOKEN", kToken}}, note("stdout"));
  relay::Redactor err_r({{"API_TOKEN", kToken}}, note("stderr"));
  SupervisorOptions o = Options(children_[0]);
  o.client_observer = &rpc.client_side();
  o.server_observer = &rpc.server_side();
  o.stdout_rewriter = &out_r;
  o.stderr_rewriter = &err_r;

  std::string out, err;
  std::thread client([&] {
    Send(kInitialize);
    Send(kInitialized);
    Send(Call(1, "leak"));
    ReadUntil(
        client_out_r_, [](const std::string& s) { return Contains(s, "\"id\": 1"); }, out);
    ReadUntil(
        client_err_r_, [](const std::string& s) { return Contains(s, "for auth"); }, err);
    close(client_in_w_);  // EOF: the server's loop ends
    client_in_w_ = -1;
  });
  int status = Supervise(o);
  client.join();
  EXPECT_EQ(status, 0);
  std::string marker = "[gander:redacted:API_TOKEN]";
  EXPECT_TRUE(Contains(out, "token=" + marker)) << out;
  EXPECT_FALSE(Contains(out, "12345/xyz")) << out;
  EXPECT_FALSE(Contains(out, "\\u00e9-12345")) << out;
  EXPECT_TRUE(Contains(err, "debug: using " + marker + " for auth")) << err;
  EXPECT_FALSE(Contains(err, "12345")) << err;
  EXPECT_EQ(hits.size(), 2u);
}

// The sandbox init reports the extension's exit code before its own exit (whose teardown of
// the namespaces takes a while): a watch sets reported_exit, and the loop ends with that code
// while the "init" (a sleep here, its stdio already closed) is still there for the caller to
// wait for. Without the report the loop would wait for the sleep's exit (status 0).
TEST_F(SupervisorRelay, AReportedExitEndsTheLoopBeforeTheInitIsGone) {
  int out[2], err[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC | O_NONBLOCK), 0);
  ASSERT_EQ(pipe2(err, O_CLOEXEC | O_NONBLOCK), 0);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "sleep", "5", nullptr);
    _exit(127);
  }
  close(out[1]);  // the extension's output is over: EOF at once
  close(err[1]);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  children_.push_back({-1, out[0], err[0], pidfd, pid});
  SupervisorOptions o;
  o.client_in = client_in_r_;
  o.client_out = client_out_w_;
  o.client_err = client_err_w_;
  o.child_out = out[0];
  o.child_err = err[0];
  o.pidfd = pidfd;
  std::optional<int> reported;
  o.reported_exit = &reported;
  int report = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
  o.watches.push_back({report, [&](short) {
                         reported = 42;
                         return false;
                       }});
  int status = Supervise(o);
  close(report);
  EXPECT_EQ(status, 42);
  siginfo_t info{};
  EXPECT_EQ(waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, 0) << "the init was waited for: the report saved nothing";
}

TEST_F(SupervisorRelay, RestartBehindTheRelay) {
  children_.push_back(Spawn());
  events::BoundedEventQueue queue(64);
  relay::RpcMonitor rpc("t", &queue, 1 << 20);
  SupervisorOptions o = Options(children_[0]);
  o.client_observer = &rpc.client_side();
  o.server_observer = &rpc.server_side();
  RestartControl rc;
  rc.rpc = &rpc;
  // The fresh extension's listener, served by a thread of its own (as gander's is).
  int fresh_listener = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::atomic<int> fresh_listener_calls{0};
  std::atomic<bool> fresh_listener_off_main{false};
  int after_turns_seen_by_fresh = -1;
  int after_turns = 0;
  o.after_turn = [&] { ++after_turns; };  // under the loop's lock, on either thread
  const std::thread::id main_thread = std::this_thread::get_id();
  rc.start = [&]() -> std::optional<ExtensionHandles> {
    children_.push_back(Spawn());
    const Spawned& s = children_.back();
    Watch fresh{fresh_listener, [&](short) {
                  uint64_t v;
                  if (read(fresh_listener, &v, sizeof(v)) == sizeof(v)) {
                    fresh_listener_off_main = std::this_thread::get_id() != main_thread;
                    after_turns_seen_by_fresh = after_turns;
                    ++fresh_listener_calls;
                  }
                  return true;
                }};
    fresh.own_thread = true;
    return ExtensionHandles{s.in, s.out, s.err, s.pidfd, -1, {fresh}};
  };
  std::vector<std::string> restarts;
  rc.on_restart = [&](const std::string& why, bool ok) {
    restarts.push_back(why + (ok ? ":ok" : ":failed"));
  };
  o.restart = &rc;
  int trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  o.watches.push_back({trigger, [&](short) {
                         uint64_t v;
                         if (read(trigger, &v, sizeof(v)) == sizeof(v))
                           rc.requested = "token expired";
                         return true;
                       }});
  // A watch of the first extension (its seccomp listener, say): dropped at the restart, so its
  // callback never runs once that extension is gone, even when its fd is ready.
  int old_listener = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int old_listener_calls = 0;
  o.watches.push_back({old_listener,
                       [&](short) {
                         ++old_listener_calls;
                         return true;
                       },
                       /*extension=*/true, /*own_thread=*/true});

  std::string out;
  std::thread client([&] {
    Send(kInitialize);
    ReadUntil(
        client_out_r_, [](const std::string& s) { return Contains(s, "\"id\": 0"); }, out);
    Send(kInitialized);
    Send(Call(1, "hang"));
    Send(Call(2, "echo"));
    ReadUntil(
        client_out_r_, [](const std::string& s) { return Contains(s, "\"id\": 2"); }, out);
    uint64_t one = 1;
    ASSERT_EQ(write(trigger, &one, sizeof(one)), 8);
    // The hung call fails; the replayed initialize's answer never shows.
    ReadUntil(
        client_out_r_, [](const std::string& s) { return Contains(s, "\"id\":1,\"error\""); }, out);
    ASSERT_EQ(write(old_listener, &one, sizeof(one)), 8);
    ASSERT_EQ(write(fresh_listener, &one, sizeof(one)), 8);
    for (int i = 0; i < 1000 && fresh_listener_calls == 0; ++i) usleep(10000);
    Send(Call(3, "echo"));
    ReadUntil(
        client_out_r_, [](const std::string& s) { return Contains(s, "\"id\": 3"); }, out);
    close(client_in_w_);
    client_in_w_ = -1;
  });
  int status = Supervise(o);
  client.join();
  close(trigger);
  close(old_listener);
  close(fresh_listener);
  EXPECT_EQ(old_listener_calls, 0) << "the old extension's watch outlived it";
  EXPECT_EQ(fresh_listener_calls, 1) << "the fresh extension's threaded watch never ran";
  EXPECT_TRUE(fresh_listener_off_main);
  EXPECT_GT(after_turns, after_turns_seen_by_fresh) << "after_turn follows a threaded callback";
  EXPECT_EQ(status, 0);
  ASSERT_EQ(children_.size(), 2u);
  EXPECT_EQ(restarts, std::vector<std::string>{"token expired:ok"});
  std::string first = std::to_string(children_[0].pid), second = std::to_string(children_[1].pid);
  EXPECT_TRUE(Contains(out, "\"version\": \"" + first + "\"")) << out;
  EXPECT_FALSE(Contains(out, "\"version\": \"" + second + "\"")) << "swallowed\n" << out;
  EXPECT_TRUE(Contains(out, "pid " + first + " echo")) << out;
  EXPECT_TRUE(Contains(out, "pid " + second + " echo")) << "answered by the fresh one\n" << out;
  EXPECT_TRUE(Contains(
      out,
      R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"gander: the extension was restarted (token expired))"))
      << out;
  EXPECT_EQ(rpc.swallowed(), 1u);
  // Every line the client got is one JSON-RPC message.
  relay::JsonRpcParser parser;
  size_t start = 0;
  for (size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1) {
    EXPECT_TRUE(parser.Parse(out.substr(start, nl - start), false).json)
        << out.substr(start, nl - start);
  }
  // The aborted call is reported as a `tool` event.
  struct Sink : events::EventSink {
    std::vector<events::Event> events;
    void Publish(const events::Event& e) override { events.push_back(e); }
  } sink;
  queue.Drain(sink, std::chrono::seconds(1));
  std::vector<std::string> outcomes;
  for (const events::Event& e : sink.events) {
    if (const auto* t = std::get_if<events::ToolEvent>(&e.payload)) {
      outcomes.push_back(t->name + "#" + t->request_id + ":" + t->outcome);
    }
  }
  EXPECT_EQ(outcomes, (std::vector<std::string>{"echo#2:ok", "hang#1:aborted", "echo#3:ok"}));
}

}  // namespace
}  // namespace gander::monitor
