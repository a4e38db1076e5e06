// Path classification: which part of the sandbox's view a resolved path falls in (workspace,
// private tmpfs, a read-only or write grant, /proc and /dev, a denied path, or outside), and
// the short, bounded form of a path used as a metrics label. Pure functions of the policy.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "monitor/path_resolver.h"
#include "policies/policy.h"

namespace gander::monitor {

struct ClassifierRule {
  std::string path;  // absolute
  events::PathClass path_class = events::PathClass::kOutside;
};

// The rules a path is classified by; immutable once built.
//
// A path gets the class of the longest rule path that is it or one of its ancestors, except
// that a deny rule wins over everything, however short. Between rules on the same path the
// order is workspace, private, allowed_write, allowed_read_only, system. With no rule
// matching: `outside` for an absolute path, `system` for a pseudo name ("pipe:[12]"), and
// `outside` for "".
class ClassifierRules {
 public:
  // Rules from an expanded policy: deny -> denied, private -> private, write ->
  // allowed_write, read and exec -> allowed_read_only, plus `workspace` -> workspace,
  // `extra_exec` (the command, its interpreter, their prefixes) -> allowed_read_only, and
  // /proc and /dev -> system (the sandbox always has them), and `system` (what else the
  // sandbox shows of its own: its cgroup, sandbox/cgroup_view.h) -> system.
  static ClassifierRules From(const policies::ExpandedPolicy& policy, const std::string& workspace,
                              const std::vector<std::string>& extra_exec = {},
                              const std::vector<std::string>& system = {});

  // Rules given directly; paths are normalised lexically, order does not matter.
  explicit ClassifierRules(std::vector<ClassifierRule> rules);

  events::PathClass Classify(std::string_view abs_path) const;
  // The deny rule paths (for NormaliseForLabel's anchors).
  std::vector<std::string> DenyPaths() const;

 private:
  std::vector<ClassifierRule> deny_;
  std::vector<ClassifierRule> rules_;  // longest path first, then by precedence
};

inline events::PathClass Classify(const std::string& abs_path, const ClassifierRules& rules) {
  return rules.Classify(abs_path);
}

// A resolved-and-classified path, as a file event records it.
struct ClassifiedPath {
  std::optional<std::string> path;  // nullopt when resolution failed
  events::PathClass path_class = events::PathClass::kUnknown;
  int error = 0;  // the resolution's errno when it failed (ENAMETOOLONG, ENOENT, ...)
};

// ResolvePath then Classify: what the notification loop calls for each file syscall.
ClassifiedPath ResolveAndClassify(std::string_view raw, std::optional<std::string> dirfd_path,
                                  const ProcessView& view, const ClassifierRules& rules,
                                  ResolveFlags flags = {});

// Where a symlink's text points and its class (see ResolveSymlinkTarget): e.g. a link in the
// workspace to ~/.ssh/id_rsa is `denied` while the link itself is `workspace`.
ClassifiedPath ClassifySymlinkTarget(std::string_view link_path, std::string_view target,
                                     const ProcessView& view, const ClassifierRules& rules);

// A short label for a path, so that the metric's `path` label has few values (DESIGN.md,
// "Metrics"). The first rule that applies:
//   1. a path that is or lies under one of `anchors` (pass the deny rules) -> the longest such
//      anchor, written as below ("~/.config/goose", "/etc/ssh");
//   2. the workspace or below -> "${WORKSPACE}";
//   3. $HOME or below -> "~" and at most one component below it ("~/.ssh", "~");
//   4. any other absolute path -> at most two components ("/etc/shadow", "/usr/lib", "/");
//   5. a pseudo name "kind:[...]" or "kind:..." -> "kind:" ("pipe:", "anon_inode:"); anything
//      else (empty, relative) -> "(other)".
// So a label has at most two components, counting "~" or "${WORKSPACE}" as one, except for an
// anchor. Anchors are written with "${WORKSPACE}" or "~" in place of those prefixes. Empty
// `home`/`workspace` (or "/") are ignored. Invalid UTF-8 is byte-escaped (event_json.h) so the
// label is always valid UTF-8.
std::string NormaliseForLabel(const std::string& path, const std::string& home,
                              const std::string& workspace,
                              const std::vector<std::string>& anchors = {});

}  // namespace gander::monitor
