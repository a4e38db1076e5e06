// One sandbox `gander mcp` holds: a `gander run` of its own (the same construction, policy,
// monitor, broker and events as any wrapped extension) whose extension is the executor
// (executor.h), reached over gander run's stdio relay. Dies with the server: the gander run
// process gets PDEATHSIG, its sandbox dies with it (sandbox/sandbox.h).
//
// Threads: one Call at a time (the server queues calls per sandbox); Send, Abort, alive and
// CloseInput may come from other threads while a Call runs; Stop waits for a running Call to
// return (Abort first makes it return at once).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gander::mcp {

struct LaunchOptions {
  std::string gander;                  // this binary
  std::string extension;               // the name in metrics and the audit log
  std::string workspace;               // host directory, bound read-write into the sandbox
  std::vector<std::string> run_flags;  // --profile/--policy, --no-namespaces, --backend, ...
  std::string log_level = "warn";
};

class HeldSandbox {
 public:
  // Starts `gander run ... -- gander mcp exec` and waits for the executor's hello (what
  // isolation is in force), up to `timeout`.
  static Result<HeldSandbox> Start(const LaunchOptions& options, std::chrono::milliseconds timeout);
  // Starts it without waiting: the hello is read by Ready (or the first Call). A warm spare is
  // spawned behind the sandbox handed out, and is ready by the next create.
  static Result<HeldSandbox> Spawn(const LaunchOptions& options);
  Status Ready(std::chrono::milliseconds timeout);

  HeldSandbox(HeldSandbox&& other) noexcept { *this = std::move(other); }
  HeldSandbox& operator=(HeldSandbox&& other) noexcept {
    if (this != &other) {
      Stop(std::chrono::milliseconds(0));
      pid_ = other.pid_.exchange(-1);  // the moved-from handle no longer owns it
      pidfd_ = std::move(other.pidfd_);
      to_exec_ = std::move(other.to_exec_);
      from_exec_ = std::move(other.from_exec_);
      buffer_ = std::move(other.buffer_);
      next_id_ = other.next_id_.load();
      hello_ = std::move(other.hello_);
      hello_id_ = std::exchange(other.hello_id_, 0);
      extension_ = std::move(other.extension_);
    }
    return *this;
  }
  ~HeldSandbox() { Stop(std::chrono::milliseconds(0)); }

  // One request to the executor; its `result` (or the error it answered). `timeout` is the
  // server's backstop: past it the sandbox is killed. `cancelled`, set from another thread
  // (then Cancel), stops the call even when set before the request reached the executor.
  Result<nlohmann::json> Call(const std::string& method, const nlohmann::json& params,
                              std::chrono::milliseconds timeout,
                              const std::atomic<bool>* cancelled = nullptr);

  // A request whose answer is not waited for (skipped by the next Call): a host-side tool's
  // record, which gander run's relay logs as a tool call of this sandbox's extension.
  void Send(const std::string& method, const nlohmann::json& params);

  // Ends a sandbox whose call is running, from another thread: SIGTERM to gander run (which
  // tears the sandbox down); the running Call then returns an error at once.
  void Abort();
  bool busy() const { return calls_ > 0; }
  // Asks the executor to stop the running call (a command_run's process group is killed; it
  // answers with `cancelled`). From another thread; nothing if no call runs.
  void Cancel();
  void SendCancel(int64_t id);

  // Closes the executor's stdin (gander run then ends the sandbox and removes its files),
  // waits up to `grace`, then SIGKILLs gander run. Idempotent.
  void Stop(std::chrono::milliseconds grace);

  // EOF to the executor without waiting (Stop then waits): ends many sandboxes in parallel.
  void CloseInput() {
    std::lock_guard lock(write_mu_);
    to_exec_.Reset();
  }
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const nlohmann::json& hello() const { return hello_; }

 private:
  HeldSandbox() = default;
  void Notify(const std::string& method);
  Result<nlohmann::json> Await(int64_t id, std::chrono::steady_clock::time_point deadline);
  Result<std::string> ReadLine(std::chrono::steady_clock::time_point deadline);
  bool WriteLine(const std::string& line);

  std::recursive_mutex call_mu_;  // Call, Ready, Stop: the reading side and the process
  std::mutex write_mu_;           // whole lines to the executor's stdin
  std::mutex signal_mu_;          // Abort's kill against Stop's waitpid (no stale pid)
  std::atomic<int> calls_{0};
  std::atomic<int64_t> running_id_{0};  // the running Call's request, once written (0: none)
  std::atomic<pid_t> pid_{-1};
  UniqueFd pidfd_, to_exec_, from_exec_;
  std::string buffer_;
  std::atomic<int64_t> next_id_{1};
  nlohmann::json hello_;
  int64_t hello_id_ = 0;  // the initialize not yet answered (0: none)
  std::string extension_;
};

}  // namespace gander::mcp
