// What in a workspace runs a command on the host, outside any sandbox, the next time the user
// runs git there or enters it: the repository's configuration (core.fsmonitor, core.pager,
// core.hooksPath, filter and diff drivers, aliases), its hooks, a `.git` file's `gitdir:`
// pointer, a `.git` that did not exist, direnv's `.envrc`. The workspace is the extension's to
// write; these entries are not.
//
// Two defences, both from here: with a mount view (namespaces, gVisor's bundle) the entries
// that exist are bound read-only over themselves (FilesystemInputs::read_only_entries); in
// every mode, what they are at the start is recorded (TakeWorkspaceSnapshot) and, when the
// sandbox is gone (the end of the run, a restart behind the relay), what the extension changed
// or created is put back or moved aside (UndoWorkspaceChanges). docs/sandbox.md, "The
// workspace's git and direnv files".
#pragma once

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gander::sandbox {

// The entries of `workspace` that decide what runs on the host, existing or not: `.envrc`,
// `.git` itself, and in the repository's own directory (`.git`, or a `gitdir:` inside the
// workspace) `config`, `config.worktree`, `commondir`, `hooks`, and the same in each of
// `modules/*` and `worktrees/*`, and the directory the repository's `core.hooksPath` names
// when it lies inside the workspace (husky's `.husky/_`, a `.githooks`). Absolute paths.
// `whole` receives the directories recorded with all their files (the hooks directories);
// `way` the directories on the way to a module's or worktree's entries (`modules`,
// `modules/NAME`, `worktrees`, `worktrees/NAME`), recorded by type and rebuilt when replaced.
std::vector<std::string> WorkspaceCodeEntries(const std::string& workspace,
                                              std::set<std::string>* whole = nullptr,
                                              std::set<std::string>* way = nullptr);

// Those of WorkspaceCodeEntries to bind read-only over themselves where there is a mount view:
// the ones that exist and are not symlinks, but for the repository's own directory (`.git`,
// a `gitdir:`), which git inside the sandbox writes (objects, refs, index).
// From a snapshot just taken (what TakeWorkspaceSnapshot read already), or read anew.
struct WorkspaceSnapshot;
std::vector<std::string> ReadOnlyWorkspaceEntries(const WorkspaceSnapshot& snapshot);
std::vector<std::string> ReadOnlyWorkspaceEntries(const std::string& workspace);

// What one path was: absent, a regular file (its bytes and mode), a directory (its mode; its
// entries are recorded under their own paths when the directory is recorded whole), a symlink
// (its target), or something else (a FIFO, a socket: recorded, never restored).
struct EntryState {
  enum class Type { kAbsent, kFile, kDir, kSymlink, kOther };
  Type type = Type::kAbsent;
  mode_t mode = 0;
  std::string content;  // kFile: the bytes; kSymlink: the target
  bool operator==(const EntryState&) const = default;
};

struct WorkspaceSnapshot {
  std::string workspace;
  std::vector<std::string> code;  // WorkspaceCodeEntries at the start
  // Every recorded path: the entries, and everything beneath the directories recorded whole
  // (`hooks`), up to kMaxSnapshotBytes of content; a larger entry is recorded by size only and
  // cannot be put back (TooLarge).
  std::map<std::string, EntryState> entries;
  std::vector<std::string> too_large;
  std::set<std::string> whole;  // the directories recorded with their contents (hooks)
  std::set<std::string> cut;    // ... of which not every entry was recorded (too many)
  std::set<std::string> way;    // the directories on the way (WorkspaceCodeEntries)
  // Beyond the entries: whether the workspace's top looks like a git directory (a bare
  // repository: HEAD, objects/, refs/), the repository's directory, whether it was a valid
  // one and its HEAD then, and the rebase or sequencer states it held.
  bool top_was_gitdir = false;
  std::string gitdir;
  bool gitdir_valid = false;
  EntryState head;
  std::set<std::string> states;
};

inline constexpr size_t kMaxSnapshotBytes = 16u << 20;

// Reads the entries' state now (lstat, never following a symlink).
WorkspaceSnapshot TakeWorkspaceSnapshot(const std::string& workspace);

// One entry the extension changed, and what was done about it.
struct UndoneChange {
  std::string path;
  std::string what;        // "created", "changed", "removed"
  std::string quarantine;  // where what the extension left now is, or ""
  bool restored = false;   // the original is back (or, for "created", nothing is left there)
  std::string error;       // why it could not be undone, or ""
  std::string note;        // what else the user should know, or ""
};

// Compares the workspace with `before` (the entries of the start, and those that exist now)
// and undoes each difference: a created entry is renamed to `NAME.gander-quarantine-STAMP`,
// a changed or replaced one is renamed so and the original written back (mode included), a
// removed one is written back. Runs when nothing in the sandbox can race it; never follows a
// symlink the extension may have planted on the way (a parent that is no longer the directory
// it was is left alone and reported; a directory on the way that is no longer one is moved
// aside and rebuilt). Then, beyond the entries: a workspace top made a git directory has its
// HEAD moved aside, the repository's removed HEAD is written back (an invalid one reported),
// and a rebase or sequencer state made during the run whose todo list holds an `exec` line
// is moved aside. `stamp` names the quarantine (a UTC time, say).
std::vector<UndoneChange> UndoWorkspaceChanges(const WorkspaceSnapshot& before,
                                               const std::string& stamp);

}  // namespace gander::sandbox
