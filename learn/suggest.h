// From what a learning run saw (learned.h) to a policy a person can review, and back: does a
// policy cover what was seen? Pure: no file, environment or kernel access.
#pragma once

#include <string>
#include <vector>

#include "learn/learned.h"
#include "policies/policy.h"

namespace gander::learn {

struct SuggestContext {
  std::string extension;             // for the header comment
  std::string extends = "default";   // written as the suggestion's `extends`
  policies::ExpandedPolicy base;     // that base, expanded with `workspace` and `home`
  std::string workspace;             // absolute: paths below it become ${WORKSPACE}/...
  std::string home;                  // absolute: paths below it become ~/...
  std::vector<std::string> sources;  // the audit log files read, for the header comment
  size_t default_syscalls = 0;       // how many gander's filter allows without an allowlist
};

// How each census syscall is suggested for `syscalls.allow`: allowed, or why not (the floor
// denies it whatever the list says; a privileged syscall is for a person to grant; a base's
// allowlist leaves it out; no name on this architecture). Sorted by name.
struct SyscallSuggestion {
  std::string name;
  uint64_t calls = 0;
  std::string not_added;  // empty: listed
  std::string floor;      // listed, but the floor still refuses these calls of it ("ioctl(...)")
};
std::vector<SyscallSuggestion> SuggestSyscalls(const Learned& learned,
                                               const policies::ExpandedPolicy& base);

// A policy v1 YAML document extending ctx.extends that grants what was seen and the base does
// not already allow: paths collapsed to directories (the workspace, home, an interpreter's
// prefix, a shared library's directory), read / write / exec separated, network hosts with
// their ports, the syscall census as `syscalls.allow`, the secrets the runs were given (names and
// delivery, never values); each entry with a comment saying how often, by which tools and when
// (first-last) it was used. Named public hosts are granted but flagged `# REVIEW: public host`.
// Risky items (credentials under home, the system's password and key files, anything under a
// deny rule of the base, public addresses without a name, link-local destinations, syscalls
// the filter refused, privileged syscalls) are never added: they are listed in a `# REVIEW:`
// comment block at the end.
std::string SuggestPolicy(const Learned& learned, const SuggestContext& ctx);

struct Coverage {
  // "read /srv/data/x (3x; tools: a, b; 2026-11-30 10:01-10:05)", "secret TOKEN as env (...)"
  std::vector<std::string> uncovered;
  std::vector<std::string> refused;  // seen, but under a deny rule of the policy (expected)
};

// What of `learned` the expanded `policy` does not allow, by the monitor's path classifier
// (monitor/path_classifier.h) and the network matcher. Reads of a private tmpfs path (/tmp,
// home) are covered only when the extension wrote that path itself (its own scratch files):
// otherwise it wanted the real file, which the tmpfs hides. A census syscall the policy's
// `syscalls.allow` leaves out is uncovered (`syscall NAME`); one the floor denies is refused.
Coverage CheckCoverage(const Learned& learned, const policies::ExpandedPolicy& policy,
                       const std::string& workspace, const std::string& home);

}  // namespace gander::learn
