// The event model: one record type for everything the monitor reports (file accesses, network
// attempts, syscall denials and census counts, process exec/exit, lifecycle), handed to
// EventSinks (audit log, metrics) through a BoundedEventQueue. Plain data; the JSON form is in
// event_json.h and documented in docs/audit-log.md (schema version kEventSchemaVersion).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gander::events {

// Bumped only for incompatible changes; new fields and new enum values are compatible.
inline constexpr int kEventSchemaVersion = 1;

// Bounds applied when an event is written (the loop should read no more than this anyway).
inline constexpr size_t kMaxRawPathBytes = 1024;  // FileEvent::raw_path
inline constexpr size_t kMaxArgvEntries = 32;     // ProcessEvent::argv
inline constexpr size_t kMaxArgBytes = 256;       // each argv entry

// What the path resolved to, from the sandbox's point of view (see path_classifier.h).
enum class PathClass {
  kWorkspace,        // the workspace, or beneath it
  kPrivate,          // a private tmpfs (/tmp, $HOME in the sandbox)
  kAllowedWrite,     // a write grant other than the workspace
  kAllowedReadOnly,  // a read or exec grant (system programs, libraries, /etc)
  kSystem,           // /proc, /dev, and pseudo files (pipe:[N], socket:[N], anon_inode:...)
  kOutside,          // anything else: not visible in the sandbox
  kDenied,           // under a deny rule (wins over every other rule)
  kUnknown,          // the path could not be resolved (the classifier never returns this)
};

// What a file syscall tries to do with its path.
enum class FileAccess { kRead, kWrite, kExec, kCreate, kDelete, kRename, kChmod, kStat, kOther };

// The monitor's decision. kAllowed: passed on to the kernel (the mount view and Landlock
// still apply); kDenied: refused with `error`; kWouldDeny: `--mode monitor`, recorded only.
enum class Verdict { kAllowed, kDenied, kWouldDeny };

// Which tool call was in flight when the event happened (filled by the stdio relay).
enum class ToolCallState {
  kStartup,     // before the first tools/call (initialize, tools/list, start-up work)
  kIdle,        // between calls
  kOne,         // exactly one call in flight: `call` names it
  kConcurrent,  // several in flight: the event cannot be attributed to one
};

struct ToolCall {
  std::string tool{};        // params.name of the tools/call
  std::string request_id{};  // the JSON-RPC id as text (a number is written in decimal)
};

struct ToolCallSlot {
  ToolCallState state = ToolCallState::kStartup;
  std::optional<ToolCall> call{};  // set when state is kOne
};

struct FileEvent {
  std::string syscall{};   // "openat", "execve", "unlinkat", ...
  std::string raw_path{};  // as read from the target, cut at NUL and at kMaxRawPathBytes
  bool raw_path_truncated = false;
  std::optional<std::string> path{};  // resolved absolute path; nullopt when unresolved
  // The short form the metrics use as their `path` label (NormaliseForLabel in
  // monitor/path_classifier.h: "~/.ssh", "/etc/shadow", "${WORKSPACE}"); "" when not computed.
  std::string path_label{};
  PathClass path_class = PathClass::kUnknown;
  FileAccess access = FileAccess::kOther;
  Verdict result = Verdict::kAllowed;
  int error = 0;  // errno returned to the process by the monitor or filter, else 0
};

enum class SyscallAction {
  kDenied,   // the filter refused it (reported before the errno is returned)
  kCounted,  // census: counted, not refused
};

struct SyscallEvent {
  std::string name{};  // "ptrace"; "" when the number has no name on this architecture
  int nr = -1;
  int error = 0;  // errno returned when kDenied
  SyscallAction action = SyscallAction::kDenied;
  uint64_t count = 1;  // census events may aggregate several calls
};

enum class ProcessAction { kExec, kExit };

struct ProcessEvent {
  ProcessAction action = ProcessAction::kExec;
  std::string path{};               // kExec: the program, as resolved
  std::vector<std::string> argv{};  // kExec: bounded by kMaxArgvEntries / kMaxArgBytes
  bool argv_truncated = false;
  std::optional<int> exit_code{};  // kExit: normal exit
  std::optional<int> signal{};     // kExit: killed by this signal
  int error = 0;                   // kExec refused: errno
};

// A network attempt (denied, or refused by the DNS stub) or a brokered connection (written
// when it ends, with its byte counts). transport "dns" is one query to the DNS stub.
struct NetworkEvent {
  std::string host{};  // the name the stub resolved to `ip` (or the name asked for), or ""
  std::string ip{};    // destination address as text, or ""
  uint16_t port = 0;
  std::string transport{};  // "tcp", "udp", "dns", "unix", or ""
  Verdict result = Verdict::kAllowed;
  int error = 0;           // errno returned to the process, or the connection's failure
  std::string syscall{};   // connect, sendto, sendmsg, sendmmsg; "" for DNS queries
  std::string rule{};      // the policy host that allowed (or denied) it, "" when none
  uint64_t bytes_out = 0;  // brokered TCP: bytes the extension sent that reached the host
  uint64_t bytes_in = 0;   // brokered TCP: bytes the host sent
  // Relayed UDP (one event per flow: a child socket and a destination): datagrams relayed out
  // and in; bytes_out/bytes_in are their payload bytes.
  uint64_t datagrams_out = 0;
  uint64_t datagrams_in = 0;
  uint64_t datagrams_dropped = 0;  // ... not relayed (a send failed), either way
  std::string end{};               // ... why the flow ended: idle, evicted, exit
  int64_t duration_ns = 0;         // brokered TCP: from connect() to the end of the relay
};

