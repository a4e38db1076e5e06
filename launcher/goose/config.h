// Goose's config.yaml, rewritten so that its stdio extensions run under gander, and back.
//
// Pure text in, text out: nothing here touches the disk. yaml-cpp reads the file to find the
// entries and where their `cmd` and `args` are written (node marks); the rewrite then splices
// only those bytes, so comments, key order, quoting and line endings elsewhere stay exactly as
// they were. Wrapping replaces the `cmd` value by gander's path and inserts, before the
// original arguments, `run --name KEY (--profile P | --policy FILE) -- ORIGINAL_CMD` (the
// original cmd written exactly as it was); unwrapping removes those items and moves the
// original cmd back, so wrap then unwrap gives the original file byte for byte.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace gander::launcher::goose {

struct WrapSettings {
  std::string gander_path;  // absolute path of the gander binary, becomes `cmd`
  std::string policy_dir;   // where per-extension policies go (~/.config/gander/policies)
  std::string home;         // for `~/...` arguments
  // Whether an (expanded, absolute) argument names an existing directory; unset: none does.
  std::function<bool(const std::string&)> is_directory;
};

// A per-extension policy the caller should write (only when the entry has envs/env_keys or
// directory arguments).
struct PolicyFile {
  std::string path;
  std::string yaml;
};

// One entry of `extensions:` as found (and, for wrap/unwrap, what happened to it).
struct ExtensionEntry {
  std::string key;
  std::string type;  // stdio, builtin, sse, streamable_http, frontend, platform, ...
  bool enabled = false;
  bool wrapped = false;              // runs under gander (after the operation)
  bool gander_mcp = false;           // `gander mcp`: its sandboxes are gander's own, never wrapped
  bool changed = false;              // this operation rewrote it
  std::string note;                  // why it was left alone (or granted less), said on stderr
  std::string profile;               // wrapped: --profile value (empty when --policy)
  std::string policy;                // wrapped: --policy value
  std::vector<std::string> command;  // what the extension itself runs: cmd then args
  std::vector<std::string> argv;     // what Goose runs: cmd then args, as the config has them
  std::map<std::string, std::string> envs;  // Goose adds these to its environment
  std::string cwd;                          // the entry's cwd (newer Goose), else empty
  int timeout = 300;                        // seconds
  std::vector<std::string> secrets;      // env_keys, and the envs that are secrets (goose_envs.h)
  std::vector<std::string> plain_envs;   // the other envs: plain variables, passed as they are
  std::vector<std::string> directories;  // wrap: arguments naming existing directories
  // wrap: the directory arguments that are system directories or your home (or hold it):
  // granted read-only, never writable (IsUnsafeWriteGrant).
  std::vector<std::string> read_directories;
  std::optional<PolicyFile> policy_file;
};

struct Rewrite {
  std::string text;  // the whole config after the operation
  std::vector<ExtensionEntry> extensions;
};

// Reads the entries without changing anything (for `gander goose doctor`).
Result<std::vector<ExtensionEntry>> InspectConfig(const std::string& text);

// Wraps every enabled stdio extension not yet wrapped; everything else is left as it is.
Result<Rewrite> WrapConfig(const std::string& text, const WrapSettings& settings);

// Restores every wrapped stdio extension's original cmd and args.
Result<Rewrite> UnwrapConfig(const std::string& text);

// The shipped profile for a well-known MCP server run by `command` (cmd then args), e.g.
// `npx -y @modelcontextprotocol/server-github@1.0` -> "github"; "default" when unknown.
std::string ProfileForCommand(const std::vector<std::string>& command);

// The policy written for an extension: `secrets` (env_keys and secret envs) as named secrets,
// `plain_envs` in env.pass, `directories` (its directory arguments, as written) writable.
std::string ExtensionPolicyYaml(const ExtensionEntry& e);

// The arguments of `command` (cmd then args) that are absolute or `~/` paths of existing
// directories, as written: an extension's working set (server-filesystem's allowed dirs).
std::vector<std::string> DirectoryArguments(const std::vector<std::string>& command,
                                            const WrapSettings& settings);

// True when making `path` (absolute, normalised) writable would hand the sandbox the system
// or the user's whole home: a system directory (/etc, /usr, /var, /boot ... and what lies
// below them, but for /var's and /opt's subdirectories), or `home` or an ancestor of it.
bool IsUnsafeWriteGrant(const std::string& path, const std::string& home);

// A unified diff of two texts (3 lines of context), empty when they are equal.
std::string UnifiedDiff(const std::string& before, const std::string& after,
                        const std::string& before_name, const std::string& after_name);

}  // namespace gander::launcher::goose
