// Longest-match classification with deny first, and metric label normalisation.
#include "monitor/path_classifier.h"

#include <algorithm>

#include "common/path.h"
#include "events/event_json.h"
#include "policies/expand.h"

namespace gander::monitor {
namespace {

// Lower wins between rules on the same path.
int Precedence(events::PathClass c) {
  switch (c) {
    case events::PathClass::kDenied:
      return 0;
    case events::PathClass::kWorkspace:
      return 1;
    case events::PathClass::kPrivate:
      return 2;
    case events::PathClass::kAllowedWrite:
      return 3;
    case events::PathClass::kAllowedReadOnly:
      return 4;
    case events::PathClass::kSystem:
      return 5;
    default:
      return 6;
  }
}

// The first `count` components of `rest` (which starts with '/' or is empty).
std::string_view LeadingComponents(std::string_view rest, size_t count) {
  size_t end = 0;
  for (size_t i = 0; i < count && end < rest.size(); ++i) {
    size_t next = rest.find('/', end + 1);
    end = next == std::string_view::npos ? rest.size() : next;
  }
  return rest.substr(0, end);
}

bool Usable(const std::string& dir) { return !dir.empty() && dir != "/" && dir[0] == '/'; }

// `path` with a workspace or home prefix written as ${WORKSPACE} or ~.
std::string WithPrefixNames(const std::string& path, const std::string& home,
                            const std::string& workspace) {
  if (Usable(workspace) && IsWithin(path, workspace)) {
    return "${WORKSPACE}" + path.substr(workspace.size());
  }
  if (Usable(home) && IsWithin(path, home)) return "~" + path.substr(home.size());
  return path;
}

}  // namespace

ClassifierRules::ClassifierRules(std::vector<ClassifierRule> rules) {
  for (auto& rule : rules) {
    if (rule.path.empty() || rule.path[0] != '/') continue;  // rules are absolute paths
    rule.path = policies::NormalizePath(rule.path);
    (rule.path_class == events::PathClass::kDenied ? deny_ : rules_).push_back(std::move(rule));
  }
  std::stable_sort(rules_.begin(), rules_.end(), [](const auto& a, const auto& b) {
    if (a.path.size() != b.path.size()) return a.path.size() > b.path.size();
    return Precedence(a.path_class) < Precedence(b.path_class);
  });
}

ClassifierRules ClassifierRules::From(const policies::ExpandedPolicy& policy,
                                      const std::string& workspace,
                                      const std::vector<std::string>& extra_exec,
                                      const std::vector<std::string>& system) {
  std::vector<ClassifierRule> rules;
  auto add = [&](const std::vector<std::string>& paths, events::PathClass c) {
    for (const auto& p : paths) rules.push_back({p, c});
  };
  add(policy.deny, events::PathClass::kDenied);
  add(policy.private_, events::PathClass::kPrivate);
  add(policy.write, events::PathClass::kAllowedWrite);
  add(policy.read, events::PathClass::kAllowedReadOnly);
  add(policy.exec, events::PathClass::kAllowedReadOnly);
  add(extra_exec, events::PathClass::kAllowedReadOnly);
  add({"/proc", "/dev"}, events::PathClass::kSystem);
  add(system, events::PathClass::kSystem);
  if (!workspace.empty()) rules.push_back({workspace, events::PathClass::kWorkspace});
  return ClassifierRules(std::move(rules));
}

events::PathClass ClassifierRules::Classify(std::string_view abs_path) const {
  if (abs_path.empty()) return events::PathClass::kOutside;
  if (abs_path[0] != '/')
    return events::PathClass::kSystem;  // pipe:[N], socket:[N], anon_inode:...
  for (const auto& rule : deny_) {
    if (IsWithin(abs_path, rule.path)) return events::PathClass::kDenied;
  }
  for (const auto& rule : rules_) {
    if (IsWithin(abs_path, rule.path)) return rule.path_class;
  }
  return events::PathClass::kOutside;
}

std::vector<std::string> ClassifierRules::DenyPaths() const {
  std::vector<std::string> out;
  for (const auto& rule : deny_) out.push_back(rule.path);
  return out;
}

ClassifiedPath ResolveAndClassify(std::string_view raw, std::optional<std::string> dirfd_path,
                                  const ProcessView& view, const ClassifierRules& rules,
                                  ResolveFlags flags) {
  auto resolved = ResolvePath(raw, std::move(dirfd_path), view, flags);
  if (!resolved)
    return ClassifiedPath{std::nullopt, events::PathClass::kUnknown, resolved.error().code};
  events::PathClass c = rules.Classify(*resolved);
  return ClassifiedPath{std::move(*resolved), c, 0};
}

ClassifiedPath ClassifySymlinkTarget(std::string_view link_path, std::string_view target,
                                     const ProcessView& view, const ClassifierRules& rules) {
  auto resolved = ResolveSymlinkTarget(link_path, target, view);
  if (!resolved)
    return ClassifiedPath{std::nullopt, events::PathClass::kUnknown, resolved.error().code};
  events::PathClass c = rules.Classify(*resolved);
  return ClassifiedPath{std::move(*resolved), c, 0};
}

std::string NormaliseForLabel(const std::string& path, const std::string& home,
                              const std::string& workspace,
                              const std::vector<std::string>& anchors) {
  if (path.empty() || path[0] != '/') {
    size_t colon = path.find(':');
    if (colon == std::string::npos || colon == 0) return "(other)";
    return events::EscapeBytes(std::string_view(path).substr(0, colon + 1));
  }
  const std::string* anchor = nullptr;
  for (const auto& a : anchors) {
    if (IsWithin(path, a) && (!anchor || a.size() > anchor->size())) anchor = &a;
  }
  if (anchor) return events::EscapeBytes(WithPrefixNames(*anchor, home, workspace));
  if (Usable(workspace) && IsWithin(path, workspace)) return "${WORKSPACE}";
  std::string_view view = path;
  if (Usable(home) && IsWithin(path, home)) {
    return "~" + events::EscapeBytes(LeadingComponents(view.substr(home.size()), 1));
  }
  std::string_view label = LeadingComponents(view, 2);
  return label.empty() ? "/" : events::EscapeBytes(label);
}

}  // namespace gander::monitor
