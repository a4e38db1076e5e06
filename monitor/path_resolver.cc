// Lexical path resolution with the kernel's magic links (see path_resolver.h).
#include "monitor/path_resolver.h"

#include <errno.h>
#include <limits.h>

#include <charconv>
#include <vector>

#include "common/split.h"
#include "events/event.h"

namespace gander::monitor {
namespace {

using Components = std::vector<std::string>;

bool IsAbsolute(std::string_view path) { return !path.empty() && path[0] == '/'; }

// The components of an absolute path with ".", "" and ".." applied lexically.
Components Normalise(std::string_view path) {
  Components out;
  for (SplitView pieces(path, '/'); auto c = pieces.Next();) {
    if (*c == "..") {
      if (!out.empty()) out.pop_back();
    } else if (!c->empty() && *c != ".") {
      out.emplace_back(*c);
    }
  }
  return out;
}

std::string Join(const Components& components) {
  if (components.empty()) return "/";
  std::string out;
  for (const auto& c : components) {
    out += '/';
    out += c;
  }
  return out;
}

bool StartsWith(const Components& path, const Components& prefix) {
  if (path.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (path[i] != prefix[i]) return false;
  }
  return true;
}

// A file descriptor number as /proc/PID/fd accepts it: decimal, no sign, no leading zero.
std::optional<int> ParseFd(std::string_view s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

bool IsNumber(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == s.npos;
}

// A magic link the path has reached, and what it stands for.
struct MagicLink {
  enum class Kind { kFd, kCwd, kRoot } kind;
  int fd = -1;
};

// Matches the components below the process's root against the magic links.
std::optional<MagicLink> MatchMagicLink(const Components& stack, size_t begin,
                                        const ProcessView& view) {
  auto at = [&](size_t i) -> std::string_view { return stack[begin + i]; };
  size_t n = stack.size() - begin;
  if (n >= 2 && at(0) == "dev") {
    if (n == 3 && at(1) == "fd") {
      if (auto fd = ParseFd(at(2))) return MagicLink{MagicLink::Kind::kFd, *fd};
    }
    if (n == 2 && at(1) == "stdin") return MagicLink{MagicLink::Kind::kFd, 0};
    if (n == 2 && at(1) == "stdout") return MagicLink{MagicLink::Kind::kFd, 1};
    if (n == 2 && at(1) == "stderr") return MagicLink{MagicLink::Kind::kFd, 2};
    return std::nullopt;
  }
  if (n < 3 || at(0) != "proc") return std::nullopt;
  // /proc/self, /proc/thread-self (which is /proc/P/task/T), /proc/P with P our own pid.
  std::string_view who = at(1);
  bool own_pid = false;
  if (auto pid = view.pid(); pid && IsNumber(who)) own_pid = who == std::to_string(*pid);
  size_t rest = 2;
  if (who == "self" || own_pid) {
    if (n >= 4 && at(2) == "task" && IsNumber(at(3))) rest = 4;
  } else if (who != "thread-self") {
    return std::nullopt;
  }
  size_t left = n - rest;
  if (left == 1 && at(rest) == "cwd") return MagicLink{MagicLink::Kind::kCwd, -1};
  if (left == 1 && at(rest) == "root") return MagicLink{MagicLink::Kind::kRoot, -1};
  if (left == 2 && at(rest) == "fd") {
    if (auto fd = ParseFd(at(rest + 1))) return MagicLink{MagicLink::Kind::kFd, *fd};
  }
  return std::nullopt;
}

Result<std::string> Target(const MagicLink& link, const ProcessView& view) {
  switch (link.kind) {
    case MagicLink::Kind::kFd: {
      auto target = view.fd_path(link.fd);
      if (!target) return std::move(target).error().Context("fd " + std::to_string(link.fd));
      return target;
    }
    case MagicLink::Kind::kCwd:
      return view.cwd();
    case MagicLink::Kind::kRoot:
      return view.root();
  }
  return MakeError("unknown magic link");
}

// The common case, which the walk would give back unchanged: an absolute path of plain
// components (none empty, "." or "..") that does not begin with /proc or /dev, where a magic
// link could be on its way, walked from the root "/". Skips the walk's allocations: one
// notification in every watched `openat` (issue 20).
bool AlreadyResolved(std::string_view path, std::string_view root) {
  if (root != "/" || path.size() < 2 || path[0] != '/' || path.back() == '/') return false;
  std::string_view first = path.substr(1, path.find('/', 1) - 1);
  if (first == "proc" || first == "dev") return false;
  for (SplitView pieces(path.substr(1), '/'); auto c = pieces.Next();) {
    if (c->empty() || *c == "." || *c == "..") return false;
  }
  return true;
}

// Walks `path` component by component from `start`, within `root`.
Result<std::string> Walk(Components start, std::string_view path, const Components& root,
                         const ProcessView& view) {
  Components stack = std::move(start);
  // ".." stops at the root only when the walk is inside it (a chrooted process whose cwd is
  // outside its root can climb, as in the kernel).
  size_t floor = StartsWith(stack, root) ? root.size() : 0;
  for (SplitView pieces(path, '/'); auto piece = pieces.Next();) {
    std::string_view c = *piece;
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (stack.size() > floor) stack.pop_back();
      continue;
    }
    stack.emplace_back(c);
    if (!StartsWith(stack, root)) continue;
    auto link = MatchMagicLink(stack, root.size(), view);
    if (!link) continue;
    auto target = Target(*link, view);
    if (!target) return std::move(target).error().Context(Join(stack));
    if (!IsAbsolute(*target)) {
      // Not a file system object (pipe:[N], socket:[N]): nothing can follow it.
      if (pieces.more()) return Error{ENOTDIR, Join(stack) + " is not a directory"};
      return target;
    }
    stack = Normalise(*target);
    floor = StartsWith(stack, root) ? root.size() : 0;
  }
  return Join(stack);
}

}  // namespace

Result<std::string> FixedProcessView::fd_path(int fd) const {
  auto it = fds.find(fd);
  if (it == fds.end()) return Error{ENOENT, "fd " + std::to_string(fd) + " is not open"};
  return it->second;
}

Result<std::string> ResolvePath(std::string_view raw, std::optional<std::string> dirfd_path,
                                const ProcessView& view, ResolveFlags flags) {
  std::string_view path = raw.substr(0, raw.find('\0'));
  if (path.size() >= PATH_MAX) {
    return Error{ENAMETOOLONG, "path of " + std::to_string(path.size()) + " bytes or more"};
  }
  if (path.empty() && !flags.empty_path) return Error{ENOENT, "empty path without AT_EMPTY_PATH"};
  auto root = view.root();
  if (!root) return std::move(root).error().Context("process root");
  if (!IsAbsolute(*root)) return Error{EINVAL, "process root is not absolute: " + *root};
  if (AlreadyResolved(path, *root)) return std::string(path);
  Components root_components = Normalise(*root);

  if (IsAbsolute(path)) return Walk(root_components, path, root_components, view);

  std::string base;
  if (dirfd_path) {
    base = std::move(*dirfd_path);
  } else {
    auto cwd = view.cwd();
    if (!cwd) return std::move(cwd).error().Context("process cwd");
    base = std::move(*cwd);
  }
  if (path.empty()) {
    // The dirfd itself, which may be a pipe or socket (fstatat(fd, "", AT_EMPTY_PATH)).
    return IsAbsolute(base) ? Join(Normalise(base)) : base;
  }
  if (!IsAbsolute(base)) return Error{ENOTDIR, "relative path against " + base};
  return Walk(Normalise(base), path, root_components, view);
}

Result<std::string> ResolveSymlinkTarget(std::string_view link_path, std::string_view target,
                                         const ProcessView& view) {
  if (target.empty()) return Error{ENOENT, "empty symlink target"};
  if (!IsAbsolute(link_path)) return Error{EINVAL, "symlink path is not absolute"};
  Components parent = Normalise(link_path);
  if (!parent.empty()) parent.pop_back();
  return ResolvePath(target, Join(parent), view);
}

RawPath RawPathForEvent(std::string_view raw) {
  std::string_view path = raw.substr(0, raw.find('\0'));
  if (path.size() <= events::kMaxRawPathBytes) return RawPath{std::string(path), false};
  return RawPath{std::string(path.substr(0, events::kMaxRawPathBytes)), true};
}

}  // namespace gander::monitor
