#include "sandbox/cgroup_view.h"

#include <set>

#include "common/path.h"
#include "common/split.h"
#include "sandbox/filesystem_plan.h"

namespace gander::sandbox {
namespace {

// The pieces between separators; a separator at the end adds no empty last piece.
std::vector<std::string> Split(std::string_view text, char sep) {
  std::vector<std::string> out;
  for (SplitView pieces(text, sep); auto piece = pieces.Next();) {
    if (!piece->empty() || pieces.more()) out.emplace_back(*piece);
  }
  return out;
}

// mountinfo escapes blanks as octal (\040); cgroup mountpoints never need them, so a path
// with an escape is skipped rather than decoded.
bool Plain(const std::string& path) { return path.find('\\') == std::string::npos; }

// The caller's cgroup directory: the mountpoint plus its path relative to the mount's root.
std::string OwnDir(const std::string& mountpoint, const std::string& root,
                   const std::string& path) {
  if (root != "/" && !IsWithin(path, root)) return "";  // outside what the mount shows
  std::string rest = root == "/" ? path : path.substr(root.size());
  if (rest == "/") rest.clear();
  return mountpoint + rest;
}

}  // namespace

std::vector<CgroupMount> ParseCgroupMounts(const std::string& mountinfo,
                                           const std::string& cgroup) {
  // /proc/self/cgroup: "ID:CONTROLLERS:PATH" (v2: "0::PATH").
  std::vector<std::pair<std::set<std::string>, std::string>> v1;
  std::string v2_path;
  for (const std::string& line : Split(cgroup, '\n')) {
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (path.empty() || path[0] != '/') continue;
    if (controllers.empty()) {
      v2_path = path;
    } else {
      auto names = Split(controllers, ',');
      v1.emplace_back(std::set<std::string>(names.begin(), names.end()), path);
    }
  }
  std::vector<CgroupMount> out;
  std::set<std::string> seen;
  for (SplitView lines(mountinfo, '\n'); auto line = lines.Next();) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    // Blanks in a field are escaped (\040): " - " is only ever the separator.
    if (line->find(" - cgroup") == std::string_view::npos) continue;
    std::vector<std::string> f = Split(*line, ' ');
    size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash < 5 || dash + 3 >= f.size()) continue;
    const std::string& root = f[3];
    const std::string& mountpoint = f[4];
    const std::string& type = f[dash + 1];
    if (type != "cgroup" && type != "cgroup2") continue;
    if (!Plain(mountpoint) || !Plain(root) || !IsWithin(mountpoint, "/sys/fs/cgroup")) continue;
    if (!seen.insert(mountpoint).second) continue;  // mounted twice: the first one
    CgroupMount m{type, "", mountpoint, ""};
    if (type == "cgroup2") {
      if (!v2_path.empty()) m.own_dir = OwnDir(mountpoint, root, v2_path);
      out.push_back(std::move(m));
      continue;
    }
    auto super = Split(f[dash + 3], ',');
    std::set<std::string> options(super.begin(), super.end());
    for (const auto& [controllers, path] : v1) {
      bool all = true;
      for (const auto& c : controllers) all = all && options.count(c);
      if (!all) continue;
      for (const auto& c : controllers) m.options += (m.options.empty() ? "" : ",") + c;
      m.own_dir = OwnDir(mountpoint, root, path);
      break;
    }
    if (m.options.empty()) continue;  // a hierarchy this process is not in
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<CgroupMount> HostCgroupMounts() {
  return ParseCgroupMounts(ReadFile("/proc/self/mountinfo").value_or(""),
                           ReadFile("/proc/self/cgroup").value_or(""));
}

std::vector<std::string> CgroupReadPaths(const std::vector<CgroupMount>& mounts,
                                         bool with_mount_namespace) {
  std::vector<std::string> paths;
  for (const auto& m : mounts) {
    const std::string& path = with_mount_namespace ? m.mountpoint : m.own_dir;
    // Without a mount namespace never a hierarchy's root: a process in the root cgroup would
    // be granted every cgroup of the host (and each one's cgroup.procs: every host pid).
    if (!with_mount_namespace && path == m.mountpoint) continue;
    if (!path.empty()) paths.push_back(path);
  }
  return paths;
}

}  // namespace gander::sandbox
