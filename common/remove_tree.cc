// rm -rf by descriptors (common/remove_tree.h).
#include "common/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "common/unique_fd.h"

namespace gander {
namespace {

constexpr int kMaxRemoveDepth = 64;

// Empties the directory `dir` (an fd of ours), entries by name relative to it: nothing is
// reached through a path a process inside could swap for a link. A directory deeper than
// kMaxRemoveDepth is moved up to `top` (renameat between fds) and emptied from there, so
// that no depth exhausts the fds.
void EmptyDir(int dir, int top, int depth, std::vector<std::string>& moved_up, uint64_t& serial) {
  std::vector<std::pair<std::string, bool>> entries;
  {
    int dup = fcntl(dir, F_DUPFD_CLOEXEC, 0);
    DIR* d = dup >= 0 ? fdopendir(dup) : nullptr;
    if (!d) {
      if (dup >= 0) close(dup);
      return;
    }
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") entries.emplace_back(name, e->d_type == DT_DIR);
    }
    closedir(d);
  }
  for (auto& [name, is_dir] : entries) {
    if (unlinkat(dir, name.c_str(), 0) == 0) continue;
    if (errno != EISDIR && errno != EPERM && !is_dir) continue;
    if (depth >= kMaxRemoveDepth) {
      std::string up = ".gander-rm-" + std::to_string(++serial);
      if (renameat(dir, name.c_str(), top, up.c_str()) == 0) moved_up.push_back(up);
      continue;
    }
    UniqueFd child(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child) continue;
    fchmod(child.get(), S_IRWXU);  // a directory the sandbox made read-only
    EmptyDir(child.get(), top, depth + 1, moved_up, serial);
    unlinkat(dir, name.c_str(), AT_REMOVEDIR);
  }
}

}  // namespace

void RemoveTree(const std::string& path) {
  std::string parent = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  if (parent.empty()) parent = "/";
  std::string leaf = path.substr(path.rfind('/') + 1);
  UniqueFd up(open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!up || leaf.empty() || leaf == "." || leaf == "..") return;
  if (unlinkat(up.get(), leaf.c_str(), 0) == 0) return;  // a file or a link: only it goes
  UniqueFd top(openat(up.get(), leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top) return;
  fchmod(top.get(), S_IRWXU);
  std::vector<std::string> moved_up;
  uint64_t serial = 0;
  EmptyDir(top.get(), top.get(), 0, moved_up, serial);
  while (!moved_up.empty()) {
    std::string name = moved_up.back();
    moved_up.pop_back();
    UniqueFd d(openat(top.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!d) continue;
    fchmod(d.get(), S_IRWXU);
    EmptyDir(d.get(), top.get(), 1, moved_up, serial);
    unlinkat(top.get(), name.c_str(), AT_REMOVEDIR);
  }
  unlinkat(up.get(), leaf.c_str(), AT_REMOVEDIR);
}

}  // namespace gander
