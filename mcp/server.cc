#include "mcp/server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/remove_tree.h"
#include "common/unique_fd.h"
#include "mcp/tools.h"
#include "mcp/tree_copy.h"

namespace gander::mcp {
namespace {

using json = nlohmann::json;
constexpr size_t kMaxRequestLine = 64u << 20;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Answers come from the calls' threads: each line is written whole, under this lock.
std::mutex stdout_mu;

bool WriteLine(const json& message) {
  std::string line = Dump(message) + "\n";
  std::lock_guard lock(stdout_mu);
  for (size_t done = 0; done < line.size();) {
    ssize_t n = write(1, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

json RpcError(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

std::string StreamText(const json& r, const char* stream) {
  std::string s = std::string(stream);
  std::string text = r.value(s, std::string());
  uint64_t cut = r.value(s + "_cut", uint64_t{0});
  std::string out;
  if (!text.empty() || cut) {
    out += "--- " + s;
    if (cut)
      out += " (" + std::to_string(cut) + " of " +
             std::to_string(r.value(s + "_bytes", uint64_t{0})) + " bytes cut)";
    out += " ---\n" + text;
    if (!text.ends_with("\n")) out += "\n";
  }
  return out;
}

// The text the model reads; the same facts are in structuredContent.
std::string Summary(const std::string& tool, const json& r) {
  if (tool == "command_run" || tool == "python_run") {
    std::string head;
    if (r.value("timed_out", false)) {
      head = "timed out after " + std::to_string(r.value("duration_ms", 0)) + " ms";
    } else if (tool == "command_run") {
      head = r["exit_code"].is_number()
                 ? "exit " + std::to_string(r["exit_code"].get<int>())
                 : "killed by signal " + std::to_string(r.value("signal", 0));
    } else {
      head = r.value("ok", false) ? "ok" : "error";
    }
    std::string text = head + " (" + std::to_string(r.value("duration_ms", 0)) + " ms, sandbox " +
                       r.value("sandbox", std::string()) + ")\n" + StreamText(r, "stdout") +
                       StreamText(r, "stderr");
    if (r.contains("value")) text += "--- value ---\n" + r["value"].get<std::string>() + "\n";
    if (r.contains("error") && r["error"].is_string()) text += r["error"].get<std::string>() + "\n";
    return text;
  }
  if (tool == "file_read" && r.contains("content")) {
    std::string text = r["content"].get<std::string>();
    if (r.value("cut", uint64_t{0})) {
      text += "\n[... " + std::to_string(r["cut"].get<uint64_t>()) + " more bytes not read ...]";
    }
    return text;
  }
  return r.dump(2, ' ', false, json::error_handler_t::replace);
}

json ToolResult(const std::string& tool, const Result<json>& result) {
  if (!result) {
    return {{"content", json::array({{{"type", "text"}, {"text", result.error().Describe()}}})},
            {"isError", true}};
  }
  bool failed = (tool == "command_run" && !(*result)["exit_code"].is_number()) ||
                (tool == "command_run" && (*result)["exit_code"] != 0) ||
                (tool == "python_run" && !result->value("ok", false));
  return {{"content", json::array({{{"type", "text"}, {"text", Summary(tool, *result)}}})},
          {"structuredContent", *result},
          {"isError", failed}};
}

// The order of the calls to one sandbox: a ticket taken as each request is read, served in
// turn. Calls to other sandboxes, and the tools that name none, do not wait.
class Lanes {
 public:
  uint64_t Take(const std::string& lane) {
    std::lock_guard lock(mu_);
    return lanes_[lane].next++;
  }
  void Wait(const std::string& lane, uint64_t ticket) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return lanes_[lane].serving == ticket; });
  }
  void Done(const std::string& lane) {
    std::lock_guard lock(mu_);
    Lane& l = lanes_[lane];
    if (++l.serving == l.next) lanes_.erase(lane);
    cv_.notify_all();
  }

 private:
  struct Lane {
    uint64_t next = 0, serving = 0;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Lane> lanes_;
};

// The sandbox whose order a tools/call keeps: the one it names (or the default one); none for
// sandbox_list, sandbox_kill (it must reach a sandbox whose call runs) and an unnamed create.
std::string LaneOf(const json& msg) {
  const json& params = msg["params"];
  std::string tool = params["name"];
  json args = params.value("arguments", json::object());
  if (!args.is_object() || tool == "sandbox_list" || tool == "sandbox_kill") return "";
  const char* key = tool == "sandbox_create" ? "name" : "sandbox";
  auto it = args.find(key);
  if (it != args.end() && it->is_string()) return it->get<std::string>();
  return tool == "sandbox_create" ? "" : "default";
}

class Session {
 public:
  explicit Session(PoolOptions pool) : pool_(std::move(pool)) {}
  ~Session() { Join(); }

  // Answers a request: a tools/call on a thread of its own (in its sandbox's turn), anything
  // else at once. False when stdout is gone.
  bool Dispatch(const json& msg) {
    bool is_call = msg.is_object() && msg.contains("id") &&
                   msg.value("method", "") == "tools/call" && msg.contains("params") &&
                   msg["params"].is_object() && msg["params"].contains("name") &&
                   msg["params"]["name"].is_string();
    if (!is_call) {
      json answer = Handle(msg);
      return answer.is_null() || WriteLine(answer);
    }
    Reap();
    std::string lane = LaneOf(msg);
    uint64_t ticket = lane.empty() ? 0 : lanes_.Take(lane);
    const std::string id = msg["id"].dump();
    auto token = std::make_shared<std::atomic<bool>>(false);
    {
      std::lock_guard lock(calls_mu_);
      pending_[id] = {"", token};
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread worker([this, msg, lane, ticket, id, token, done] {
      if (!lane.empty()) lanes_.Wait(lane, ticket);
      {
        std::lock_guard lock(calls_mu_);
        if (msg["params"]["name"] == "command_run") pending_[id].sandbox = lane;
      }
      json answer = *token ? json() : Handle(msg, token.get());
      {
        std::lock_guard lock(calls_mu_);
        pending_.erase(id);
      }
      // A cancelled request is not answered (MCP); a gone stdout is the main loop's to find.
      if (!*token) WriteLine(answer);
      if (!lane.empty()) lanes_.Done(lane);
      *done = true;
    });
    workers_.push_back({std::move(worker), done});
    return true;
  }

  // Waits for every call's thread (after KillAll they end at once).
  void Join() {
    for (auto& w : workers_) w.thread.join();
    workers_.clear();
  }

  // Answers one request; null for notifications.
  json Handle(const json& msg, const std::atomic<bool>* cancelled = nullptr) {
    if (!msg.is_object() || msg.value("jsonrpc", "") != "2.0" || !msg.contains("method") ||
        !msg["method"].is_string()) {
      return RpcError(msg.is_object() ? msg.value("id", json()) : json(), -32600,
                      "invalid JSON-RPC request");
    }
    std::string method = msg["method"];
    if (method == "notifications/cancelled") Cancel(msg.value("params", json::object()));
    if (!msg.contains("id")) return nullptr;  // notifications: initialized, cancelled, ...
    const json& id = msg["id"];
    json params = msg.value("params", json::object());
    if (method == "initialize") return Initialize(id, params);
    if (method == "ping") return {{"jsonrpc", "2.0"}, {"id", id}, {"result", json::object()}};
    if (method == "tools/list") {
      return {{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"tools", ToolList()}}}};
    }
    if (method == "tools/call") {
      if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
        return RpcError(id, -32602, "tools/call: params.name is required");
      }
      json args = params.value("arguments", json::object());
      if (!args.is_object()) return RpcError(id, -32602, "tools/call: arguments must be an object");
      std::string tool = params["name"];
      auto result = Call(tool, args, cancelled);
      if (!result) return RpcError(id, -32602, result.error().message);
      return {{"jsonrpc", "2.0"}, {"id", id}, {"result", *result}};
    }
    return RpcError(id, -32601, "method not found: " + method);
  }

  SandboxPool& pool() { return pool_; }

 private:
  // A call still queued is dropped; a running command_run is stopped by its executor.
  void Cancel(const json& params) {
    if (!params.is_object() || !params.contains("requestId")) return;
    const std::string id = params["requestId"].dump();
    std::lock_guard lock(calls_mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // answered already, or never asked
    *it->second.cancelled = true;      // before the executor is told: see HeldSandbox::Call
    if (!it->second.sandbox.empty()) pool_.Cancel(it->second.sandbox);
  }

  void Reap() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (!*it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      it = workers_.erase(it);
    }
  }

  json Initialize(const json& id, const json& params) {
    const auto& versions = SupportedProtocolVersions();
    std::string asked = params.is_object() ? params.value("protocolVersion", "") : "";
    std::string version = versions.front();
    for (const auto& v : versions) {
      if (v == asked) version = v;
    }
    return {{"jsonrpc", "2.0"},
            {"id", id},
            {"result",
             {{"protocolVersion", version},
              {"capabilities", {{"tools", {{"listChanged", false}}}}},
              {"serverInfo", {{"name", "gander-mcp"}, {"version", "0.1.0"}}},
              {"instructions",
               "Run shell commands, code you write, package installs and anything that handles "
               "content from the internet here (command_run, python_run), not in a shell on the "
               "user's machine: these sandboxes cannot see the user's files, keys or network."}}}};
  }

  Result<json> Call(const std::string& tool, const json& args, const std::atomic<bool>* cancelled) {
    Result<json> r = MakeError("");
    if (tool == "command_run" || tool == "python_run" || tool.starts_with("file_")) {
      if (tool != "file_write" && tool != "file_read" && tool != "file_list" &&
          tool != "command_run" && tool != "python_run") {
        return MakeError("unknown tool " + tool);
      }
      r = pool_.Execute(tool, args, cancelled);
    } else if (tool == "sandbox_create") {
      r = pool_.Create(args);
    } else if (tool == "sandbox_fork") {
      r = pool_.Fork(args);
    } else if (tool == "sandbox_export") {
      r = pool_.Export(args);
    } else if (tool == "sandbox_kill") {
      r = pool_.Kill(args);
    } else if (tool == "sandbox_renew") {
      r = pool_.Renew(args);
    } else if (tool == "sandbox_list") {
      r = pool_.List();
    } else {
      return MakeError("unknown tool " + tool);
    }
    return ToolResult(tool, r);
  }

  SandboxPool pool_;
  Lanes lanes_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Worker> workers_;  // the main thread's only
  std::mutex calls_mu_;
  struct Pending {
    std::string sandbox;  // a command_run's, once its turn has come
    std::shared_ptr<std::atomic<bool>> cancelled;
  };
  std::map<std::string, Pending> pending_;  // by request id
};

// A process of our own that outlives a SIGKILLed server just long enough to remove the
// session's directory: it waits for EOF on a pipe only the server holds, then removes it and
// exits. Returns the server's end of the pipe.
UniqueFd StartReaper(const std::string& dir) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return UniqueFd();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return UniqueFd();
  }
  if (pid == 0) {
    // Nothing of the server's stdio stays open here: Goose must see stdout and stderr close.
    // A session of its own: Goose stops an extension by killing its process group, which
    // must not take the reaper with it before it has removed the session's directory.
    setsid();
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) signal(sig, SIG_IGN);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    dup2(fds[0], 3);
    close_range(4, ~0u, 0);
    char c;
    while (read(3, &c, 1) != 0 && (errno == EINTR || errno == EAGAIN)) {
    }
    RemoveTree(dir);
    _exit(0);
  }
  close(fds[0]);
  return UniqueFd(fds[1]);
}

