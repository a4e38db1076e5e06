#include "policies/trial.h"

#include <algorithm>

namespace gander::policies {
namespace {

std::vector<std::string> Union(const std::vector<std::string>& first,
                               const std::vector<std::string>& second) {
  std::vector<std::string> out = first;
  for (const auto& path : second) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

// The base's limit, relaxed to the trial's value where the trial allows more.
template <typename T>
std::optional<T> Looser(const std::optional<T>& trial, const std::optional<T>& base) {
  if (!base || !trial) return base;
  return std::max(*trial, *base);
}

}  // namespace

ExpandedPolicy TrialEnforcement(const ExpandedPolicy& trial, const ExpandedPolicy& base) {
  ExpandedPolicy out = trial;
  // The trial's syscall allowlist is not enforced (nor recorded as would_deny): the base's.
  out.syscalls_allow = base.syscalls_allow;
  out.read = Union(trial.read, base.read);
  out.exec = Union(trial.exec, base.exec);
  out.write = Union(trial.write, base.write);
  out.private_ = Union(trial.private_, base.private_);
  out.deny = base.deny;
  out.network.allow = trial.network.allow;
  for (const NetworkRule& rule : base.network.allow) {
    if (std::find(out.network.allow.begin(), out.network.allow.end(), rule) ==
        out.network.allow.end()) {
      out.network.allow.push_back(rule);
    }
  }
  out.network.deny = base.network.deny;
  out.limits.processes = Looser(trial.limits.processes, base.limits.processes);
  out.limits.open_files = Looser(trial.limits.open_files, base.limits.open_files);
  out.limits.file_size = Looser(trial.limits.file_size, base.limits.file_size);
  out.limits.memory = Looser(trial.limits.memory, base.limits.memory);
  out.limits.core_dumps = Looser(trial.limits.core_dumps, base.limits.core_dumps);
  out.sources.push_back("monitor mode: enforcing");
  out.sources.insert(out.sources.end(), base.sources.begin(), base.sources.end());
  return out;
}

ExpandedPolicy LearnEnforcement(const ExpandedPolicy& learned,
                                const std::vector<std::string>& host_roots,
                                const std::vector<std::string>& writable,
                                const std::vector<std::string>& keep_denied) {
  ExpandedPolicy out = learned;
  out.syscalls_allow.reset();  // learning counts every syscall (the floor stays)
  out.exec = Union(learned.exec, host_roots);
  out.exec = Union(out.exec, writable);
  out.write = Union(learned.write, writable);
  for (const auto& dir : writable) std::erase(out.private_, dir);
  out.deny = Union(learned.deny, keep_denied);
  out.sources.push_back("learn mode: widened to the host's files and network");
  return out;
}

}  // namespace gander::policies
