// YAML <-> Policy: parsing and validating one policy document (format v1, see README.md), and
// writing a Policy back out as YAML. No file access; see loader.h for files and profiles.
//
// Every error is Error{0, "FILE:LINE:COL: what went wrong"} with a 1-based position, naming the
// key at fault and what was expected, e.g.
//   my.yaml:4:1: unknown key 'filesytem' in policy (expected one of: version, extends, ...)
//   my.yaml:7:9: filesystem.read: expected a list of path strings
// No yaml-cpp exception escapes these functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "policies/policy.h"
#include "policies/units.h"

namespace gander::policies {

// The only policy format version this build reads and writes.
inline constexpr int kPolicyVersion = 1;

// Parses one policy document. `source_name` names it in marks and errors (a path, or
// "profile:NAME" for a built-in profile); it becomes Policy::source and Policy::chain.
Result<Policy> ParsePolicy(std::string_view yaml_text, const std::string& source_name);

// YAML words of the secrets keys: env, file, command / refresh, kill, warn / env, file.
std::string_view ToString(SecretSource source);
std::string_view ToString(ExpiryAction action);
std::string_view ToString(SecretDelivery delivery);

// The YAML word for a files monitoring mode: "off", "opens" or "all".
std::string_view ToString(FilesMonitoring mode);

// The inverse ("off", "opens", "all"; case-sensitive), for the policy and the --files flag:
//   'some': unknown files monitoring mode (expected one of: off, opens, all)
Result<FilesMonitoring> ParseFilesMonitoring(std::string_view text);

// The YAML word for a backend ("native", "gvisor") and its inverse (for `backend:` and
// `gander run --backend`): 'vm': unknown backend (expected one of: native, gvisor)
std::string_view ToString(Backend backend);
Result<Backend> ParseBackend(std::string_view text);

// The policy as YAML, variables left unexpanded, with a leading comment naming its source chain.
// ParsePolicy(ToYaml(p)) gives back p (apart from marks and source names).
std::string ToYaml(const Policy& policy);

// True when `name` is a valid environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool IsValidEnvName(std::string_view name);

// True when `name` is a valid profile name: [A-Za-z0-9_-]+.
bool IsValidProfileName(std::string_view name);

// Is `name` a syscall of the native architecture (libseccomp's table)?
bool IsSyscallName(const std::string& name);

// "file:line:col", or just "file" when the mark has no position.
std::string FormatMark(const SourceMark& mark);

}  // namespace gander::policies
