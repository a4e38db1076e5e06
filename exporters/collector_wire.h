// The launcher <-> collector wire protocol (docs/collector.md): newline-delimited JSON over a
// unix stream socket. This file holds what both ends share and what the launcher side needs
// to encode and decode; it depends on nothing but the monitor's event model, so that `gander
// run` does not carry the collector's JSON parser or Prometheus.
//
//   launcher -> collector   {"t":"hello","v":1,"launcher":ID,"extension":NAME,...}   first line
//                           {"seq":N,"event":{...audit-log event...}}               one per event
//                           {"seq":N,"stage":"backlog","event":{...events_dropped...}}
//                           {"t":"sync","seq":N}      the launcher is exiting: persist and
//                                                     acknowledge now, not at the next interval
//                           {"t":"bye","seq":N}                                      last line
//   collector -> launcher   {"t":"welcome","seq":M}   M: the last sequence number applied
//                           {"t":"ack","seq":M}       everything <= M is applied and persisted
//                           {"t":"error","reason":TEXT}   then the collector hangs up
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.h"

namespace gander::exporters::wire {

inline constexpr int kProtocolVersion = 1;
// Bounds the collector enforces (a launcher that exceeds one is disconnected). An event line
// is at most ~40 KiB (32 argv entries of 256 bytes, each byte escaped to 4 characters).
inline constexpr size_t kMaxLineBytes = 128 * 1024;
inline constexpr size_t kMaxNameBytes = 128;      // extension names, launcher ids
inline constexpr size_t kMaxHelloListSize = 256;  // destinations, secrets

// Where a lost event was dropped: the launcher's event queue (the monitor's), the client's
// backlog while the collector was unreachable, or the collector's audit log write.
inline constexpr std::string_view kStageQueue = "queue";
inline constexpr std::string_view kStageBacklog = "backlog";
inline constexpr std::string_view kStageAuditLog = "audit_log";

// The launcher's description of the extension it runs (labels of gander_extension_info) and
// what its policy implies (series that start at 0).
// The run as the start event describes it, plus what the collector pre-creates series for.
struct ExtensionInfo {
  events::RunInfo run{};
  std::vector<std::string> destinations{};  // hosts the policy allows
  std::vector<std::string> secrets{};       // secret names the policy injects
};

struct Hello {
  std::string launcher;   // unique per launcher process (never reused)
  std::string extension;  // the extension's name
  bool running = false;   // the extension runs (start published, stop not yet)
  ExtensionInfo info;
  std::string home;  // the user's home, to shorten paths to ~/...
  // The collector's per-user token (exporters/collector_token.h): the collector refuses a
  // hello without it, so reaching the socket is not enough to report for an extension.
  std::string token;
  // The collector writes the audit log at a path it derives itself from the (validated)
  // extension name, under its own state directory: $XDG_STATE_HOME/gander/audit/NAME.jsonl. A
  // hello never names a path (the collector refuses one that does: a forged hello once made it
  // rotate and overwrite ~/.bashrc). A launcher with its own --audit-log writes that file
  // itself and says so here: the collector then writes none for it.
  bool audit_log_local = false;
  uint64_t audit_log_max_bytes = 0;  // 0: the collector's default
  int audit_log_max_files = 0;
};

std::string EncodeHello(const Hello& hello);
// `stage` is set only for the client's own drop notices (kStageBacklog).
std::string EncodeRecord(uint64_t seq, const events::Event& event, std::string_view stage = {});
std::string EncodeSync(uint64_t last_seq);
std::string EncodeBye(uint64_t last_seq);

// Collector -> launcher.
struct Reply {
  enum class Kind { kWelcome, kAck, kError };
  Kind kind = Kind::kAck;
  uint64_t seq = 0;
  std::string reason;
};
std::string EncodeWelcome(uint64_t seq);
std::string EncodeAck(uint64_t seq);
std::string EncodeError(std::string_view reason);
// Parses one reply line (without its newline); nullopt when it is none of the three.
std::optional<Reply> ParseReply(std::string_view line);

}  // namespace gander::exporters::wire
