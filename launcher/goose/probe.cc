#include "launcher/goose/probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/exec_signals.h"
#include "common/exec_strings.h"
#include "common/unique_fd.h"

extern char** environ;

namespace gander::launcher::goose {
namespace {

using Clock = std::chrono::steady_clock;

std::string Dirname(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

struct Child {
  pid_t pid = -1;
  UniqueFd in, out, err;
};

bool Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& envs,
           const std::string& cwd, Child& child) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return false;
  UniqueFd in_r(in[0]), out_w(out[1]), err_w(err[1]);
  child.in.Reset(in[1]);
  child.out.Reset(out[0]);
  child.err.Reset(err[0]);
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : envs) env[k] = v;  // Goose: envs on top of its own environment
  const ExecStrings envp = ExecStrings::Environment(env), args(argv);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // Goose: a process group of its own
  ResetSignalsInSpawn(&attr);  // as Goose's children: SIGPIPE is ignored in this process
  int rc = posix_spawnp(&child.pid, args.front(), &actions, &attr, args.get(), envp.get());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0;
}

// A string field, or `fallback` when it is missing, null or not a string.
std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

ProbeResult ProbeExtension(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& envs, const std::string& cwd,
                           std::chrono::milliseconds limit) {
  ProbeResult r;
  Child child;
  if (argv.empty() || !Spawn(argv, envs, cwd, child)) {
    r.detail = "cannot start " + (argv.empty() ? std::string("(no cmd)") : argv[0]);
    return r;
  }
  auto send = [&](const nlohmann::json& msg) {
    std::string line = msg.dump() + "\n";
    return child.in &&
           write(child.in.get(), line.data(), line.size()) == static_cast<ssize_t>(line.size());
  };
  signal(SIGPIPE, SIG_IGN);
  send({{"jsonrpc", "2.0"},
        {"id", 1},
        {"method", "initialize"},
        {"params",
         {{"protocolVersion", "2025-03-26"},
          {"capabilities", nlohmann::json::object()},
          {"clientInfo", {{"name", "gander-goose-doctor"}, {"version", "1"}}}}}});
  std::string out, err;
  int stage = 1;  // waiting for the answer to request `stage`
  const auto deadline = Clock::now() + limit;
  bool closed = false;
  while (stage <= 2 && !closed) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.detail = "no answer to " + std::string(stage == 1 ? "initialize" : "tools/list") +
                 " within " + std::to_string(limit.count() / 1000) + " s";
      break;
    }
    pollfd fds[2] = {{child.out.get(), POLLIN, 0}, {child.err.get(), POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
    char buf[65536];
    if (fds[1].revents) {
      ssize_t n = read(child.err.get(), buf, sizeof buf);
      if (n > 0) err.append(buf, static_cast<size_t>(n));
      if (n <= 0) child.err.Reset();
    }
    if (!fds[0].revents) continue;
    ssize_t n = read(child.out.get(), buf, sizeof buf);
    if (n <= 0) {
      closed = true;
      r.detail = "the extension closed its stdout (exited?) before answering " +
                 std::string(stage == 1 ? "initialize" : "tools/list");
      break;
    }
    out.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = out.find('\n')) != std::string::npos;) {
      std::string line = out.substr(0, nl);
      out.erase(0, nl + 1);
      auto msg = nlohmann::json::parse(line, nullptr, false);
      if (msg.is_discarded() || !msg.is_object()) {
        r.detail = "a line on stdout that is not JSON (Goose would close the session): " +
                   line.substr(0, 120);
        stage = 99;
        break;
      }
      if (!msg.contains("id") || msg["id"] != stage) continue;
      if (msg.contains("error")) {
        r.detail = "error answer: " + msg["error"].dump();
        stage = 99;
        break;
      }
      if (stage == 1) {
        send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
        send({{"jsonrpc", "2.0"},
              {"id", 2},
              {"method", "tools/list"},
              {"params", nlohmann::json::object()}});
        stage = 2;
      } else {
        size_t tools = msg["result"].value("tools", nlohmann::json::array()).size();
        r.ok = true;
        r.detail = std::to_string(tools) + " tools";
        stage = 3;
        break;
      }
    }
  }
  // Goose's stop: close stdin, then the kill of the process group after a grace period.
  child.in.Reset();
  int status = 0;
  auto grace = Clock::now() + std::chrono::seconds(3);
  while (waitpid(child.pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= grace) {
      kill(-child.pid, SIGKILL);
      waitpid(child.pid, &status, 0);
      break;
    }
    if (child.err) {
      pollfd p{child.err.get(), POLLIN, 0};
      if (poll(&p, 1, 50) > 0) {
        char buf[65536];
        ssize_t n = read(child.err.get(), buf, sizeof buf);
        if (n > 0) err.append(buf, static_cast<size_t>(n));
        if (n <= 0) child.err.Reset();
      }
    } else {
      usleep(50 * 1000);
    }
  }
  if (!r.ok && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    r.detail += " (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  }
  std::istringstream lines(err);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  size_t from = all.size() > 10 ? all.size() - 10 : 0;
  r.stderr_tail.assign(all.begin() + static_cast<long>(from), all.end());
  return r;
}

std::vector<Refusal> RefusalsIn(const std::string& audit_lines) {
  std::vector<Refusal> out;
  std::set<std::string> seen;
  std::istringstream in(audit_lines);
  for (std::string line; std::getline(in, line);) {
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_discarded() || !e.is_object()) continue;
    const std::string kind = Str(e, "kind", "");
    // gander's own install phase (npm/uv fetching the package) is not the extension's doing.
    if (Str(e, "phase", "") == "install") continue;
    Refusal r;
    if (kind == "file" && e["file"].is_object()) {
      const auto& f = e["file"];
      const std::string cls = Str(f, "class", ""), path = Str(f, "path", "");
      const std::string access = Str(f, "access", "");
      if (Str(f, "result", "") == "would_deny" || path.empty()) continue;
      if (cls != "outside" && cls != "denied" && Str(f, "result", "") != "denied") continue;
      const bool write = access != "read" && access != "exec" && access != "stat";
      r.what = Str(f, "syscall", "open") + " " + path + " (" + access +
               "): " + (cls == "denied" ? "under a deny rule" : "not in the sandbox");
      r.fix = cls == "denied" ? "a credential path gander hides: remove it from filesystem.deny "
                                "only if the extension must see it"
                              : std::string("filesystem.") + (write ? "write" : "read") + ": [" +
                                    (write ? Dirname(path) : path) + "]";
    } else if (kind == "network" && e["network"].is_object()) {
      const auto& n = e["network"];
      if (Str(n, "result", "") != "denied") continue;
      std::string host = Str(n, "host", Str(n, "ip"));
      std::string port =
          std::to_string(n.contains("port") && n["port"].is_number() ? n["port"].get<int>() : 0);
      r.what = Str(n, "transport", "tcp") + " " + host + ":" + port + ": refused";
      r.fix = "network.allow: [{host: " + host + ", ports: [" + port + "]" +
              (Str(n, "transport", "tcp") == "udp" ? ", protocol: udp" : "") + "}]";
    } else if (kind == "syscall" && e["syscall"].is_object()) {
      const auto& s = e["syscall"];
      if (Str(s, "action", "") != "denied") continue;
      r.what = "syscall " + Str(s, "name", "?") + ": refused (" + Str(s, "errno_name", "") + ")";
      r.fix = "syscalls.allow: add " + Str(s, "name", "?") +
              " if the policy has that list; gander's floor (ptrace, mount, bpf, ...) stays";
    } else {
      continue;
    }
    if (seen.insert(r.what).second) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gander::launcher::goose
