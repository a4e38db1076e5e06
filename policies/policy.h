// The policy model: what one extension may see and do, as plain data.
//
// A policy file (YAML, version 1) is parsed into a Policy, merged with the chain of policies it
// `extends`, then expanded (variables, `~`) into an ExpandedPolicy with absolute paths that the
// launcher compiles into a sandbox. Nothing here touches the kernel.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gander::policies {

// Where a value came from, for error messages: file:line:column (1-based).
struct SourceMark {
  std::string file;
  int line = 0;
  int column = 0;
  friend bool operator==(const SourceMark&, const SourceMark&) = default;
};

// A path pattern as written in the policy (may hold ${WORKSPACE}, ${HOME}, ${VAR}, a leading ~).
struct PathEntry {
  std::string path;
  SourceMark mark;
  friend bool operator==(const PathEntry&, const PathEntry&) = default;
};

struct FilesystemRules {
  std::vector<PathEntry> read;      // read-only, no execve (mounted noexec)
  std::vector<PathEntry> exec;      // read and execute (binaries, shared libraries)
  std::vector<PathEntry> write;     // read and write (and execute, if also listed in exec)
  std::vector<PathEntry> private_;  // YAML `private`: an empty private tmpfs at this path
  std::vector<PathEntry> deny;      // never visible, even under a read/write/exec rule
  friend bool operator==(const FilesystemRules&, const FilesystemRules&) = default;
};

struct EnvRules {
  std::vector<std::string> pass;                // names copied from the launcher's environment
  std::map<std::string, std::string> set;       // fixed values (may use ${VAR} expansion)
  std::map<std::string, SourceMark> set_marks;  // where each `set` entry was written
  friend bool operator==(const EnvRules&, const EnvRules&) = default;
};

struct Limits {
  std::optional<uint64_t> processes;   // max processes in the sandbox
  std::optional<uint64_t> open_files;  // RLIMIT_NOFILE
  std::optional<uint64_t> file_size;   // bytes, RLIMIT_FSIZE
  std::optional<bool> core_dumps;      // false -> RLIMIT_CORE = 0
  std::optional<uint64_t> memory;      // bytes; enforced where the kernel lets us
  // Every private tmpfs (/tmp, $HOME and the other `private` paths) is mounted with size= and
  // nr_inodes=: these, else the defaults below (kDefaultTmpfs*; size: `memory` when set).
  std::optional<uint64_t> tmpfs_size;    // bytes per tmpfs
  std::optional<uint64_t> tmpfs_inodes;  // files and directories per tmpfs
  friend bool operator==(const Limits&, const Limits&) = default;
};

inline constexpr uint64_t kDefaultTmpfsSize = uint64_t{1} << 30;  // 1 GiB
inline constexpr uint64_t kDefaultTmpfsInodes = 65536;

// What size= and nr_inodes= a private tmpfs gets under these limits.
inline uint64_t TmpfsSize(const Limits& l) {
  return l.tmpfs_size ? *l.tmpfs_size : l.memory ? *l.memory : kDefaultTmpfsSize;
}
inline uint64_t TmpfsInodes(const Limits& l) {
  return l.tmpfs_inodes ? *l.tmpfs_inodes : kDefaultTmpfsInodes;
}

// Which transport a network rule is about (YAML `protocol:`).
enum class Protocol { kTcp, kUdp };
inline const char* ProtocolName(Protocol p) { return p == Protocol::kUdp ? "udp" : "tcp"; }
inline std::optional<Protocol> ProtocolValue(std::string_view name) {
  if (name == "tcp") return Protocol::kTcp;
  if (name == "udp") return Protocol::kUdp;
  return std::nullopt;
}

struct NetworkRule {
  std::string host;             // a name, *.suffix, an IP address or a CIDR
  std::vector<uint16_t> ports;  // empty only in a deny rule: every port
  SourceMark mark;
  // Unset: an allow rule allows TCP; a deny rule refuses both TCP and UDP.
  std::optional<Protocol> protocol = std::nullopt;
  friend bool operator==(const NetworkRule&, const NetworkRule&) = default;
};

