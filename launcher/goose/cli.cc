#include "launcher/goose/cli.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/unix_socket.h"
#include "exporters/collector_paths.h"
#include "launcher/goose/config.h"
#include "launcher/goose/probe.h"
#include "launcher/run.h"
#include "sandbox/isolation.h"
#include "sandbox/seccomp_filter.h"

namespace gander::launcher {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes through a temp file and a rename, keeping the file's mode.
Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".gander-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return ErrnoError("cannot write " + tmp);
    out << text;
    if (!out.flush()) return ErrnoError("cannot write " + tmp);
  }
  std::error_code ec;
  if (fs::exists(path, ec)) fs::permissions(tmp, fs::status(path).permissions(), ec);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return ErrnoError("cannot rename " + tmp);
  return {};
}

std::string SelfPath() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("gander") : self.string();
}

// PATH lookup the way execvp does it, for the doctor.
bool CommandFound(const std::string& cmd) {
  if (cmd.empty()) return false;
  if (cmd.find('/') != std::string::npos) return access(cmd.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + cmd;
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

bool CollectorReachable(const std::string& socket_path) { return ConnectUnix(socket_path).ok(); }

// The live check: the wrapped entry started as Goose starts it (goose_probe.h); on failure its
// last stderr lines and what gander refused meanwhile, each with the change that allows it.
bool StartAsGoose(const goose::ExtensionEntry& e, std::ostream& out) {
  std::string audit = DefaultAuditLogPath(e.key);
  std::error_code ec;
  uintmax_t before = fs::exists(audit, ec) ? fs::file_size(audit, ec) : 0;
  if (ec) before = 0;
  // Goose's working directory: the entry's cwd, else where Goose was started (here).
  std::string cwd = e.cwd.empty() ? fs::current_path(ec).string() : e.cwd;
  auto limit = std::chrono::seconds(std::min(e.timeout, 60));
  goose::ProbeResult r = goose::ProbeExtension(e.argv, e.envs, cwd, limit);
  auto text = ReadFile(audit);
  std::string log = text ? *text : std::string();
  std::vector<goose::Refusal> refusals =
      goose::RefusalsIn(log.size() >= before ? log.substr(before) : log);
  out << "  starts as Goose   " << (r.ok ? "yes, initialize + tools/list: " : "NO: ") << r.detail
      << "\n";
  if (!refusals.empty() || !r.ok) {
    out << "  refused by gander " << refusals.size() << (refusals.empty() ? "" : ":") << "\n";
  }
  for (const goose::Refusal& x : refusals) {
    out << "    " << x.what << "\n      to allow it: " << x.fix << " in "
        << (e.policy.empty() ? "a policy of your own (extends: " + e.profile + ")" : e.policy)
        << "\n";
  }
  if (!r.ok) {
    out << "  last stderr lines:\n";
    for (const std::string& line : r.stderr_tail) out << "    | " << line << "\n";
  }
  return r.ok;
}

}  // namespace

std::string DefaultGooseConfig() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/goose/config.yaml";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.config/goose/config.yaml";
}

int GooseWrap(const std::string& config, bool unwrap, bool dry_run, std::ostream& out) {
  auto text = ReadFile(config);
  if (!text) {
    std::cerr << "gander: " << text.error().Describe() << "\n";
    return kExitUsage;
  }
  std::vector<std::string> dirs = UserPolicyDirs();
  goose::WrapSettings settings;
  settings.gander_path = SelfPath();
  settings.policy_dir = dirs.empty() ? std::string() : dirs.front();
  const char* home = std::getenv("HOME");
  settings.home = home ? home : "";
  settings.is_directory = [](const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec);
  };
  auto result = unwrap ? goose::UnwrapConfig(*text) : goose::WrapConfig(*text, settings);
  if (!result) {
    std::cerr << "gander: " << config << ": " << result.error().Describe() << "\n";
    return kExitUsage;
  }
  out << goose::UnifiedDiff(*text, result->text, config, config);
  bool has_mcp = false;
  for (const goose::ExtensionEntry& e : result->extensions) {
    if (!e.note.empty()) std::cerr << "gander: extension '" << e.key << "': " << e.note << "\n";
    has_mcp = has_mcp || e.gander_mcp;
  }
  if (!unwrap && !has_mcp) {
    // No prompt (wrap runs unattended): one line saying how.
    std::cerr << "gander: to run the agent's own commands and code in a sandbox too, add `gander "
                 "mcp` to Goose (extensions: {gander: {type: stdio, cmd: "
              << settings.gander_path << ", args: [mcp], enabled: true}}; docs/mcp.md)\n";
  }
  if (result->text == *text) {
    out << config << ": nothing to " << (unwrap ? "unwrap" : "wrap") << "\n";
    return 0;
  }
  if (dry_run) {
    out << "(dry run: nothing written)\n";
    return 0;
  }
  // The first backup is the one before gander ever touched the file: never overwritten.
  std::string backup = config + ".gander-backup";
  std::error_code ec;
  if (!fs::exists(backup, ec)) {
    auto written = WriteFileAtomically(backup, *text);
    if (!written) {
      std::cerr << "gander: " << written.error().Describe() << "\n";
      return 1;
    }
    out << "backup: " << backup << "\n";
  }
  for (const goose::ExtensionEntry& e : result->extensions) {
    if (!e.changed || !e.policy_file) continue;
    if (fs::exists(e.policy_file->path, ec)) {
      out << "policy: " << e.policy_file->path << " exists; left as it is\n";
      continue;
    }
    fs::create_directories(fs::path(e.policy_file->path).parent_path(), ec);
    auto written = WriteFileAtomically(e.policy_file->path, e.policy_file->yaml);
    if (!written) {
      std::cerr << "gander: " << written.error().Describe() << "\n";
      return 1;
    }
    out << "policy: " << e.policy_file->path << "\n";
  }
  auto written = WriteFileAtomically(config, result->text);
  if (!written) {
    std::cerr << "gander: " << written.error().Describe() << "\n";
    return 1;
  }
  out << config << ": " << (unwrap ? "unwrapped" : "wrapped") << "\n";
  return 0;
}

