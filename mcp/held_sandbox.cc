#include "mcp/held_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <thread>

#include "common/exec_signals.h"
#include "common/exec_strings.h"

namespace gander::mcp {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// An executor's answer can carry a file_read of 4 MiB, JSON-escaped: beyond this it is not an
// answer but an attack on the server's memory.
constexpr size_t kMaxAnswer = 48u << 20;

int MsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX));
}

// PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, and the server's calls
// run on threads that end: every gander run is forked by this one thread, which lives as long
// as the server. Returns fork's result (the child runs `in_child`, which does not return).
pid_t ForkFromLastingThread(const std::function<void()>& in_child) {
  struct Spawner {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::packaged_task<pid_t()>> tasks;
  };
  static Spawner* spawner = [] {
    auto* s = new Spawner;  // never freed: the thread uses it until the process ends
    std::thread([s] {
      for (;;) {
        std::unique_lock lock(s->mu);
        s->cv.wait(lock, [s] { return !s->tasks.empty(); });
        auto task = std::move(s->tasks.front());
        s->tasks.pop_front();
        lock.unlock();
        task();
      }
    }).detach();
    return s;
  }();
  std::packaged_task<pid_t()> task([&] {
    pid_t pid = fork();
    if (pid == 0) {
      in_child();
      _exit(127);
    }
    return pid < 0 ? -errno : pid;
  });
  auto forked = task.get_future();
  {
    std::lock_guard lock(spawner->mu);
    spawner->tasks.push_back(std::move(task));
  }
  spawner->cv.notify_one();
  pid_t pid = forked.get();
  if (pid < 0) errno = -pid;
  return pid < 0 ? -1 : pid;
}

}  // namespace

Result<HeldSandbox> HeldSandbox::Start(const LaunchOptions& o, std::chrono::milliseconds timeout) {
  auto s = Spawn(o);
  if (!s) return s.error();
  if (Status ok = s->Ready(timeout); !ok) return ok.error();
  return std::move(s).value();
}

