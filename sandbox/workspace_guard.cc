#include "sandbox/workspace_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/path.h"
#include "sandbox/filesystem_plan.h"

namespace gander::sandbox {
namespace {

constexpr const char* kQuarantine = ".gander-quarantine-";
constexpr size_t kMaxSnapshotEntries = 1024;  // a hooks directory holds a dozen
// A rebase's or a cherry-pick's state, and the todo list in it `git rebase --continue` runs.
constexpr const char* kStates[] = {"rebase-merge", "rebase-apply", "sequencer"};

// The repository's own entries that decide what runs, in a git directory.
void AddGitDir(const std::string& dir, std::vector<std::string>& out) {
  for (const char* name : {"config", "config.worktree", "commondir", "hooks"}) {
    out.push_back(dir + "/" + name);
  }
}

bool IsRealDir(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// What git's is_git_directory asks of a directory, loosely (any HEAD counts): a HEAD, and
// objects/ and refs/ or a `commondir` naming where they are.
bool LooksLikeGitDir(const std::string& dir) {
  return Exists(dir + "/HEAD") &&
         ((Exists(dir + "/objects") && Exists(dir + "/refs")) || Exists(dir + "/commondir"));
}

bool ReadAll(const std::string& path, std::string& out, size_t limit);

// A HEAD git accepts (validate_headref): a symlink into refs/, `ref: refs/...`, an object id.
bool ValidHead(const std::string& dir) {
  const std::string head = dir + "/HEAD";
  struct stat st;
  if (lstat(head.c_str(), &st) != 0) return false;
  std::string text;
  if (S_ISLNK(st.st_mode)) {
    char buf[4096];
    ssize_t n = readlink(head.c_str(), buf, sizeof buf);
    return n > 5 && std::string(buf, static_cast<size_t>(n)).rfind("refs/", 0) == 0;
  }
  if (!S_ISREG(st.st_mode) || !ReadAll(head, text, 4096)) return false;
  if (text.rfind("ref:", 0) == 0) {
    size_t at = text.find_first_not_of(" \t", 4);
    return at != std::string::npos && text.compare(at, 5, "refs/") == 0;
  }
  size_t hex = 0;
  while (hex < text.size() && std::isxdigit(static_cast<unsigned char>(text[hex]))) ++hex;
  return hex >= 40;
}

// A file the sandbox may have written: no link followed, no FIFO waited on.
bool ReadAll(const std::string& path, std::string& out, size_t limit) {
  std::optional<std::string> text = ReadFile(path, limit, O_NOFOLLOW | O_NONBLOCK);
  if (!text) return false;
  out = std::move(*text);
  return true;
}

// The gitdir a `.git` file names, when it lies inside the workspace (one outside is not the
// sandbox's to write), else "".
std::string GitFileTarget(const std::string& workspace, const std::string& file) {
  std::string text;
  if (!ReadAll(file, text, 4096) || text.rfind("gitdir: ", 0) != 0) return "";
  std::string target = text.substr(8);
  while (!target.empty() && (target.back() == '\n' || target.back() == '\r')) target.pop_back();
  if (target.empty()) return "";
  if (target[0] != '/') target = workspace + "/" + target;
  auto real = RealPath(target);
  auto real_ws = RealPath(workspace);
  if (!real || !real_ws || !IsWithin(*real, *real_ws) || !IsRealDir(*real)) return "";
  // The same directory under the workspace's own spelling, so that it is bound and compared
  // where the sandbox sees it.
  return *real_ws == workspace ? *real : workspace + real->substr(real_ws->size());
}

// The repository's `core.hooksPath` (a small reader of git's config syntax: a `[core]`
// section, `hooksPath = VALUE`, optionally quoted; includes are not followed), resolved
// against the work tree, when it is a directory strictly inside the workspace; else "".
std::string HooksPath(const std::string& workspace, const std::string& config) {
  std::string text;
  if (!ReadAll(config, text, 1u << 20)) return "";
  std::string value;
  bool core = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? end : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    line.erase(0, line.find_first_not_of(" \t"));
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower[0] == '[') {
      core = lower.rfind("[core]", 0) == 0;
      continue;
    }
    if (!core || lower.rfind("hookspath", 0) != 0) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    value = line.substr(eq + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
      value.pop_back();
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
  }
  if (value.empty()) return "";
  if (value[0] != '/') value = workspace + "/" + value;
  auto real = RealPath(value);
  if (!real || *real == workspace || !IsWithin(*real, workspace) || !IsRealDir(*real)) return "";
  return *real;
}

// `depth`: how many levels of a directory recorded whole are still recorded (a hooks
// directory is flat; a planted tree is not walked without end).
void Record(const std::string& path, bool whole, WorkspaceSnapshot& s, size_t& budget,
            int depth = 4) {
  EntryState e;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    s.entries[path] = e;
    return;
  }
  e.mode = st.st_mode & 07777;
  if (S_ISREG(st.st_mode)) {
    e.type = EntryState::Type::kFile;
    if (static_cast<size_t>(st.st_size) > budget || !ReadAll(path, e.content, budget)) {
      e.content.clear();
      s.too_large.push_back(path);
    } else {
      budget -= e.content.size();
    }
  } else if (S_ISLNK(st.st_mode)) {
    e.type = EntryState::Type::kSymlink;
    char buf[4096];
    ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    if (n > 0) e.content.assign(buf, static_cast<size_t>(n));
  } else if (S_ISDIR(st.st_mode)) {
    e.type = EntryState::Type::kDir;
    if (whole && depth > 0) {
      for (const auto& name : ListHostDir(path)) {
        if (s.entries.size() >= kMaxSnapshotEntries) {
          s.cut.insert(path);
          break;
        }
        if (name.find(kQuarantine) != std::string::npos) continue;  // ours, never run
        Record(path + "/" + name, true, s, budget, depth - 1);
      }
    }
  } else {
    e.type = EntryState::Type::kOther;
  }
  s.entries[path] = std::move(e);
}

// Every directory between `workspace` (excluded) and `path` (excluded) is a real directory,
// not a symlink the extension left: what is written is written where it was. `known`: the
// directories found so already, while nothing was changed (the undo's entries share their
// parents: `.git`, `.git/worktrees`, ...), skipped and added to.
bool ParentsAreDirs(const std::string& workspace, const std::string& path,
                    std::set<std::string>* known = nullptr) {
  for (size_t slash = path.find('/', workspace.size() + 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    std::string dir = path.substr(0, slash);
    if (known && known->count(dir)) continue;
    if (!IsRealDir(dir)) return false;
    if (known) known->insert(std::move(dir));
  }
  return true;
}

std::string QuarantineName(const std::string& path, const std::string& stamp) {
  std::string name = path + kQuarantine + stamp;
  struct stat st;
  for (int i = 1; lstat(name.c_str(), &st) == 0; ++i) {
    name = path + kQuarantine + stamp + "-" + std::to_string(i);
  }
  return name;
}

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Writes the original back at `path` (nothing is there now).
std::string Restore(const std::string& path, const EntryState& e) {
  switch (e.type) {
    case EntryState::Type::kFile: {
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) return Errno("open");
      bool ok =
          write(fd, e.content.data(), e.content.size()) == static_cast<ssize_t>(e.content.size());
      ok = ok && fchmod(fd, e.mode) == 0;
      std::string error = ok ? "" : Errno("write");
      close(fd);
      return error;
    }
    case EntryState::Type::kSymlink:
      return symlink(e.content.c_str(), path.c_str()) == 0 ? "" : Errno("symlink");
    case EntryState::Type::kDir:
      return mkdir(path.c_str(), e.mode) == 0 && chmod(path.c_str(), e.mode) == 0 ? ""
                                                                                  : Errno("mkdir");
    case EntryState::Type::kAbsent:
      return "";
    case EntryState::Type::kOther:
      return "not a file, a directory or a symlink: not restored";
  }
  return "";
}

// Undoes one difference; false when nothing differs.
// `force`: a directory too full to compare entry by entry: moved aside and rebuilt.
bool UndoOne(const WorkspaceSnapshot& before, const std::string& path, const EntryState& was,
             const EntryState& now, const std::string& stamp, bool force, UndoneChange& u) {
  using Type = EntryState::Type;
  const bool large =
      std::find(before.too_large.begin(), before.too_large.end(), path) != before.too_large.end();
  if (!force && (was == now || (large && now.type == Type::kFile && was.mode == now.mode))) {
    return false;
  }
  u.path = path;
  u.what = was.type == Type::kAbsent   ? "created"
           : now.type == Type::kAbsent ? "removed"
                                       : "changed";
  if (!force && was.type == Type::kDir && now.type == Type::kDir) {  // its mode only
    u.restored = chmod(path.c_str(), was.mode) == 0;
    if (!u.restored) u.error = Errno("chmod");
    return true;
  }
  if (now.type != Type::kAbsent) {
    std::string aside = QuarantineName(path, stamp);
    if (rename(path.c_str(), aside.c_str()) != 0) {
      u.error = Errno("rename");
      return true;
    }
    u.quarantine = aside;
  }
  // A directory recorded by type only (`.git`) cannot be rebuilt: what replaced it stays
  // aside, and the user is told.
  const bool way = before.way.count(path) > 0;
  if (was.type == Type::kDir && !before.whole.count(path) && !way) {
    u.error = "the directory itself was replaced; its contents are not recorded";
    return true;
  }
  if (large) {
    u.error = "larger than the snapshot's bound: not restored";
    return true;
  }
  u.error = Restore(path, was);
  u.restored = u.error.empty();
  if (way && was.type == Type::kDir && u.restored && !u.quarantine.empty()) {
    u.note =
        "the directory is rebuilt with the recorded entries beneath it; the rest of its "
        "content is the extension's version, at " +
        u.quarantine;
  }
  return true;
}

// The repository's own directory: `.git`, or the gitdir a `.git` file names inside the
// workspace; "" when there is none.
std::string GitDirOf(const std::string& workspace) {
  const std::string dot_git = workspace + "/.git";
  struct stat st;
  if (lstat(dot_git.c_str(), &st) != 0) return "";
  if (S_ISDIR(st.st_mode)) return dot_git;
  if (S_ISREG(st.st_mode)) return GitFileTarget(workspace, dot_git);
  return "";
}

// A todo list with a command that runs a shell line: a line whose first word is `exec` or
// `x` (git-rebase-todo, sequencer/todo).
bool HasExec(const std::string& todo) {
  size_t start = 0;
  while (start < todo.size()) {
    size_t end = todo.find('\n', start);
    if (end == std::string::npos) end = todo.size();
    size_t word = todo.find_first_not_of(" \t\r", start);
    if (word < end) {
      size_t stop = todo.find_first_of(" \t\r\n", word);
      std::string first = todo.substr(word, std::min(stop, end) - word);
      if (first == "exec" || first == "x") return true;
    }
    start = end + 1;
  }
  return false;
}

// Moves `path` aside (rename never follows a link) and says why.
void Quarantine(const std::string& path, const std::string& what, const std::string& stamp,
                const std::string& note, std::vector<UndoneChange>& out) {
  UndoneChange u{path, what, "", false, "", note};
  std::string aside = QuarantineName(path, stamp);
  if (rename(path.c_str(), aside.c_str()) == 0) {
    u.quarantine = aside;
    u.restored = true;
  } else {
    u.error = Errno("rename");
  }
  out.push_back(std::move(u));
}

// What the entries do not cover: the workspace's top made a git directory (git's discovery
// takes it for a bare repository when `.git` is not a valid one, and runs its `config`), the
// repository's HEAD removed (which sends discovery there), a rebase state planted with an
// `exec` line (`git status` tells the user to continue it).
// `now`: the snapshot the undo began with, while nothing has been changed since (its
// repository's directory, HEAD and states are what a fresh read would find); else null.
void UndoGitState(const WorkspaceSnapshot& before, const WorkspaceSnapshot* now,
                  const std::string& stamp, std::vector<UndoneChange>& out) {
  const std::string& ws = before.workspace;
  if (before.gitdir_valid && IsRealDir(before.gitdir) && ParentsAreDirs(ws, before.gitdir)) {
    const std::string head = before.gitdir + "/HEAD";
    const WorkspaceSnapshot* same = now && now->gitdir == before.gitdir ? now : nullptr;
    const bool has_head = same ? same->head.type != EntryState::Type::kAbsent : Exists(head);
    if (!has_head && before.head.type == EntryState::Type::kFile) {
      UndoneChange u{head, "removed", "", false, Restore(head, before.head), ""};
      u.restored = u.error.empty();
      out.push_back(std::move(u));
      same = now = nullptr;
    }
    if (same ? !same->gitdir_valid : !ValidHead(before.gitdir) || !LooksLikeGitDir(before.gitdir)) {
      out.push_back({head, "changed", "", false,
                     "the repository is no longer a valid one (its HEAD, objects/ or refs/): git "
                     "looks for another in the directories above",
                     ""});
    }
  }
  if (!before.top_was_gitdir && (now ? now->top_was_gitdir : LooksLikeGitDir(ws))) {
    Quarantine(ws + "/HEAD", "created", stamp,
               "the workspace's top looked like a bare repository to git (HEAD, objects/, refs/), "
               "whose config git would read; its HEAD is moved aside",
               out);
    now = nullptr;
  }
  const std::string gitdir = now ? now->gitdir : GitDirOf(ws);
  if (gitdir.empty() || !IsRealDir(gitdir) || !ParentsAreDirs(ws, gitdir + "/x")) return;
  for (const char* state : kStates) {
    const std::string dir = gitdir + "/" + state;
    if (!(now ? now->states.count(dir) > 0 : Exists(dir)) || before.states.count(dir)) continue;
    const std::string todo =
        dir + (std::string(state) == "sequencer" ? "/todo" : "/git-rebase-todo");
    std::string text;
    bool hostile =
        !IsRealDir(dir) || (Exists(todo) && (!ReadAll(todo, text, 1u << 20) || HasExec(text)));
    if (!hostile) continue;
    Quarantine(dir, "created", stamp,
               "a rebase or sequencer state whose todo list runs a shell command (exec) at `git "
               "rebase --continue`",
               out);
  }
}

}  // namespace

