#include "mcp/sandbox_pool.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include "common/path.h"
#include "common/remove_tree.h"
#include "common/unique_fd.h"
#include "mcp/tree_copy.h"
#include "mcp/workspace_path.h"

namespace gander::mcp {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kDefaultCommandTimeout = std::chrono::seconds(120);
constexpr auto kStopGrace = std::chrono::milliseconds(1500);

int64_t MsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count() / 1000;
}

double MsSinceExact(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string Iso8601(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string StringArg(const json& args, const char* key, const std::string& fallback = "") {
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Names no copy-in may carry, even inside an allowed root: keys and tokens (the default
// profile's deny list, by name).
}  // namespace

bool IsSecretName(const std::string& path) {
  for (const char* name : {"/.ssh", "/.gnupg", "/.aws", "/.azure", "/.kube", "/.docker", "/.netrc",
                           "/.git-credentials", "/.npmrc", "/.pypirc", "/.config/gcloud",
                           "/.config/goose", "/.config/gander", "/.local/state/gander",
                           "/.local/share/gander", "/.local/share/keyrings"}) {
    std::string n = name;
    if (path.ends_with(n) || path.find(n + "/") != std::string::npos) return true;
  }
  return false;
}

Result<std::chrono::seconds> ParseTtl(const json& value) {
  double seconds = 0;
  if (value.is_number()) {
    seconds = value.get<double>();
  } else if (value.is_string()) {
    std::string s = value.get<std::string>();
    char* end = nullptr;
    seconds = std::strtod(s.c_str(), &end);
    std::string unit = end ? std::string(end) : "";
    if (end == s.c_str()) return MakeError("ttl " + s + ": expected a duration such as 30m or 1h");
    if (unit == "m")
      seconds *= 60;
    else if (unit == "h")
      seconds *= 3600;
    else if (unit == "d")
      seconds *= 86400;
    else if (!unit.empty() && unit != "s") {
      return MakeError("ttl " + s + ": the unit must be s, m, h or d");
    }
  } else {
    return MakeError("ttl: expected a duration such as \"30m\" or a number of seconds");
  }
  if (seconds < 1 || seconds > 7 * 86400) return MakeError("ttl: between 1 s and 7 days");
  return std::chrono::seconds(static_cast<int64_t>(seconds));
}

Status CheckSandboxName(const std::string& name) {
  if (name.empty() || name.size() > 48 || name[0] == '.' || name[0] == '-') {
    return MakeError("sandbox name '" + name + "': 1 to 48 characters, not starting with . or -");
  }
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return MakeError("sandbox name '" + name + "': only letters, digits, _ - and .");
    }
  }
  return {};
}

std::string SandboxPool::Isolation(const json& hello) const {
  if (o_.backend == "gvisor") return "gvisor";
  bool seccomp = hello.value("seccomp", false);
  bool landlock = hello.value("landlock_abi", 0) > 0;
  bool userns = hello.value("user_namespace", false);
  if (seccomp && landlock && userns) return "full";
  if (seccomp && landlock) return "landlock";
  return seccomp ? "seccomp" : "basic";
}

json SandboxPool::Describe(const Sandbox& s) const {
  auto left = std::chrono::duration_cast<std::chrono::seconds>(s.expires - Clock::now());
  json d = {{"sandbox", s.name},
            {"extension", o_.server_name + "." + s.name},
            {"isolation", Isolation(s.held->hello())},
            {"network", s.network},
            {"workspace", s.workspace},
            {"ttl_seconds", s.ttl.count()},
            {"expires_at", Iso8601(s.expires_wall)},
            {"seconds_left", std::max<int64_t>(left.count(), 0)}};
  if (!s.forked_from.empty()) d["forked_from"] = s.forked_from;
  return d;
}

// A host-side tool as a tool call of the sandbox's own extension, through its executor (see
// executor.cc HostSideRecord): gander run's relay counts and logs it like command_run.
void SandboxPool::Record(Sandbox& s, const std::string& tool, json summary, bool failed) {
  if (failed) summary["failed"] = true;
  s.held->Send("tools/call", {{"name", tool}, {"arguments", summary}});
}

std::string SandboxPool::NextCreateName() const {
  if (!Taken("default")) return "default";
  for (uint64_t n = tasks_ + 1;; ++n) {
    std::string name = "task-" + std::to_string(n);
    if (!Taken(name)) return name;
  }
}

std::string SandboxPool::NextForkName() const {
  for (uint64_t n = forks_ + 1;; ++n) {
    std::string name = "fork-" + std::to_string(n);
    if (!Taken(name)) return name;
  }
}

LaunchOptions SandboxPool::LaunchFor(const std::string& name, const std::string& network,
                                     const std::string& workspace) const {
  LaunchOptions launch{.gander = o_.gander,
                       .extension = o_.server_name + "." + name,
                       .workspace = workspace,
                       .run_flags = o_.run_flags,
                       .log_level = o_.log_level};
  if (network == "install") {
    launch.run_flags.insert(launch.run_flags.end(),
                            {"--policy", o_.state_dir + "/install-policy.yaml"});
  } else if (network == "policy") {
    bool file = o_.network_policy.find('/') != std::string::npos;
    launch.run_flags.insert(launch.run_flags.end(),
                            {file ? "--policy" : "--profile", o_.network_policy});
  } else {
    launch.run_flags.insert(launch.run_flags.end(), {"--profile", o_.profile});
  }
  return launch;
}

// A sandbox started ahead under the name the next unnamed create (or fork) will take, so that
// its extension name in metrics and the audit log is already the right one; network off.
void SandboxPool::Refill() {
  Lock lock(mu_);
  if (!o_.warm_spares || closed_) return;
  std::set<std::string> wanted = {NextCreateName()};
  if (!sandboxes_.empty()) wanted.insert(NextForkName());  // a fork needs a sandbox first
  for (auto it = spares_.begin(); it != spares_.end();) {
    if (wanted.count(it->first) && it->second.held->alive()) {
      ++it;
      continue;
    }
    it->second.held->Stop(std::chrono::milliseconds(0));
    RemoveTree(it->second.dir);
    it = spares_.erase(it);
  }
  for (const auto& name : wanted) {
    if (spares_.count(name)) continue;
    Spare spare{.dir = o_.state_dir + "/" + name, .held = nullptr};
    if (mkdir(spare.dir.c_str(), 0700) != 0) continue;
    if (mkdir((spare.dir + "/ws").c_str(), 0755) != 0) {
      RemoveTree(spare.dir);
      continue;
    }
    auto held = HeldSandbox::Spawn(LaunchFor(name, "off", spare.dir + "/ws"));
    if (!held) {
      spdlog::warn("mcp: a warm spare {}: {}", name, held.error().Describe());
      RemoveTree(spare.dir);
      continue;
    }
    spare.held = std::make_shared<HeldSandbox>(std::move(held).value());
    spares_.emplace(name, std::move(spare));
  }
}

Result<SandboxPool::Sandbox*> SandboxPool::Launch(Lock& lock, const std::string& name,
                                                  const std::string& network,
                                                  std::chrono::seconds ttl,
                                                  const std::string& copy_from,
                                                  const std::vector<std::string>& files,
                                                  json& report, bool dir_made) {
  if (closed_) return MakeError("the session is ending");
  if (sandboxes_.size() + making_.size() >= o_.max_sandboxes) {
    return MakeError("already " + std::to_string(sandboxes_.size()) +
                     " sandboxes: kill one first (sandbox_kill)");
  }
  auto started = Clock::now();
  Sandbox s;
  s.name = name;
  if (auto spare = spares_.find(name);
      !dir_made && spare != spares_.end() && network == "off" && spare->second.held->alive()) {
    s.dir = spare->second.dir;  // already running: the files go into its workspace
    s.held = std::move(spare->second.held);
    spares_.erase(spare);
    report["warm"] = true;
  } else {
    s.dir = o_.state_dir + "/" + name;
    if (!dir_made && mkdir(s.dir.c_str(), 0700) != 0) return ErrnoError("mkdir " + s.dir);
    if (!dir_made && mkdir((s.dir + "/ws").c_str(), 0755) != 0) {
      RemoveTree(s.dir);
      return ErrnoError("mkdir " + s.dir + "/ws");
    }
    // Started first: the files are copied in while it comes up.
    auto held = HeldSandbox::Spawn(LaunchFor(name, network, s.dir + "/ws"));
    if (!held) {
      RemoveTree(s.dir);
      return held.error();
    }
    s.held = std::make_shared<HeldSandbox>(std::move(held).value());
    report["warm"] = false;
  }
  s.workspace = s.dir + "/ws";
  // The slow part (copies, the start) without the lock: other calls go on meanwhile.
  making_.insert(name);
  lock.unlock();
  Status made = Populate(s, copy_from, files, report, started);
  lock.lock();
  making_.erase(name);
  if (made && closed_) made = MakeError("the session is ending");
  if (!made) {
    s.held->Stop(std::chrono::milliseconds(0));
    RemoveTree(s.dir);
    return made.error();
  }
  s.network = network;
  s.ttl = ttl;
  s.expires = Clock::now() + ttl;
  s.expires_wall = std::chrono::system_clock::now() + ttl;
  report["timing_ms"]["total"] = MsSinceExact(started);
  ended_.erase(name);
  auto [it, _] = sandboxes_.emplace(name, std::move(s));
  spdlog::info("mcp: sandbox {} up in {} ms, isolation {}", name, MsSince(started),
               Isolation(it->second.held->hello()));
  return &it->second;
}

Status SandboxPool::Populate(Sandbox& s, const std::string& copy_from,
                             const std::vector<std::string>& files, json& report,
                             Clock::time_point started) {
  UniqueFd dir(open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  CopyStats stats;
  if (!copy_from.empty()) {
    UniqueFd from(open(copy_from.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    Status copied = from ? CopyTree(from.get(), "ws", dir.get(), "ws", {}, stats)
                         : Status(ErrnoError("open " + copy_from));
    if (!copied) return copied.error().Context("fork: copying the workspace");
  }
  const double copy_ms = MsSinceExact(started);
  UniqueFd ws(openat(dir.get(), "ws", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  for (const auto& file : files) {
    auto base = file.substr(file.find_last_of('/') + 1);
    // Key stores and gander's own state are left out wherever they are in the tree: copying
    // in a directory (a home, say) never copies its keys.
    Status copied =
        CopyTree(AT_FDCWD, file, ws.get(), base,
                 {.follow_top = true, .keep_symlinks = true, .skip = IsSecretName}, stats);
    if (!copied) return copied.error().Context("copying " + file);
  }
  if (Status ready = s.held->Ready(kStartTimeout); !ready) return ready.error();
  if (!report.contains("copied"))
    report["copied"] = {{"files", stats.files},
                        {"dirs", stats.dirs},
                        {"bytes", stats.bytes},
                        {"symlinks", stats.symlinks},
                        {"skipped", stats.skipped}};
  report["timing_ms"] = {{"copy", copy_ms}};
  return {};
}

Result<json> SandboxPool::Create(const json& args) {
  Lock lock(mu_);
  std::string name = StringArg(args, "name", "");
  if (name.empty()) {
    name = NextCreateName();
    if (name != "default") tasks_ = std::stoull(name.substr(5));
  }
  if (Status ok = CheckSandboxName(name); !ok) return ok.error();
  if (Taken(name)) return MakeError("a sandbox named " + name + " exists already");
  auto ttl = args.contains("ttl") ? ParseTtl(args["ttl"]) : Result(o_.default_ttl);
  if (!ttl) return ttl.error();
  std::string network = StringArg(args, "network", "off");
  if (network != "off" && network != "policy") return MakeError("network: \"off\" or \"policy\"");
  if (network == "policy" && o_.network_policy.empty()) {
    return MakeError(
        "network \"policy\": no network policy is configured (mcp.yaml network_policy)");
  }
  std::vector<std::string> files;
  if (auto it = args.find("files"); it != args.end()) {
    if (!it->is_array()) return MakeError("files: a list of host paths");
    for (const auto& f : *it) {
      if (!f.is_string()) return MakeError("files: a list of host paths");
      auto real = RealPath(f.get<std::string>());
      if (!real) return ErrnoError("files: " + f.get<std::string>());
      bool allowed = false;
      for (const auto& root : o_.files_roots) allowed = allowed || IsWithin(*real, root);
      if (allowed && IsSecretName(*real)) {
        return MakeError("files: " + *real +
                         " is a key store or gander's own state: never copied into a sandbox");
      }
      if (!allowed) {
        return MakeError("files: " + *real +
                         " is not under a directory this server may copy from (" +
                         (o_.files_roots.empty() ? std::string("none") : o_.files_roots[0]) +
                         (o_.files_roots.size() > 1 ? ", ..." : "") + ")");
      }
      files.push_back(*real);
    }
  }
  std::vector<std::string> install;
  if (auto it = args.find("install"); it != args.end()) {
    if (!it->is_string() && !it->is_array()) return MakeError("install: a list of shell commands");
    for (const auto& c : it->is_string() ? json::array({*it}) : *it) {
      if (!c.is_string() || c.get<std::string>().empty())
        return MakeError("install: a list of shell commands");
      install.push_back(c.get<std::string>());
    }
  }
  json report;
  if (!install.empty()) {
    if (spares_.count(name)) {  // its workspace is the install step's: not a spare's
      spares_[name].held->Stop(std::chrono::milliseconds(0));
      RemoveTree(spares_[name].dir);
      spares_.erase(name);
    }
    making_.insert(name);  // the install step runs unlocked: its name is taken meanwhile
    lock.unlock();
    Status installed = RunInstallStep(name, files, install, report);
    lock.lock();
    making_.erase(name);
    if (!installed) return installed.error();
    files.clear();  // copied in before the install step
  }
  auto s = Launch(lock, name, network, *ttl, "", files, report, !install.empty());
  if (!s) {
    if (!install.empty()) RemoveTree(o_.state_dir + "/" + name);
    return s.error();
  }
  Record(**s, "sandbox_create",
         {{"files", files.size()}, {"network", network}, {"install", install.size()}});
  json out = Describe(**s);
  out.update(report);
  return out;
}

Status SandboxPool::RunInstallStep(const std::string& name, const std::vector<std::string>& files,
                                   const std::vector<std::string>& commands, json& report) {
  const std::string dir = o_.state_dir + "/" + name;
  if (mkdir(dir.c_str(), 0700) != 0) return ErrnoError("mkdir " + dir);
  auto fail = [&](Error e) {
    RemoveTree(dir);
    return e.Context("install");
  };
  if (mkdir((dir + "/ws").c_str(), 0755) != 0) return fail(ErrnoError("mkdir " + dir + "/ws"));
  UniqueFd ws(open((dir + "/ws").c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  CopyStats stats;
  for (const auto& file : files) {
    Status copied =
        CopyTree(AT_FDCWD, file, ws.get(), file.substr(file.find_last_of('/') + 1),
                 {.follow_top = true, .keep_symlinks = true, .skip = IsSecretName}, stats);
    if (!copied) return fail(copied.error().Context("copying " + file));
  }
  auto started = HeldSandbox::Start(LaunchFor(name, "install", dir + "/ws"), kStartTimeout);
  if (!started) return fail(started.error());
  auto held = std::make_shared<HeldSandbox>(std::move(started).value());
  {
    Lock lock(mu_);
    if (closed_) return fail(MakeError("the session is ending"));
    install_steps_.insert(held);
  }
  struct Unlist {  // KillAll ends it while it is listed
    SandboxPool& pool;
    std::shared_ptr<HeldSandbox> held;
    ~Unlist() {
      Lock lock(pool.mu_);
      pool.install_steps_.erase(held);
    }
  } unlist{*this, held};
  json steps = json::array();
  for (const auto& cmd : commands) {
    auto answer =
        held->Call("tools/call",
                   {{"name", "command_run"},
                    {"arguments", {{"cmd", cmd}, {"timeout", 600}, {"max_output_bytes", 4000}}}},
                   std::chrono::seconds(620));
    if (!answer) return fail(answer.error());
    json r = answer->value("structuredContent", json::object());
    steps.push_back({{"cmd", cmd},
                     {"exit_code", r.value("exit_code", -1)},
                     {"stdout", r.value("stdout", "")},
                     {"stderr", r.value("stderr", "")}});
    if (r.value("exit_code", -1) != 0) {
      held->Stop(kStopGrace);
      return fail(MakeError("`" + cmd + "` exited with " +
                            std::to_string(r.value("exit_code", -1)) + ": " +
                            r.value("stderr", std::string())));
    }
  }
  held->Stop(kStopGrace);  // the registries' reach ends with it
  report["install"] = steps;
  report["copied"] = {{"files", stats.files},
                      {"dirs", stats.dirs},
                      {"bytes", stats.bytes},
                      {"symlinks", stats.symlinks},
                      {"skipped", stats.skipped}};
  return {};
}

Result<SandboxPool::Sandbox*> SandboxPool::Resolve(Lock& lock, const json& args) {
  std::string name = StringArg(args, "sandbox", "default");
  if (auto it = sandboxes_.find(name); it != sandboxes_.end()) {
    if (!it->second.held->alive()) {
      Remove(name);
      ended_[name] = "its process exited";
    } else {
      return &it->second;
    }
  }
  if (auto why = ended_.find(name); why != ended_.end()) {
    return MakeError("sandbox " + name + " has ended (" + why->second +
                     "); create a new one with sandbox_create");
  }
  if (name != "default") return MakeError("no sandbox named " + name + " (sandbox_list)");
  if (making_.count(name)) return MakeError("sandbox " + name + " is being created; try again");
  json report;
  return Launch(lock, name, "off", o_.default_ttl, "", {}, report);
}

Result<json> SandboxPool::Execute(const std::string& tool, const json& args,
                                  const std::atomic<bool>* cancelled) {
  if (tool.starts_with("file_")) {
    if (!args.contains("path") && tool != "file_list") return MakeError("`path` is required");
    if (args.contains("path")) {
      if (!args["path"].is_string()) return MakeError("`path`: a string");
      auto checked = CheckWorkspacePath(args["path"].get<std::string>());
      if (!checked) return checked.error();
    }
  }
  Lock lock(mu_);
  auto s = Resolve(lock, args);
  if (!s) return s.error();
  const std::string name = (*s)->name;
  std::shared_ptr<HeldSandbox> held = (*s)->held;
  json forwarded = args;
  forwarded.erase("sandbox");
  auto timeout = kDefaultCommandTimeout;
  if (auto t = args.find("timeout"); t != args.end() && t->is_number() && t->get<double>() > 0) {
    timeout = std::chrono::seconds(static_cast<int64_t>(std::min(t->get<double>(), 3600.0)));
  }
  auto started = Clock::now();
  // The executor enforces `timeout`; the server's backstop allows for start-up and output.
  // Other calls (other sandboxes, sandbox_list, sandbox_kill of this one) go on meanwhile.
  lock.unlock();
  auto answer = held->Call("tools/call", {{"name", tool}, {"arguments", forwarded}},
                           timeout + std::chrono::seconds(10), cancelled);
  lock.lock();
  if (!answer) {
    auto it = sandboxes_.find(name);
    if (it == sandboxes_.end() || it->second.held != held) {  // ended while the call ran
      auto why = ended_.find(name);
      return MakeError("sandbox " + name + " ended during this call (" +
                       (why != ended_.end() ? why->second : std::string("the session ended")) +
                       ")");
    }
    Remove(name);
    ended_[name] = "it stopped answering: " + answer.error().Describe();
    return answer.error().Context("sandbox " + name);
  }
  json result = answer->value("structuredContent", json::object());
  if (!result.is_object()) result = json::object();
  if (result.contains("error"))
    return MakeError(result["error"].is_string() ? result["error"].get<std::string>()
                                                 : std::string("the sandbox refused"));
  result["sandbox"] = name;
  result["round_trip_ms"] = MsSinceExact(started);
  return result;
}

Result<json> SandboxPool::Fork(const json& args) {
  Lock lock(mu_);
  auto parent = Resolve(lock, args);
  if (!parent) return parent.error();
  std::string name = StringArg(args, "name", "");
  if (name.empty()) {
    name = NextForkName();
    forks_ = std::stoull(name.substr(5));
  }
  if (Status ok = CheckSandboxName(name); !ok) return ok.error();
  if (Taken(name)) return MakeError("a sandbox named " + name + " exists already");
  auto ttl = args.contains("ttl") ? ParseTtl(args["ttl"]) : Result((*parent)->ttl);
  if (!ttl) return ttl.error();
  json report;
  // The parent's executor is idle: a fork waits for the calls to the parent before it
  // (server.cc), so its workspace is copied as the last call left it.
  const std::string from = (*parent)->name, from_dir = (*parent)->dir;
  std::shared_ptr<HeldSandbox> from_held = (*parent)->held;
  auto child = Launch(lock, name, (*parent)->network, *ttl, from_dir, {}, report);
  if (!child) return child.error();
  (*child)->forked_from = from;
  from_held->Send("tools/call", {{"name", "sandbox_fork"}, {"arguments", {{"to", name}}}});
  Record(**child, "sandbox_fork", {{"from", from}});
  json out = Describe(**child);
  out.update(report);
  out["note"] = "files are copied; running processes and python_run state are not";
  return out;
}

Result<json> SandboxPool::Export(const json& args) {
  if (o_.export_dir.empty()) {
    return MakeError(
        "no export directory is configured: the user sets export_dir in "
        "~/.config/gander/mcp.yaml (or gander mcp --export-dir DIR); nothing leaves a sandbox "
        "otherwise");
  }
  Lock lock(mu_);
  auto s = Resolve(lock, args);
  if (!s) return s.error();
  Sandbox sandbox;
  sandbox.name = (*s)->name;
  sandbox.workspace = (*s)->workspace;
  sandbox.held = (*s)->held;
  lock.unlock();  // a copy of any size: not on the other calls' time
  auto done = ExportFrom(sandbox, args);
  Record(sandbox, "sandbox_export",
         done ? json{{"files", done->value("files", 0)}, {"bytes", done->value("bytes", 0)}}
              : json{{"error", done.error().Describe()}},
         !done);
  return done;
}

Result<json> SandboxPool::ExportFrom(Sandbox& sandbox, const json& args) {
  if (!args.contains("path") || !args["path"].is_string()) return MakeError("`path` is required");
  auto rel = CheckWorkspacePath(args["path"].get<std::string>());
  if (!rel) return rel.error();
  UniqueFd ws(open(sandbox.workspace.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd out(open(o_.export_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!ws || !out) return ErrnoError("open");
  // Into EXPORT_DIR/SANDBOX/, the path's last component; symlinks are not copied out.
  if (mkdirat(out.get(), sandbox.name.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoError("mkdir " + o_.export_dir + "/" + sandbox.name);
  }
  UniqueFd dest(
      openat(out.get(), sandbox.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dest) return ErrnoError("open " + o_.export_dir + "/" + sandbox.name);
  std::string parent = rel->find('/') == std::string::npos ? "." : rel->substr(0, rel->rfind('/'));
  std::string leaf = rel->substr(rel->find('/') == std::string::npos ? 0 : rel->rfind('/') + 1);
  if (*rel == ".") {
    parent = ".";
    leaf = ".";
  }
  auto from = OpenBeneath(ws.get(), parent, O_RDONLY | O_DIRECTORY);
  if (!from) return from.error();
  UniqueFd from_fd(*from);
  CopyStats stats;
  Status copied = CopyTree(from_fd.get(), leaf, dest.get(), leaf == "." ? "." : leaf,
                           {.follow_top = false,
                            .keep_symlinks = false,
                            .max_bytes = 1ull << 30,
                            .max_file_bytes = o_.export_max_file_bytes},
                           stats);
  if (!copied) return copied.error().Context("export");
  std::string to = o_.export_dir + "/" + sandbox.name + (leaf == "." ? "" : "/" + leaf);
  spdlog::info("mcp: exported {}:{} to {} ({} files, {} bytes)", sandbox.name, *rel, to,
               stats.files, stats.bytes);
  return json{{"sandbox", sandbox.name},
              {"path", *rel},
              {"exported_to", to},
              {"files", stats.files},
              {"bytes", stats.bytes},
              {"skipped_symlinks", stats.skipped - stats.too_large},
              {"skipped_too_large", stats.too_large},
              {"max_file_bytes", o_.export_max_file_bytes}};
}

Result<json> SandboxPool::Kill(const json& args) {
  Lock lock(mu_);
  std::string name = StringArg(args, "sandbox", "");
  if (!sandboxes_.count(name)) return MakeError("no sandbox named " + name);
  Record(sandboxes_.at(name), "sandbox_kill", json::object());  // answered before its EOF
  Remove(name);
  ended_[name] = "killed by sandbox_kill";
  return json{{"sandbox", name}, {"killed", true}};
}

Result<json> SandboxPool::Renew(const json& args) {
  Lock lock(mu_);
  std::string name = StringArg(args, "sandbox", "default");
  auto it = sandboxes_.find(name);
  if (it == sandboxes_.end()) return MakeError("no sandbox named " + name);
  auto ttl = args.contains("ttl") ? ParseTtl(args["ttl"]) : Result(it->second.ttl);
  if (!ttl) return ttl.error();
  it->second.ttl = *ttl;
  it->second.expires = Clock::now() + *ttl;
  it->second.expires_wall = std::chrono::system_clock::now() + *ttl;
  Record(it->second, "sandbox_renew", {{"ttl_seconds", ttl->count()}});
  return Describe(it->second);
}

json SandboxPool::List() const {
  Lock lock(mu_);
  json list = json::array();
  for (const auto& [name, s] : sandboxes_) list.push_back(Describe(s));
  json ended = json::object();
  for (const auto& [name, why] : ended_) ended[name] = why;
  json spares = json::array();
  for (const auto& [name, spare] : spares_) spares.push_back(name);
  return {{"sandboxes", list}, {"ended", ended}, {"warm_spares", spares}};
}

void SandboxPool::Cancel(const std::string& sandbox) {
  Lock lock(mu_);
  if (auto it = sandboxes_.find(sandbox); it != sandboxes_.end()) it->second.held->Cancel();
}

void SandboxPool::Remove(const std::string& name) {
  auto it = sandboxes_.find(name);
  if (it == sandboxes_.end()) return;
  if (it->second.held->busy()) it->second.held->Abort();  // its call answers an error
  it->second.held->Stop(kStopGrace);
  RemoveTree(it->second.dir);
  sandboxes_.erase(it);
}

std::optional<std::chrono::milliseconds> SandboxPool::Expire() {
  Lock lock(mu_);
  auto now = Clock::now();
  std::vector<std::string> due;
  for (const auto& [name, s] : sandboxes_) {
    if (s.expires <= now) due.push_back(name);
  }
  for (const auto& name : due) {
    spdlog::info("mcp: sandbox {}: TTL reached, killed", name);
    Remove(name);
    ended_[name] = "its TTL ran out";
  }
  std::optional<std::chrono::milliseconds> next;
  for (const auto& [name, s] : sandboxes_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(s.expires - now);
    if (!next || left < *next) next = std::max(left, std::chrono::milliseconds(0));
  }
  return next;
}

void SandboxPool::KillAll() {
  Lock lock(mu_);
  closed_ = true;
  // A running call or install step is ended at once: no command outlives the session.
  for (auto& [name, s] : sandboxes_) {
    if (s.held->busy()) s.held->Abort();
  }
  for (const auto& held : install_steps_) held->Abort();
  // All executors get EOF at once, then each is waited for: one grace period, not N.
  for (auto& [name, s] : sandboxes_) s.held->CloseInput();
  for (auto& [name, s] : spares_) s.held->CloseInput();
  for (auto& [name, s] : sandboxes_) s.held->Stop(kStopGrace);
  for (auto& [name, s] : spares_) s.held->Stop(kStopGrace);
  for (auto& [name, s] : sandboxes_) RemoveTree(s.dir);
  for (auto& [name, s] : spares_) RemoveTree(s.dir);
  sandboxes_.clear();
  spares_.clear();
}

}  // namespace gander::mcp