Result<HeldSandbox> HeldSandbox::Spawn(const LaunchOptions& o) {
  std::vector<std::string> args = {o.gander, "--log-level", o.log_level,   "run",
                                   "--name", o.extension,   "--workspace", o.workspace};
  args.insert(args.end(), o.run_flags.begin(), o.run_flags.end());
  args.insert(args.end(), {"--", o.gander, "mcp", "exec"});
  const ExecStrings argv(std::move(args));

  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd in_read(in[0]), in_write(in[1]);
  if (pipe2(out, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd out_read(out[0]), out_write(out[1]);
  const pid_t parent = getpid();
  pid_t pid = ForkFromLastingThread([&] {
    // gander run ends its sandbox and removes its files on SIGTERM; the server's death is
    // the end of the session.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    ResetSignalsForExec();  // the server's held and ignored signals are not gander run's
    dup2(in_read.get(), 0);
    dup2(out_write.get(), 1);
    if (chdir(o.workspace.c_str()) != 0) _exit(125);
    execv(o.gander.c_str(), argv.get());
    _exit(127);
  });
  if (pid < 0) return ErrnoError("fork");
  HeldSandbox s;
  s.pid_ = pid;
  s.pidfd_.Reset(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  s.to_exec_ = std::move(in_write);
  s.from_exec_ = std::move(out_read);
  fcntl(s.from_exec_.get(), F_SETFL, O_NONBLOCK);
  // The initialize request goes out now; its answer (the executor's hello) is read by Ready.
  s.extension_ = o.extension;
  s.hello_id_ = s.next_id_++;
  std::string line = json{{"jsonrpc", "2.0"},
                          {"id", s.hello_id_},
                          {"method", "initialize"},
                          {"params",
                           {{"protocolVersion", "2025-06-18"},
                            {"capabilities", json::object()},
                            {"clientInfo", {{"name", "gander-mcp"}, {"version", "0.1.0"}}}}}}
                         .dump() +
                     "\n";
  if (!s.WriteLine(line)) {
    s.Stop(std::chrono::milliseconds(0));
    return ErrnoError("sandbox " + o.extension + ": writing its initialize");
  }
  return s;
}

bool HeldSandbox::WriteLine(const std::string& line) {
  std::lock_guard lock(write_mu_);
  for (size_t done = 0; done < line.size();) {
    ssize_t n = write(to_exec_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Status HeldSandbox::Ready(std::chrono::milliseconds timeout) {
  std::lock_guard lock(call_mu_);
  if (hello_id_ == 0) return {};
  auto hello = Await(hello_id_, Clock::now() + timeout);
  hello_id_ = 0;
  if (!hello) {
    Stop(std::chrono::milliseconds(0));
    return hello.error().Context("sandbox " + extension_ + " did not start");
  }
  hello_ = hello->value("_meta", json::object()).value("gander/isolation", json::object());
  Notify("notifications/initialized");
  return {};
}

Result<std::string> HeldSandbox::ReadLine(Clock::time_point deadline) {
  for (;;) {
    if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > kMaxAnswer) return MakeError("the executor's answer is too long");
    // gander run's end is seen even while something it left behind holds the pipe open.
    pollfd fds[2] = {{from_exec_.get(), POLLIN, 0}, {pidfd_ ? pidfd_.get() : -1, POLLIN, 0}};
    int left = MsLeft(deadline);
    if (left == 0) return Error{ETIMEDOUT, "no answer from the sandbox in time"};
    int n = poll(fds, 2, left);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;
    if (!fds[0].revents && fds[1].revents) {
      return MakeError("the sandbox is gone (its process exited)");
    }
    char buf[65536];
    ssize_t got = read(from_exec_.get(), buf, sizeof(buf));
    if (got > 0) {
      buffer_.append(buf, static_cast<size_t>(got));
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      return MakeError("the sandbox is gone (its process exited)");
    }
  }
}

void HeldSandbox::Send(const std::string& method, const json& params) {
  if (pid_ <= 0) return;
  std::string line =
      json{{"jsonrpc", "2.0"}, {"id", next_id_++}, {"method", method}, {"params", params}}.dump(
          -1, ' ', false, json::error_handler_t::replace) +
      "\n";
  WriteLine(line);  // a gone executor is found at the next call
}

void HeldSandbox::Notify(const std::string& method) {
  WriteLine(json{{"jsonrpc", "2.0"}, {"method", method}}.dump() + "\n");
}

void HeldSandbox::Cancel() {
  if (int64_t id = running_id_; id != 0) SendCancel(id);
}

void HeldSandbox::SendCancel(int64_t id) {
  WriteLine(json{{"jsonrpc", "2.0"},
                 {"method", "notifications/cancelled"},
                 {"params", {{"requestId", id}, {"reason", "cancelled by the client"}}}}
                .dump() +
            "\n");
}

void HeldSandbox::Abort() {
  std::lock_guard lock(signal_mu_);  // not reaped yet: the pid is still gander run's
  if (pid_ > 0) kill(pid_, SIGTERM);
}

Result<json> HeldSandbox::Call(const std::string& method, const json& params,
                               std::chrono::milliseconds timeout,
                               const std::atomic<bool>* cancelled) {
  ++calls_;
  std::lock_guard lock(call_mu_);
  struct Done {
    std::atomic<int>& calls;
    std::atomic<int64_t>& running;
    ~Done() {
      running = 0;
      --calls;
    }
  } done{calls_, running_id_};
  if (pid_ <= 0) return MakeError("the sandbox is gone");
  if (Status ok = Ready(timeout); !ok) return ok.error();
  const int64_t id = next_id_++;
  std::string line =
      json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump(
          -1, ' ', false, json::error_handler_t::replace) +
      "\n";
  if (!WriteLine(line)) {
    Stop(std::chrono::milliseconds(0));
    return MakeError("the sandbox is gone (its stdin is closed)");
  }
  // Written, then published: a cancel never reaches the executor before its request. A
  // cancel that read running_id_ before this store set `cancelled` first: seen here.
  running_id_ = id;
  if (cancelled && *cancelled) SendCancel(id);
  return Await(id, Clock::now() + timeout);
}

Result<json> HeldSandbox::Await(int64_t id, Clock::time_point deadline) {
  for (;;) {
    auto got = ReadLine(deadline);
    if (!got) {
      Stop(std::chrono::milliseconds(0));  // a sandbox that does not answer is not kept
      return got.error();
    }
    json answer = json::parse(*got, nullptr, false);
    if (!answer.is_object() || answer.value("id", json()) != id) continue;  // not ours
    if (answer.contains("error")) {
      return MakeError("sandbox: " + answer["error"].value("message", std::string("error")));
    }
    if (!answer.contains("result")) return MakeError("sandbox: an answer without a result");
    return answer["result"];
  }
}

void HeldSandbox::Stop(std::chrono::milliseconds grace) {
  std::lock_guard call(call_mu_);  // after a running Call (Abort makes it return)
  if (pid_ <= 0) return;
  CloseInput();  // EOF: the executor exits, gander run tears the sandbox down
  bool exited = false;
  if (pidfd_ && grace.count() > 0) {
    pollfd fd{pidfd_.get(), POLLIN, 0};
    exited = poll(&fd, 1, static_cast<int>(grace.count())) == 1;
  }
  if (!exited) {
    // SIGTERM first: gander run removes its private directories on the way out.
    kill(pid_, SIGTERM);
    pollfd fd{pidfd_.get(), POLLIN, 0};
    if (!pidfd_ || poll(&fd, 1, 2000) != 1) kill(pid_, SIGKILL);
  }
  std::lock_guard lock(signal_mu_);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  pidfd_.Reset();
  from_exec_.Reset();
}

}  // namespace gander::mcp
