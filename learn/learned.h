// What a learning run saw, summed over audit log lines: the model `gander policy suggest`
// works from. Plain data; audit_reader.h fills it, suggest.h reads it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gander::learn {

// The policy-level access an observation needs: read (open for reading, stat), write (create,
// write, delete, rename, chmod) or exec.
enum class Need { kRead, kWrite, kExec };

// How often something was used, by which tool calls (a tool's name, or "(startup)", "(idle)",
// "(concurrent)" for events no single tool call caused) and when: the events' `time` (RFC 3339,
// UTC, fixed width, so that text order is time order; "" when a line had none).
struct Usage {
  uint64_t count = 0;
  std::set<std::string> tools;
  std::string first, last;
  void Add(uint64_t n, const std::string& tool, const std::string& time = "") {
    count += n;
    tools.insert(tool);
    Seen(time, time);
  }
  // Sums another usage into this one (another path collapsed into the same grant, another run).
  void Merge(const Usage& other) {
    count += other.count;
    tools.insert(other.tools.begin(), other.tools.end());
    Seen(other.first, other.last);
  }

 private:
  void Seen(const std::string& from, const std::string& to) {
    if (!from.empty() && (first.empty() || from < first)) first = from;
    if (!to.empty() && (last.empty() || to > last)) last = to;
  }
};

// A secret the learning runs' policy delivered (start lines' `info.secrets`; never a value).
struct SecretSeen {
  std::string from;  // its source: env, file, command
  std::string as;    // its delivery: env (a variable) or file (/run/secrets/NAME)
  Usage delivered;   // one per run it was delivered to ("(startup)"), with the runs' times
  // `as: file`: reads of the secret's file (file events on it). An environment secret's reads
  // (getenv) are not observable: only its delivery is known.
  Usage reads;
};

struct Learned {
  // Resolved absolute path -> need -> usage. Pseudo names (pipe:[1]) are not kept.
  std::map<std::string, std::map<Need, Usage>> files;
  // Paths the extension seen classified as `denied` (under a deny rule of the policy it ran with).
  std::map<std::string, Usage> denied_files;
  // (host or, without a name, the IP address, port) -> usage; TCP only, not DNS queries.
  std::map<std::pair<std::string, uint16_t>, Usage> network;
  // Host names of `network` and `network_udp` -> the addresses they were reached at (the
  // event's `ip`): what decides whether a named destination is public.
  std::map<std::string, std::set<std::string>> addresses;
  // The same for UDP (suggested as `protocol: udp` rules).
  std::map<std::pair<std::string, uint16_t>, Usage> network_udp;
  // Names asked of the DNS stub (lower case): under enforcement a name the policy does not
  // allow never resolves, so its connect is never seen; the query is the only trace.
  std::map<std::string, Usage> dns_names;
  // Syscalls the filter refused, by name (or "nr N").
  std::map<std::string, Usage> denied_syscalls;
  // Census (`syscall` lines with action `counted`): name -> calls.
  std::map<std::string, uint64_t> syscalls;
  uint64_t lines = 0;        // lines read that belong to the extension
  uint64_t bad_lines = 0;    // lines that did not parse (skipped, see docs/audit-log.md)
  uint64_t runs = 0;         // `lifecycle` `start` lines: learning runs in the logs
  uint64_t census_runs = 0;  // of those, runs that counted every syscall (`--mode learn`)
  // The runs' workspaces (start lines' `info.workspace`), distinct, in the order first seen.
  std::vector<std::string> workspaces;
  // What gander granted the runs' commands beyond their policy (`info.command_grants`):
  // granted again whenever the same command runs, so never suggested. Distinct.
  std::vector<std::string> command_grants;
  // Learned paths known to be directories (the launcher stats them; a path with learned
  // children is one too): such a path is granted as itself, not as its parent.
  std::set<std::string> directories;
  // Secrets delivered to the runs, by name, and the paths their files had (path -> name).
  std::map<std::string, SecretSeen> secrets;
  std::map<std::string, std::string> secret_files;
  uint64_t dropped = 0;  // events lost (`events_dropped`): the picture is incomplete
};

}  // namespace gander::learn