enum class LifecyclePhase {
  kStart,          // the extension started (detail: command)
  kStop,           // the extension stopped (detail: reason)
  kEventsDropped,  // events were lost before this point (detail: how many, in decimal)
  kRelay,          // the stdio relay's counts at the end (detail: "key=value ...")
  kRestart,        // the extension was restarted behind the relay (detail: the reason)
  kSecret,         // a secret expired, was refreshed or revoked (detail: its name and what
                   // happened; never a value)
  kInstall,        // the install phase: OSV verdict, install started/failed/done (detail)
};

// A secret the run's policy delivers (never its value): what learning records of it.
struct RunSecret {
  std::string name;
  std::string from;  // env, file, command
  std::string as;    // env, file
  std::string file;  // as file: its path as the extension sees it; "" otherwise
};

// How a run is set up, on its start event: what the metrics' extension_info carries.
struct RunInfo {
  std::string backend = "native";
  std::string isolation;           // basic, seccomp, landlock, full (sandbox/isolation.h)
  std::string mode = "enforce";    // enforce, monitor, learn
  std::string syscall_accounting;  // census, watched, none
  std::string policy_sha256;       // of the enforced policy (policies/fingerprint.h)
  std::string policy;              // its sources, most derived first, joined by " <- "
  std::string workspace;           // the absolute workspace (learning reads paths against it)
  // What gander granted the command itself (read+exec), beyond the policy: the executable, its
  // interpreter and their install prefixes (launcher/command.h). A learned policy need not.
  std::vector<std::string> command_grants{};
  std::vector<RunSecret> secrets{};  // the policy's secrets, by name
};

struct LifecycleEvent {
  LifecyclePhase what = LifecyclePhase::kStart;
  std::string detail{};
  std::optional<RunInfo> info{};  // kStart only
};

// ToolEvent::outcome's names, in relay::ToolCallOutcome's order (relay/tool_call_tracker.h).
inline constexpr std::string_view kToolOutcomes[] = {"ok",        "tool_error",     "rpc_error",
                                                     "cancelled", "input_required", "aborted"};

// A tools/call that ended, seen by the stdio relay (the per-tool metrics come from these).
struct ToolEvent {
  std::string name{};        // params.name
  std::string request_id{};  // the JSON-RPC id as text
  // "ok", "tool_error" (result.isError), "rpc_error", "cancelled", "input_required" (2026
  // framing), "aborted" (no answer: restart or end of session)
  std::string outcome{};
  int64_t duration_ns = 0;  // request forwarded -> response forwarded
  int error_code = 0;       // rpc_error: error.code
  // Events the call caused while it was the only one in flight.
  uint64_t files = 0;
  uint64_t network = 0;
  uint64_t denials = 0;
  std::optional<std::string> session_id{};   // the client's _meta agent-session-id
  std::optional<std::string> working_dir{};  // the client's _meta agent-working-dir
};

// A secret's value (or an escaped form of it) replaced by a marker on its way out.
struct RedactionEvent {
  std::string secret{};   // the secret's name
  std::string channel{};  // "stdout" or "stderr"
  uint64_t count = 1;
};

enum class EventKind { kFile, kNetwork, kSyscall, kProcess, kLifecycle, kTool, kRedaction };

struct Event {
  int64_t time_ns = 0;           // wall clock (CLOCK_REALTIME), nanoseconds since the Unix epoch
  std::string extension{};       // the extension's name (policy / --name)
  std::optional<int32_t> pid{};  // as seen from the host
  std::optional<int32_t> sandbox_pid{};  // as seen inside the sandbox's pid namespace
  std::string executable{};              // /proc/PID/exe of the process, "" when unknown
  ToolCallSlot tool_call{};
  // The alternatives are in EventKind order.
  std::variant<FileEvent, NetworkEvent, SyscallEvent, ProcessEvent, LifecycleEvent, ToolEvent,
               RedactionEvent>
      payload{};
  // The install phase of a package runner (launcher/install/): gander's own `npm install` or
  // pip, not the extension. Written `"phase":"install"`; never counted in the extension's
  // metrics, `gander audit` findings or `policy suggest`.
  bool install_phase = false;  // last: positional initialisers end with the payload

  EventKind kind() const { return static_cast<EventKind>(payload.index()); }
};

// The current wall-clock time for Event::time_ns.
int64_t WallClockNowNs();

// Stable lower-case names, as written in the audit log and used as metric label values.
std::string_view ToString(PathClass c);
std::string_view ToString(FileAccess a);
std::string_view ToString(Verdict v);
std::string_view ToString(ToolCallState s);
std::string_view ToString(SyscallAction a);
std::string_view ToString(ProcessAction a);
std::string_view ToString(LifecyclePhase p);
std::string_view ToString(EventKind k);

}  // namespace gander::events