struct NetworkRules {
  std::vector<NetworkRule> allow;
  std::vector<NetworkRule> deny;
  // The errno a refused connect or send gets (YAML `network.deny_errno`: a name such as
  // EACCES, see DenyErrnoValue in network_matcher.h); unset: ECONNREFUSED.
  std::optional<std::string> deny_errno = std::nullopt;
  friend bool operator==(const NetworkRules&, const NetworkRules&) = default;
};

// Which file syscalls the monitor watches (YAML `monitor.files`: off, opens, all).
enum class FilesMonitoring {
  kOff,    // none: no notification cost at all
  kOpens,  // the open family, exec and path-changing syscalls (the default)
  kAll,    // those, plus the stat family, access probes and readlink
};

// Defaults for what a policy leaves unset in `monitor` (ExpandedPolicy fills them in).
inline constexpr FilesMonitoring kDefaultFilesMonitoring = FilesMonitoring::kOpens;
inline constexpr uint64_t kDefaultAuditLogMaxSize = 16ULL << 20;  // 16MiB
inline constexpr int kDefaultAuditLogFiles = 4;
inline constexpr int kMaxAuditLogFiles = 1000;  // the audit log keeps at most this many

// YAML `monitor`: what is observed and where the audit log goes. Unset fields take the
// defaults above, or the base policy's value when merged.
struct MonitorRules {
  std::optional<FilesMonitoring> files;
  std::optional<PathEntry> audit_log;          // a path pattern, expanded like filesystem paths
  std::optional<uint64_t> audit_log_max_size;  // bytes: rotate when the file would grow past it
  std::optional<uint64_t> audit_log_files;     // rotated files kept, 1..kMaxAuditLogFiles
  // The OSV API asked before an npx install (launcher/install/): http(s)://..., or "off".
  std::optional<std::string> osv_endpoint;
  friend bool operator==(const MonitorRules&, const MonitorRules&) = default;
};

// YAML `backend`: what runs the extension. The gVisor backend runs it under `runsc` (a second
// kernel between the extension and the host's); what it cannot honour of a policy is listed by
// CheckBackendSupport (policies/backend.h).
enum class Backend {
  kNative,  // gander's own sandbox: namespaces, Landlock, seccomp (the default)
  kGvisor,  // runsc, rootless, from an OCI bundle generated from the policy
};

// One name in YAML `syscalls.allow`, as written (checked against the native architecture's
// syscall table when parsed).
struct SyscallEntry {
  std::string name;
  SourceMark mark;
  friend bool operator==(const SyscallEntry&, const SyscallEntry&) = default;
};

// Syscalls every `syscalls.allow` list allows without naming them: the sandbox's own steps
// between installing the seccomp filter and the extension's first instruction (execve; write
// reports a failed execve; the listener hand-off's sendmsg is allowed on its fd only, see
// sandbox/seccomp_filter.h), and what the kernel needs of any process (signal return,
// restarted syscalls, exit); and sched_yield, which takes no argument and touches nothing,
// but which a runtime makes only now and then (V8's threads, in 1 of 3 node runs), so that a
// census of a few learning runs misses it and the enforced run is refused it.
inline constexpr const char* kImplicitSyscalls[] = {
    "execve", "write", "exit", "exit_group", "rt_sigreturn", "restart_syscall", "sched_yield",
};

// YAML `syscalls`: which syscalls the extension may make at all (policies/README.md). Unset:
// every syscall gander's dangerous-syscall floor lets through. Set: only these (plus the few
// the sandbox itself needs to reach the extension's execve, sandbox/seccomp_filter.h); the
// floor's denials still win. A derived policy's list is intersected with its base's and may
// not name a syscall the base's list leaves out (the loader refuses it).
struct SyscallRules {
  std::optional<std::vector<SyscallEntry>> allow;
  SourceMark allow_mark;  // where `allow` was written
  friend bool operator==(const SyscallRules&, const SyscallRules&) = default;
};

// YAML `secrets.NAME.from`: where a secret's value comes from.
enum class SecretSource {
  kEnv,      // gander's own environment (where Goose puts `envs` and `env_keys`)
  kFile,     // a file on the host, read at start (and at refresh)
  kCommand,  // a command run on the host, outside the sandbox, with a timeout
};