// The session's directory: one per server, under $TMPDIR (else /tmp).
Result<std::string> MakeStateDir() {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gander-mcp-XXXXXX";
  if (!mkdtemp(pattern.data())) return ErrnoError("mkdtemp " + pattern);
  return pattern;
}

// Reads what stdin has, answering each complete line; false at EOF.
bool ServeInput(Session& session, std::string& buffer) {
  char buf[65536];
  ssize_t n = read(0, buf, sizeof(buf));
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  buffer.append(buf, static_cast<size_t>(n));
  for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
    std::string line = buffer.substr(0, nl);
    buffer.erase(0, nl + 1);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json msg = json::parse(line, nullptr, false);
    json answer;
    if (msg.is_discarded()) {
      answer = RpcError(nullptr, -32700, "parse error: not JSON");
    } else if (msg.is_array()) {  // a batch (2024-11-05, 2025-03-26)
      answer = json::array();
      for (const auto& m : msg) {
        json one = session.Handle(m);
        if (!one.is_null()) answer.push_back(std::move(one));
      }
      if (answer.empty()) answer = nullptr;
    } else {
      if (!session.Dispatch(msg)) return false;
      continue;
    }
    if (!answer.is_null() && !WriteLine(answer)) return false;
  }
  if (buffer.size() > kMaxRequestLine) {
    buffer.clear();
    if (!WriteLine(RpcError(nullptr, -32700, "request line too long"))) return false;
  }
  return true;
}

