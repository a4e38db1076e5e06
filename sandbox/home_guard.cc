#include "sandbox/home_guard.h"

#include <algorithm>

#include "sandbox/filesystem_plan.h"

namespace gander::sandbox {
namespace {

std::string Get(const std::map<std::string, std::string>& environ, const char* name) {
  auto it = environ.find(name);
  return it == environ.end() || it->second.empty() || it->second[0] != '/' ? "" : it->second;
}

void AddUnique(std::vector<std::string>& out, const std::string& path) {
  if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
}

}  // namespace

std::vector<std::string> ProtectedHomePaths(const std::string& home,
                                            const std::map<std::string, std::string>& environ,
                                            bool installing) {
  std::vector<std::string> out;
  if (home.empty() || home[0] != '/' || home == "/") return out;
  // What runs at the user's next shell, login or session, or program start: a best effort,
  // not a list of every file a program reads its code from (docs/sandbox.md, "The home").
  // Shell start-up and log-out files (bash, sh, ksh, csh, zsh), X and PAM session files, git's
  // own configuration (its pager, hooks path and fsmonitor run commands).
  for (const char* file :
       {".bashrc",          ".bash_profile", ".bash_login", ".bash_logout", ".profile",
        ".kshrc",           ".mkshrc",       ".cshrc",      ".tcshrc",      ".login",
        ".logout",          ".zshrc",        ".zshenv",     ".zprofile",    ".zlogin",
        ".zlogout",         ".xprofile",     ".xsession",   ".xsessionrc",  ".xinitrc",
        ".pam_environment", ".gitconfig"}) {
    AddUnique(out, home + "/" + file);
  }
  // Programs on the user's PATH (~/bin and ~/.cargo/bin are on it by Debian's .profile and
  // rustup), what bash sources from ~/.bashrc.d, Python's user site (a .pth runs at every
  // start), desktop entries, keys and who may log in, user units.
  for (const char* dir : {".local/bin", "bin", ".cargo/bin", ".bashrc.d", ".local/lib",
                          ".local/share/applications", ".ssh", ".local/share/systemd"}) {
    AddUnique(out, home + "/" + dir);
  }
  std::vector<std::string> config = {home + "/.config"};
  if (auto xdg = Get(environ, "XDG_CONFIG_HOME"); !xdg.empty()) config.push_back(xdg);
  for (const auto& c : config) {
    // fish's start-up files, desktop autostart, systemd user units and their environment,
    // git's and neovim's configuration, KDE's session scripts, Goose's extensions and keys,
    // gander's own policies.
    for (const char* dir : {"fish", "autostart", "systemd", "environment.d", "git", "nvim",
                            "plasma-workspace", "goose", "gander"}) {
      AddUnique(out, c + "/" + dir);
    }
  }
  std::vector<std::string> data = {home + "/.local/share"};
  if (auto xdg = Get(environ, "XDG_DATA_HOME"); !xdg.empty()) data.push_back(xdg);
  for (const auto& d : data) {
    AddUnique(out, d + "/systemd");
    if (!installing) AddUnique(out, d + "/gander/packages");  // every extension's install cache
  }
  std::vector<std::string> state = {home + "/.local/state"};
  if (auto xdg = Get(environ, "XDG_STATE_HOME"); !xdg.empty()) state.push_back(xdg);
  for (const auto& s : state) AddUnique(out, s + "/gander");  // audit logs, collector socket
  return out;
}

std::vector<std::string> NarrowHomeWrites(policies::ExpandedPolicy& policy, const std::string& home,
                                          bool allow_home_write) {
  std::vector<std::string> lines;
  if (home.empty() || home[0] != '/') return lines;
  std::vector<std::string> kept, narrowed;
  for (const auto& path : policy.write) {
    if (!IsWithin(home, path)) {
      kept.push_back(path);
    } else if (allow_home_write) {
      kept.push_back(path);
      lines.push_back(path +
                      " is writable (--allow-home-write); shell start-up files, ~/.ssh, "
                      "~/.local/bin, ~/.config/{autostart,systemd,fish,goose,gander} and "
                      "gander's state stay read-only");
    } else {
      narrowed.push_back(path);
      bool shown = std::find(policy.read.begin(), policy.read.end(), path) != policy.read.end() ||
                   std::find(policy.exec.begin(), policy.exec.end(), path) != policy.exec.end();
      if (!shown) policy.read.push_back(path);
    }
  }
  if (!narrowed.empty()) {
    std::string others;
    for (const auto& path : kept) others += (others.empty() ? "" : ", ") + path;
    for (const auto& path : narrowed) {
      lines.push_back(
          path + (path == home ? " is your home" : " contains your home") +
          ": shown read-only, not writable (an extension writing there could "
          "change what runs at your next shell or login); " +
          (others.empty() ? std::string("nothing else is writable") : "still writable: " + others) +
          ". Pass --allow-home-write to make it writable, or start from a "
          "project directory (--workspace DIR)");
    }
  }
  policy.write = std::move(kept);
  return lines;
}

monitor::ClassifierRules GuardedClassifierRules(policies::ExpandedPolicy policy,
                                                const std::string& workspace,
                                                bool workspace_writable,
                                                const std::vector<std::string>& protected_paths,
                                                const std::vector<std::string>& extra_exec,
                                                const std::vector<std::string>& system) {
  auto within_any = [](const std::string& path, const std::vector<std::string>& dirs) {
    return std::any_of(dirs.begin(), dirs.end(),
                       [&](const std::string& d) { return IsWithin(path, d); });
  };
  std::vector<std::string> write;
  for (const auto& path : policy.write) {
    if (within_any(path, protected_paths)) {
      AddUnique(policy.read, path);
    } else {
      write.push_back(path);
    }
  }
  policy.write = std::move(write);
  std::vector<std::string> writable = policy.write;
  if (workspace_writable && !workspace.empty()) writable.push_back(workspace);
  if (!workspace_writable && !workspace.empty()) {
    // Shown from the host, read-only: no longer the private tmpfs a rule on the same path
    // (`${HOME}` in the default profile) would make it, as the workspace rule outranked it.
    AddUnique(policy.read, workspace);
    std::erase(policy.private_, workspace);
  }
  for (const auto& path : protected_paths) {
    if (within_any(path, writable)) AddUnique(policy.read, path);
  }
  return monitor::ClassifierRules::From(policy, workspace_writable ? workspace : "", extra_exec,
                                        system);
}

}  // namespace gander::sandbox