// YAML `secrets.NAME.on_expiry`: what happens when the lifetime ends.
enum class ExpiryAction {
  kKill,     // the extension is ended, with a message on stderr (the default)
  kRefresh,  // a new value is minted and delivered
  kWarn,     // reported (log and audit log), nothing else
};

// YAML `secrets.NAME.as`: how the value reaches the extension.
enum class SecretDelivery {
  kEnv,   // the environment variable NAME
  kFile,  // a file /run/secrets/NAME (mode 0400), its path in NAME_FILE
};

inline constexpr uint64_t kDefaultSecretTimeoutMs = 30'000;  // `run` and `revoke`

// One entry of YAML `secrets`: the secret NAME (the variable inside the sandbox) and where its
// value comes from. Only the fields of its source are set (the parser checks).
struct SecretRule {
  SecretSource from = SecretSource::kEnv;
  std::string env_name;  // from: env, `name`: the launcher's variable (default: NAME)
  PathEntry path;        // from: file (expanded like filesystem paths)
  std::string run;       // from: command: a /bin/sh -c script, run on the host
  std::string json;      // from: command: dotted path of the value in JSON output; "": raw
  std::string expires;   // from: command: dotted path of the expiry in JSON output
  std::optional<uint64_t> timeout_ms;     // `run` and `revoke` (default 30 s)
  std::optional<uint64_t> ttl_s;          // lifetime from each mint, seconds
  std::optional<ExpiryAction> on_expiry;  // default kKill
  std::string revoke;                     // a /bin/sh -c script run at exit, value on stdin
  SecretDelivery as = SecretDelivery::kEnv;
  SourceMark mark;  // where the entry was written
  friend bool operator==(const SecretRule&, const SecretRule&) = default;
};

// One policy file as written (before merging with what it extends).
struct Policy {
  int version = 1;
  std::optional<std::string> extends;  // a profile name or a path relative to this file
  SourceMark extends_mark;             // where `extends` was written
  FilesystemRules filesystem;
  EnvRules env;
  Limits limits;
  NetworkRules network;
  MonitorRules monitor;
  std::map<std::string, SecretRule> secrets;  // by the variable name inside the sandbox
  SyscallRules syscalls;
  std::optional<Backend> backend;  // unset: the base policy's, else native
  SourceMark backend_mark;         // where `backend` was written
  // YAML `install: auto | off`: the install phase for package runners (npx, npm exec, uvx,
  // pipx run; launcher/install/). Unset: the base policy's, else auto. --install wins.
  std::optional<bool> install;
  std::string source;  // file name or "profile:NAME"; merged: "a.yaml <- profile:default"
  std::vector<std::string> chain;  // each merged policy's source, most derived first
  friend bool operator==(const Policy&, const Policy&) = default;
};

// A policy after `extends` is merged in and variables are expanded: every path absolute and
// normalised (no `.`, `..`, duplicate or trailing slashes); symlinks are NOT resolved here.
struct ExpandedPolicy {
  std::vector<std::string> read, exec, write, private_, deny;
  std::vector<std::string> env_pass;
  std::map<std::string, std::string> env_set;
  Limits limits;
  NetworkRules network;
  FilesMonitoring files = kDefaultFilesMonitoring;
  std::optional<std::string> audit_log;  // absolute and normalised; unset: no policy choice
  uint64_t audit_log_max_size = kDefaultAuditLogMaxSize;
  int audit_log_files = kDefaultAuditLogFiles;
  std::map<std::string, SecretRule> secrets;  // file paths expanded; no values here
  Backend backend = Backend::kNative;
  // `syscalls.allow`, sorted and distinct; unset: no allowlist (the floor only).
  std::optional<std::vector<std::string>> syscalls_allow;
  std::vector<std::string> sources;  // the chain, most derived first
};

// Values the expansion step substitutes.
struct ExpansionContext {
  std::string workspace;                       // absolute
  std::string home;                            // absolute
  std::map<std::string, std::string> environ;  // the launcher's environment
  // The extension's own persistent data directory (${DATA}): gander's, per extension name,
  // outside the install cache (launcher/run.h, DataDirectory). Empty: ${DATA} is undefined.
  std::string data = {};
};

}  // namespace gander::policies
