// Where a secret's value comes from: gander's environment, a host file, or a host command
// (token-minting CLIs), and the parsing their output needs (dotted JSON fields, expiry
// timestamps). Everything here runs on the host, outside the sandbox, before it starts or at a
// refresh.
//
// Error messages never contain a value, nor output a value could be part of: a failing command
// reports its exit status and its stderr with every known value scrubbed out; a JSON error
// names the field or the byte offset, never the text.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "policies/policy.h"

namespace gander::launcher {

inline constexpr size_t kMaxSecretOutput = 1 << 20;  // stdout of a source command, a file
inline constexpr size_t kMaxCommandStderr = 16 << 10;

// What a host command did. `out` and `err` are cut at their caps (the rest is read and dropped).
struct HostCommandResult {
  int status = -1;  // exit code, or 128+N when killed by signal N
  bool timed_out = false;
  bool interrupted = false;  // gander was asked to end meanwhile (`stop_on_termination`)
  std::string out;
  std::string err;
};

// Runs `/bin/sh -c script` on the host in a process group of its own, `input` on its stdin
// (/dev/null when empty), stdout and stderr captured, `envp` as its environment. At `timeout`
// the whole group is SIGKILLed. No fd of gander's but the pipes reaches it (gander's stdin and
// stdout carry MCP messages). Errors only when the command cannot be run at all.
// `stop_on_termination`: a SIGTERM, SIGINT or SIGHUP held for gander's loop
// (monitor::HoldTerminationSignals) and pending for this thread or the process ends the wait
// the same way (`interrupted`, when the command had not exited), the signal left pending: a
// run being started is not kept waiting for a password prompt it was told to give up.
Result<HostCommandResult> RunHostCommand(const std::string& script, std::string_view input,
                                         std::chrono::milliseconds timeout,
                                         const std::vector<std::string>& envp,
                                         bool stop_on_termination = false);

// The string at a dotted path ("Credentials.SessionToken"; a number segment indexes an array)
// of a JSON document. A number or boolean is returned as written; null, objects, arrays and
// missing fields are errors. Errors name the field and, for unparsable input, the byte offset
// only.
Result<std::string> JsonField(std::string_view json_text, std::string_view dotted_path);

// An expiry as seconds since the epoch: an RFC 3339 / ISO 8601 timestamp
// ("2026-11-30T12:00:00Z", "2026-11-30T12:00:00.123+02:00", "2026-11-30 12:00:00Z") or a
// number of epoch seconds ("1795000000"; more than 10^11 is read as milliseconds).
Result<int64_t> ParseExpiry(std::string_view text);

// `text` with every occurrence of each value (4 bytes or longer) replaced by "[redacted]".
std::string Scrub(std::string text, const std::vector<std::string>& values);

// A value from a source, with the expiry the source gave, if any (seconds since the epoch).
struct SecretValue {
  std::string value;
  std::optional<int64_t> expires_at;
};

// Fetches secret `name` from its source. `launcher_env` is gander's environment (the `env`
// source's, and the commands' environment); `known_values` are scrubbed from any stderr shown.
// A value is the file's content or the command's stdout with one trailing newline (\n or \r\n)
// removed, or the JSON field; an empty value, or one with a NUL byte, is an error.
// `stop_on_termination`: a command source's command is stopped when gander is told to end
// while it runs (RunHostCommand): the start's fetch, not a refresh's (the loop ends the run).
Result<SecretValue> FetchSecret(const std::string& name, const policies::SecretRule& rule,
                                const std::map<std::string, std::string>& launcher_env,
                                const std::vector<std::string>& known_values,
                                bool stop_on_termination = false);

// `NAME=value` entries of `env` plus `extra`, for a host command.
std::vector<std::string> CommandEnvironment(const std::map<std::string, std::string>& env,
                                            const std::map<std::string, std::string>& extra = {});

}  // namespace gander::launcher