namespace {

// WorkspaceCodeEntries, with the repository's directory it resolved (GitDirOf) in `gitdir`:
// a `.git` file's is a read and two realpath walks, done once per snapshot.
std::vector<std::string> CodeEntries(const std::string& workspace, std::set<std::string>& whole,
                                     std::set<std::string>& way, std::string& gitdir) {
  std::vector<std::string> out = {workspace + "/.envrc", workspace + "/.git"};
  gitdir = GitDirOf(workspace);
  if (gitdir.empty()) return out;
  if (gitdir != workspace + "/.git") out.push_back(gitdir);
  AddGitDir(gitdir, out);
  // The directories on the way are entries too (by type): one replaced by a symlink to a
  // planted copy is rebuilt, one created as a symlink moved aside.
  for (const char* sub : {"modules", "worktrees"}) {
    const std::string dir = gitdir + "/" + sub;
    if (!Exists(dir)) continue;
    out.push_back(dir);
    way.insert(dir);
    if (!IsRealDir(dir)) continue;
    for (const auto& name : ListHostDir(dir)) {
      if (name.find(kQuarantine) != std::string::npos) continue;
      out.push_back(dir + "/" + name);
      way.insert(dir + "/" + name);
      if (IsRealDir(dir + "/" + name)) AddGitDir(dir + "/" + name, out);
    }
  }
  for (const auto& path : out) {
    if (Basename(path) == "hooks") whole.insert(path);
  }
  if (std::string hooks = HooksPath(workspace, gitdir + "/config"); !hooks.empty()) {
    out.push_back(hooks);
    whole.insert(hooks);
  }
  return out;
}

}  // namespace