int GooseDoctor(const std::string& config, std::ostream& out, bool start, bool json) {
  auto text = ReadFile(config);
  if (!text) {
    std::cerr << "gander: " << text.error().Describe() << "\n";
    return kExitUsage;
  }
  auto entries = goose::InspectConfig(*text);
  if (!entries) {
    std::cerr << "gander: " << config << ": " << entries.error().Describe() << "\n";
    return kExitUsage;
  }
  sandbox::KernelFeatures f = sandbox::ProbeKernel(/*try_user_namespaces=*/true);
  bool seccomp = f.seccomp_filter && sandbox::CompileSeccompFilter().ok();
  const char* level =
      sandbox::LevelName(sandbox::LevelOf(f.user_namespaces, f.landlock_abi > 0, seccomp));
  std::string socket = exporters::DefaultCollectorSocket();
  bool collector = CollectorReachable(socket);
  std::ostringstream screen;
  nlohmann::json report = {{"config", config},
                           {"isolation_level", level},
                           {"collector", {{"socket", socket}, {"reachable", collector}}},
                           {"extensions", nlohmann::json::array()}};
  screen << config << "\n"
         << "isolation level   " << level << " (gander doctor explains)\n"
         << "collector         " << (collector ? "reachable" : "not running (started on demand)")
         << " at " << socket << "\n";
  int problems = 0;
  for (const goose::ExtensionEntry& e : *entries) {
    nlohmann::json entry = {{"key", e.key}, {"type", e.type}, {"enabled", e.enabled}};
    screen << "\n"
           << e.key << " (" << (e.type.empty() ? "?" : e.type) << (e.enabled ? "" : ", disabled")
           << ")\n";
    if (e.type == "builtin" && e.key == "developer" && e.enabled) {
      // Its shell runs in Goose's own process, as the user: no wrapper reaches it.
      bool has_mcp = false;
      for (const goose::ExtensionEntry& other : *entries) {
        for (size_t i = 0; i + 1 < other.command.size(); ++i) {
          if (other.command[i].ends_with("gander") && other.command[i + 1] == "mcp") has_mcp = true;
        }
      }
      screen << "  the developer shell runs every command as you, outside any sandbox\n";
      if (!has_mcp) {
        screen << "  add `gander mcp` (cmd: gander, args: [mcp]) and tell Goose to prefer it for "
                  "commands and code (docs/mcp.md)\n";
      }
    }
    if (e.type != "stdio") {
      screen << "  not a stdio extension: gander does not wrap it\n";
      report["extensions"].push_back(entry);
      continue;
    }
    entry["wrapped"] = e.wrapped;
    if (e.gander_mcp) {
      entry["gander_mcp"] = true;
      screen << "  gander mcp        its sandboxes run under gander itself: not wrapped\n";
      report["extensions"].push_back(entry);
      continue;
    }
    screen << "  wrapped           " << (e.wrapped ? "yes" : "no") << "\n";
    bool policy_ok = true;
    if (e.wrapped) {
      auto policy = LoadEffectivePolicy(e.policy, e.policy.empty() ? e.profile : "");
      std::string which = e.policy.empty() ? "profile " + e.profile : e.policy;
      screen << "  policy            " << which << ": "
             << (policy ? "valid" : policy.error().Describe()) << "\n";
      entry["policy"] = {{"source", which}, {"valid", policy.ok()}};
      if (!policy) entry["policy"]["error"] = policy.error().Describe();
      if (!policy && e.enabled) ++problems;
      policy_ok = policy.ok();
    }
    bool found = !e.command.empty() && CommandFound(e.command[0]);
    screen << "  command           " << (e.command.empty() ? "" : e.command[0]) << ": "
           << (found ? "found" : "not found") << "\n";
    entry["command"] = {{"program", e.command.empty() ? "" : e.command[0]}, {"found", found}};
    if (!found && e.enabled) ++problems;
    if (!e.wrapped && e.enabled) ++problems;
    if (e.wrapped && e.enabled && found && policy_ok && start) {
      std::string missing;
      for (const std::string& name : e.secrets) {
        if (!e.envs.contains(name) && std::getenv(name.c_str()) == nullptr) missing += " " + name;
      }
      if (!missing.empty()) {
        screen << "  starts as Goose   not tried: env_keys" << missing
               << " not in this environment (Goose reads them from its keyring)\n";
        entry["started"] = "not tried";
      } else {
        bool ok = StartAsGoose(e, screen);
        entry["started"] = ok ? "ok" : "failed";
        if (!ok) ++problems;
      }
    }
    report["extensions"].push_back(entry);
  }
  report["problems"] = problems;
  if (json) {
    out << report.dump(2) << "\n";
  } else {
    out << screen.str();
  }
  return problems == 0 ? 0 : 1;
}

}  // namespace gander::launcher
