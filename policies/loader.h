// Loading policies: from files, from named profiles (a search path, then the profiles built
// into the binary), and following `extends` chains into one merged Policy.
//
// The typical pipeline, all in the parent before anything is forked:
//   Result<Policy> leaf = LoadPolicyFile(path);                 // or LoadProfile(name, dirs)
//   Result<Policy> merged = ResolveExtends(*leaf, dirs);
//   Result<ExpandedPolicy> expanded = Expand(*merged, ctx);     // expand.h
//
// Errors that come from a syscall carry its errno in Error::code; print them with
// Error::Describe() to get the errno text. Parse errors are "FILE:LINE:COL: ..." (parser.h).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "policies/parser.h"  // ParsePolicy, ParseSize, ToYaml: part of this API
#include "policies/policy.h"

namespace gander::policies {

// `extends` chains longer than this many hops are rejected.
inline constexpr int kMaxExtendsDepth = 16;

// Reads and parses one policy file; `path` names it in errors and marks.
Result<Policy> LoadPolicyFile(const std::string& path);

// Loads the profile `name` ([A-Za-z0-9_-]+): the first `<dir>/<name>.yaml` in `search_dirs`
// order, else the built-in profile of that name. An unknown name is an error listing the
// profiles that exist. A profile read from a file has that file's path as its source; a
// built-in one has "profile:NAME".
Result<Policy> LoadProfile(const std::string& name, const std::vector<std::string>& search_dirs);

// The names of the profiles built into this binary, sorted.
std::vector<std::string> BuiltinProfileNames();

// Follows `extends` from `leaf` and merges the chain into one policy. An `extends` value that
// contains '/' or ends in .yaml is a file path, relative to the extending file's directory;
// anything else is a profile name (LoadProfile with `search_dirs`). Cycles and chains deeper
// than kMaxExtendsDepth are errors naming the chain.
//
// Merge, base first then derived: path lists and env.pass are concatenated keeping the first
// of any duplicates; env.set maps are merged with the derived value winning; each limit set in
// the derived policy overrides the base, and so does each `monitor` field; network rules are
// concatenated; a derived `syscalls.allow` replaces the base's but may only name syscalls the
// base's list has (it narrows; a wider list is an error). A derived policy can
// add rules, never remove them. The result has no `extends`, `chain` lists every policy's
// source (most derived first) and `source` is that chain joined by " <- ", e.g.
// "my.yaml <- profile:default".
Result<Policy> ResolveExtends(Policy leaf, const std::vector<std::string>& search_dirs);

}  // namespace gander::policies