std::vector<std::string> WorkspaceCodeEntries(const std::string& workspace,
                                              std::set<std::string>* whole,
                                              std::set<std::string>* way) {
  std::set<std::string> ignored, ignored_way;
  std::string gitdir;
  return CodeEntries(workspace, whole ? *whole : ignored, way ? *way : ignored_way, gitdir);
}

std::vector<std::string> ReadOnlyWorkspaceEntries(const WorkspaceSnapshot& snapshot) {
  using Type = EntryState::Type;
  std::vector<std::string> out;
  for (const auto& path : snapshot.code) {
    auto it = snapshot.entries.find(path);
    if (it == snapshot.entries.end()) continue;
    Type type = it->second.type;
    if (type == Type::kAbsent || type == Type::kSymlink) continue;
    if (type == Type::kDir && !snapshot.whole.count(path)) continue;
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

std::vector<std::string> ReadOnlyWorkspaceEntries(const std::string& workspace) {
  return ReadOnlyWorkspaceEntries(TakeWorkspaceSnapshot(workspace));
}

WorkspaceSnapshot TakeWorkspaceSnapshot(const std::string& workspace) {
  WorkspaceSnapshot s;
  s.workspace = workspace;
  size_t budget = kMaxSnapshotBytes;
  s.code = CodeEntries(workspace, s.whole, s.way, s.gitdir);
  for (const auto& path : s.code) {
    if (s.entries.count(path)) continue;
    // A gitdir named by a `.git` file is recorded by type only, as `.git` is.
    Record(path, s.whole.count(path) > 0, s, budget);
  }
  s.top_was_gitdir = LooksLikeGitDir(workspace);
  if (!s.gitdir.empty()) {
    s.gitdir_valid = ValidHead(s.gitdir) && LooksLikeGitDir(s.gitdir);
    WorkspaceSnapshot head;
    Record(s.gitdir + "/HEAD", false, head, budget);
    s.head = head.entries.begin()->second;
    for (const char* state : kStates) {
      if (Exists(s.gitdir + "/" + state)) s.states.insert(s.gitdir + "/" + state);
    }
  }
  return s;
}

std::vector<UndoneChange> UndoWorkspaceChanges(const WorkspaceSnapshot& before,
                                               const std::string& stamp) {
  std::vector<UndoneChange> out;
  if (before.workspace.empty()) return out;
  // What is there now: the entries of the start and those the workspace has now (a `.git`
  // made during the run, a new module), with the hooks directories' contents.
  WorkspaceSnapshot now = TakeWorkspaceSnapshot(before.workspace);
  std::set<std::string> paths;
  for (const auto& [path, e] : before.entries) paths.insert(path);
  for (const auto& [path, e] : now.entries) paths.insert(path);
  const std::string dot_git = before.workspace + "/.git";
  auto was_of = [&](const std::string& path) {
    auto it = before.entries.find(path);
    return it == before.entries.end() ? EntryState{} : it->second;
  };
  // Until the first change, what `now` recorded is what is there: read again only after one
  // (a directory moved aside or rebuilt changes what lies beneath it).
  bool untouched = true;
  std::set<std::string> real_dirs;  // ParentsAreDirs's, while untouched
  auto current_of = [&](const std::string& path) {
    auto it = now.entries.find(path);
    const bool cut_short =
        std::find(now.too_large.begin(), now.too_large.end(), path) != now.too_large.end();
    if (untouched && it != now.entries.end() && !cut_short) return it->second;
    WorkspaceSnapshot one;
    size_t budget = kMaxSnapshotBytes;
    Record(path, false, one, budget);
    return one.entries[path];
  };
  std::vector<std::string> given_up;  // directories whose contents are left as they are
  for (const auto& path : paths) {    // parents before children
    if (std::any_of(given_up.begin(), given_up.end(),
                    [&](const std::string& d) { return path != d && IsWithin(path, d); })) {
      continue;
    }
    if (!ParentsAreDirs(before.workspace, path, untouched ? &real_dirs : nullptr)) {
      out.push_back({path, "changed", "", false, "a directory on its way is no longer one", ""});
      continue;
    }
    EntryState was = was_of(path);
    EntryState current = current_of(path);
    // A repository the extension made where there was none (`git init`) keeps its objects
    // and refs; what in it runs commands is moved aside entry by entry.
    // So does a module or worktree directory it made.
    if ((path == dot_git || now.way.count(path)) && was.type == EntryState::Type::kAbsent &&
        current.type == EntryState::Type::kDir) {
      continue;
    }
    UndoneChange u;
    const bool force = now.cut.count(path) > 0 && before.whole.count(path) > 0;
    if (!UndoOne(before, path, was, current, stamp, force, u)) continue;
    untouched = false;
    // What was moved aside took its contents with it, and a directory that could not be
    // rebuilt has none to refill. One that was rebuilt (hooks) gets its recorded entries back
    // below, each as a removed one.
    const bool rebuilt = was.type == EntryState::Type::kDir && u.restored;
    if (!rebuilt && (!u.quarantine.empty() || was.type == EntryState::Type::kDir)) {
      given_up.push_back(path);
    }
    out.push_back(std::move(u));
  }
  UndoGitState(before, untouched ? &now : nullptr, stamp, out);
  return out;
}

}  // namespace gander::sandbox