// `~` and `~/...` in mcp.yaml's paths are the user's home, as a shell would have them.
std::string ExpandHome(const std::string& path) {
  if (path != "~" && !path.starts_with("~/")) return path;
  const char* home = getenv("HOME");
  if (!home || !*home) return path;
  return std::string(home) + path.substr(1);
}

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> versions = {"2025-06-18", "2025-03-26", "2024-11-05"};
  return versions;
}

std::string DefaultConfigPath() {
  if (const char* xdg = getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/gander/mcp.yaml";
  }
  const char* home = getenv("HOME");
  return std::string(home && *home ? home : "/nonexistent") + "/.config/gander/mcp.yaml";
}

Status LoadConfig(const std::string& path, bool must_exist, PoolOptions& pool) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (!must_exist) return {};
    return ErrnoError(path);
  }
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (!root.IsMap()) return MakeError(path + ": expected a mapping of settings");
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      auto where = [&] {
        return path + ":" + std::to_string(kv.first.Mark().line + 1) + ":" +
               std::to_string(kv.first.Mark().column + 1) + ": ";
      };
      if (key == "export_dir") {
        pool.export_dir = ExpandHome(v.as<std::string>());
      } else if (key == "export_max_file_bytes") {
        pool.export_max_file_bytes = v.as<uint64_t>();
      } else if (key == "profile") {
        pool.profile = v.as<std::string>();
      } else if (key == "network_policy") {
        pool.network_policy = ExpandHome(v.as<std::string>());
      } else if (key == "files_roots") {
        if (!v.IsSequence())
          return MakeError(where() + "files_roots: expected a list of directories");
        for (const auto& r : v) pool.files_roots.push_back(ExpandHome(r.as<std::string>()));
      } else if (key == "ttl") {
        auto ttl = ParseTtl(json(v.as<std::string>()));
        if (!ttl) return MakeError(where() + ttl.error().message);
        pool.default_ttl = *ttl;
      } else if (key == "warm_spares") {
        pool.warm_spares = v.as<bool>();
      } else if (key == "max_sandboxes") {
        pool.max_sandboxes = v.as<size_t>();
      } else {
        return MakeError(where() + "unknown key '" + key +
                         "' (expected export_dir, profile, network_policy, files_roots, ttl, "
                         "max_sandboxes, warm_spares, export_max_file_bytes)");
      }
    }
  } catch (const YAML::Exception& e) {
    return MakeError(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return {};
}

int Serve(ServerOptions options) {
  PoolOptions& pool = options.pool;
  if (pool.files_roots.empty()) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) && std::string(cwd) != "/") pool.files_roots.push_back(cwd);
  }
  for (auto& root : pool.files_roots) {
    char real[PATH_MAX];
    if (realpath(root.c_str(), real)) root = real;
  }
  auto state = MakeStateDir();
  if (!state) {
    spdlog::error("mcp: {}", state.error().Describe());
    return 125;
  }
  pool.state_dir = *state;
  UniqueFd reaper = StartReaper(pool.state_dir);
  if (!pool.install_policy.empty()) {  // sandbox_create's install step: the registries only
    std::string path = pool.state_dir + "/install-policy.yaml";
    UniqueFd f(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!f || write(f.get(), pool.install_policy.data(), pool.install_policy.size()) !=
                  static_cast<ssize_t>(pool.install_policy.size())) {
      spdlog::warn("mcp: {}: {}", path, strerror(errno));
    }
  }
  signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, sig);
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  UniqueFd signal_fd(signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));
  spdlog::info("mcp: serving on stdio; sandboxes under {}", pool.state_dir);

  int status = 0;
  {
    Session session(pool);
    std::string buffer;
    session.pool().Refill();
    // The warm spares are started once the caller has been quiet for kRefillAfter: not while
    // its next call (the first command in the sandbox just handed out) is on its way.
    constexpr int kRefillAfter = 50;
    bool refill_due = false;
    for (;;) {
      auto next = session.pool().Expire();
      pollfd fds[2] = {{0, POLLIN, 0}, {signal_fd.get(), POLLIN, 0}};
      int timeout = next ? static_cast<int>(std::min<int64_t>(next->count() + 1, INT32_MAX)) : -1;
      if (refill_due && (timeout < 0 || timeout > kRefillAfter)) timeout = kRefillAfter;
      int n = poll(fds, 2, timeout);
      if (n < 0 && errno != EINTR) break;
      if (n == 0) {
        session.pool().Expire();
        session.pool().Refill();  // behind the answers, and an expired default's successor
        refill_due = false;
        continue;
      }
      refill_due = true;
      if (fds[1].revents & POLLIN) {
        signalfd_siginfo info;
        if (read(signal_fd.get(), &info, sizeof(info)) > 0) {
          spdlog::info("mcp: signal {}: ending the session", info.ssi_signo);
          status = 128 + static_cast<int>(info.ssi_signo);
        }
        break;
      }
      if (fds[0].revents && !ServeInput(session, buffer)) break;
    }
    session.pool().KillAll();  // the calls still running answer an error
    session.Join();
    session.pool().KillAll();  // what a call was starting as the session ended
  }
  RemoveTree(pool.state_dir);
  return status;
}

}  // namespace gander::mcp
