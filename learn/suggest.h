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
};

// A policy v1 YAML document extending ctx.extends that grants what was seen and the base does
// not already allow: paths collapsed to directories (the workspace, home, an interpreter's
// prefix, a shared library's directory), read / write / exec separated, network hosts with
// their ports, the secrets the runs were given (names and delivery, never values); each entry
// with a comment saying how often, by which tools and when (first-last) it was used.
// Named public hosts are granted but flagged `# REVIEW: public host`. Risky items (credentials
// under home, the system's password and key files, anything under a deny rule of the base,
// public addresses without a name, link-local destinations, syscalls the filter refused) are
// never added: they are listed in a `# REVIEW:` comment block at the end.
std::string SuggestPolicy(const Learned& learned, const SuggestContext& ctx);

struct Coverage {
  // "read /srv/data/x (3x; tools: a, b; 2026-11-30 10:01-10:05)", "secret TOKEN as env (...)"
  std::vector<std::string> uncovered;
  std::vector<std::string> refused;  // seen, but under a deny rule of the policy (expected)
};

// What of `learned` the expanded `policy` does not allow, by the monitor's path classifier
// (monitor/path_classifier.h) and the network matcher. Reads of a private tmpfs path (/tmp,
// home) are covered only when the extension wrote that path itself (its own scratch files):
// otherwise it wanted the real file, which the tmpfs hides.
Coverage CheckCoverage(const Learned& learned, const policies::ExpandedPolicy& policy,
                       const std::string& workspace, const std::string& home);

}  // namespace gander::learn
