// Names of the event model's enumerations and the wall clock.
#include "events/event.h"

#include <time.h>

#include <type_traits>
#include <variant>

namespace gander::events {

// Event::kind() relies on the payload's alternatives being in EventKind order.
template <EventKind kKind, typename T>
constexpr bool kAlternativeIs =
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(kKind), decltype(Event::payload)>,
                   T>;
static_assert(kAlternativeIs<EventKind::kFile, FileEvent> &&
              kAlternativeIs<EventKind::kNetwork, NetworkEvent> &&
              kAlternativeIs<EventKind::kSyscall, SyscallEvent> &&
              kAlternativeIs<EventKind::kProcess, ProcessEvent> &&
              kAlternativeIs<EventKind::kLifecycle, LifecycleEvent> &&
              kAlternativeIs<EventKind::kTool, ToolEvent> &&
              kAlternativeIs<EventKind::kRedaction, RedactionEvent>);

int64_t WallClockNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string_view ToString(PathClass c) {
  switch (c) {
    case PathClass::kWorkspace:
      return "workspace";
    case PathClass::kPrivate:
      return "private";
    case PathClass::kAllowedWrite:
      return "allowed_write";
    case PathClass::kAllowedReadOnly:
      return "allowed_read_only";
    case PathClass::kSystem:
      return "system";
    case PathClass::kOutside:
      return "outside";
    case PathClass::kDenied:
      return "denied";
    case PathClass::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view ToString(FileAccess a) {
  switch (a) {
    case FileAccess::kRead:
      return "read";
    case FileAccess::kWrite:
      return "write";
    case FileAccess::kExec:
      return "exec";
    case FileAccess::kCreate:
      return "create";
    case FileAccess::kDelete:
      return "delete";
    case FileAccess::kRename:
      return "rename";
    case FileAccess::kChmod:
      return "chmod";
    case FileAccess::kStat:
      return "stat";
    case FileAccess::kOther:
      return "other";
  }
  return "other";
}

std::string_view ToString(Verdict v) {
  switch (v) {
    case Verdict::kAllowed:
      return "allowed";
    case Verdict::kDenied:
      return "denied";
    case Verdict::kWouldDeny:
      return "would_deny";
  }
  return "allowed";
}

std::string_view ToString(ToolCallState s) {
  switch (s) {
    case ToolCallState::kStartup:
      return "startup";
    case ToolCallState::kIdle:
      return "idle";
    case ToolCallState::kOne:
      return "one";
    case ToolCallState::kConcurrent:
      return "concurrent";
  }
  return "startup";
}

std::string_view ToString(SyscallAction a) {
  switch (a) {
    case SyscallAction::kDenied:
      return "denied";
    case SyscallAction::kCounted:
      return "counted";
  }
  return "denied";
}

std::string_view ToString(ProcessAction a) {
  switch (a) {
    case ProcessAction::kExec:
      return "exec";
    case ProcessAction::kExit:
      return "exit";
  }
  return "exec";
}

std::string_view ToString(LifecyclePhase p) {
  switch (p) {
    case LifecyclePhase::kStart:
      return "start";
    case LifecyclePhase::kStop:
      return "stop";
    case LifecyclePhase::kEventsDropped:
      return "events_dropped";
    case LifecyclePhase::kRelay:
      return "relay";
    case LifecyclePhase::kRestart:
      return "restart";
    case LifecyclePhase::kSecret:
      return "secret";
    case LifecyclePhase::kInstall:
      return "install";
  }
  return "start";
}

std::string_view ToString(EventKind k) {
  switch (k) {
    case EventKind::kFile:
      return "file";
    case EventKind::kNetwork:
      return "network";
    case EventKind::kSyscall:
      return "syscall";
    case EventKind::kProcess:
      return "process";
    case EventKind::kLifecycle:
      return "lifecycle";
    case EventKind::kTool:
      return "tool";
    case EventKind::kRedaction:
      return "redaction";
  }
  return "lifecycle";
}

}  // namespace gander::events
