#include "launcher/goose_cli.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "exporters/collector_paths.h"
#include "launcher/goose_config.h"
#include "launcher/isolation.h"
#include "launcher/run.h"
#include "launcher/seccomp_filter.h"

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

bool CollectorReachable(const std::string& socket_path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    close(fd);
    return false;
  }
  socket_path.copy(addr.sun_path, socket_path.size());
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
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
  goose::WrapSettings settings{SelfPath(), dirs.empty() ? std::string() : dirs.front()};
  auto result = unwrap ? goose::UnwrapConfig(*text) : goose::WrapConfig(*text, settings);
  if (!result) {
    std::cerr << "gander: " << config << ": " << result.error().Describe() << "\n";
    return kExitUsage;
  }
  out << goose::UnifiedDiff(*text, result->text, config, config);
  for (const goose::ExtensionEntry& e : result->extensions) {
    if (!e.note.empty()) std::cerr << "gander: extension '" << e.key << "': " << e.note << "\n";
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

int GooseDoctor(const std::string& config, std::ostream& out) {
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
  KernelFeatures f = ProbeKernel(/*try_user_namespaces=*/true);
  bool seccomp = f.seccomp_filter && CompileSeccompFilter().ok();
  const char* level = LevelName(LevelOf(f.user_namespaces, f.landlock_abi > 0, seccomp));
  std::string socket = exporters::DefaultCollectorSocket();
  bool collector = CollectorReachable(socket);
  out << config << "\n"
      << "isolation level   " << level << " (gander doctor explains)\n"
      << "collector         " << (collector ? "reachable" : "not running (started on demand)")
      << " at " << socket << "\n";
  int problems = 0;
  for (const goose::ExtensionEntry& e : *entries) {
    out << "\n"
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
      out << "  the developer shell runs every command as you, outside any sandbox\n";
      if (!has_mcp) {
        out << "  add `gander mcp` (cmd: gander, args: [mcp]) and tell Goose to prefer it for "
               "commands and code (docs/mcp.md)\n";
      }
    }
    if (e.type != "stdio") {
      out << "  not a stdio extension: gander does not wrap it\n";
      continue;
    }
    out << "  wrapped           " << (e.wrapped ? "yes" : "no") << "\n";
    if (e.wrapped) {
      auto policy = LoadEffectivePolicy(e.policy, e.policy.empty() ? e.profile : "");
      out << "  policy            " << (e.policy.empty() ? "profile " + e.profile : e.policy)
          << ": " << (policy ? "valid" : policy.error().Describe()) << "\n";
      if (!policy && e.enabled) ++problems;
    }
    bool found = !e.command.empty() && CommandFound(e.command[0]);
    out << "  command           " << (e.command.empty() ? "" : e.command[0]) << ": "
        << (found ? "found" : "not found") << "\n";
    if (!found && e.enabled) ++problems;
    if (!e.wrapped && e.enabled) ++problems;
  }
  return problems == 0 ? 0 : 1;
}

}  // namespace gander::launcher
