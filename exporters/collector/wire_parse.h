// The collector's reading of launcher lines (the protocol in exporters/collector_wire.h):
// hello, records carrying one audit-log event each (docs/audit-log.md, parsed back into a
// events::Event), and bye. Everything is validated here, once: known kinds and enumeration
// values, sizes, names; what fails is an Error naming the field, and the collector hangs up on
// that launcher.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "events/event.h"
#include "exporters/collector_wire.h"

namespace gander::exporters::collector {

struct LauncherLine {
  enum class Kind { kRecord, kSync, kBye };
  Kind kind = Kind::kRecord;
  uint64_t seq = 0;
  bool backlog_gap = false;  // "stage":"backlog": the client's own drop notice
  events::Event event;
  // The event's JSON exactly as the launcher encoded it (a view into the parsed line): what
  // the audit log gets, validated but never re-encoded (faster, and fields this collector
  // does not model survive).
  std::string_view event_json;
  bool counted = true;  // false: an event this collector does not know; audit log only
};

// Holds the JSON parser's buffers between lines (one per thread).
class LineParser {
 public:
  Result<wire::Hello> ParseHello(std::string_view line);
  Result<LauncherLine> ParseLine(std::string_view line);

 private:
  simdjson::dom::parser parser_;
};

// An extension name usable as a label and in a file name: 1..kMaxNameBytes bytes, printable
// ASCII except '/', '\\' and '"', not "." or "..".
bool ValidExtensionName(std::string_view name);

// "2025-06-01T10:00:00.123456Z" -> ns since the epoch (the form FormatRfc3339Micros writes).
std::optional<int64_t> ParseRfc3339Micros(std::string_view text);

}  // namespace gander::exporters::collector
