// The collector daemon behind `gander collect`: one per user and host. Launchers connect to
// its unix socket and stream numbered event records (exporters/collector_wire.h); it turns
// them into metrics (EventMetrics), serves /metrics on loopback through prometheus-cpp, and is
// the single writer of the audit logs while it runs.
//
// One thread does everything but HTTP: a poll loop over the listening socket, the launchers'
// connections and a signalfd. Within persist_interval of a change (sooner under load) it flushes
// the audit logs, writes the state file, and only then acknowledges what it applied (see
// collector_state.h for why that order makes restarts lossless).
//
// One instance per socket: the collector holds an exclusive flock on SOCKET.lock for its
// life, so a second `gander collect` on the same socket (two launchers starting one at once)
// exits with kExitAlreadyRunning before touching the socket.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "common/result.h"
#include "exporters/collector/label_bounds.h"

namespace gander::exporters::collector {

inline constexpr int kExitAlreadyRunning = 3;

struct CollectorOptions {
  std::string socket_path;  // default DefaultCollectorSocket()
  std::string state_path;   // default DefaultCollectorStatePath()
  std::string token_path;   // default DefaultCollectorTokenPath(); created when missing
  std::string listen;       // HOST:PORT for /metrics; "" for none (tests, benchmarks)
  LabelLimits limits;
  std::chrono::milliseconds persist_interval{100};
  size_t persist_after_records = 16384;  // persist (and ack) sooner when this many wait
  // After a turn that applied records, the loop stops reading the launchers' sockets for this
  // long: what they send meanwhile waits in the kernel's socket buffers (it survives a
  // launcher's SIGKILL: it is in the collector's socket already) and is read in one batch, so
  // that a steady stream of events wakes the collector once per `coalesce`, not once per
  // event; a launcher's send into a socket nobody waits on wakes no one. A new connection ends
  // the nap: a launcher starting, or one ringing because it waits for its final
  // acknowledgement or its socket's buffer is full. No nap after a turn that read a
  // connection's maximum (a flood). 0: read as they come.
  std::chrono::milliseconds coalesce{5};
  size_t max_connections = 256;
  int64_t forget_launchers_after_s = 7 * 24 * 3600;
  bool write_audit_logs = true;
  // When `listen`'s port is busy (another user's collector), take the next free one of the
  // following `listen_ports_to_try - 1` ports instead of retrying it forever. 1: only `listen`.
  int listen_ports_to_try = 1;
  // Exit when the socket's or the state file's directory is gone (a collector started on
  // demand for a HOME that was then removed); checked every `orphan_check_interval`.
  bool exit_when_orphaned = true;
  std::chrono::milliseconds orphan_check_interval{2000};
};

class Collector {
 public:
  // Takes the lock, loads the state, binds the socket and starts the exposer. An error with
  // code EWOULDBLOCK means another collector holds the lock.
  static Result<std::unique_ptr<Collector>> Start(CollectorOptions options);
  ~Collector();

  // Serves until SIGTERM/SIGINT (which the caller must have blocked in every thread, see
  // BlockStopSignals) or RequestStop(); persists the state before returning.
  Status Run();
  // From any thread.
  void RequestStop();

 private:
  class Impl;
  explicit Collector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Blocks SIGTERM, SIGINT and SIGPIPE in the calling thread (call before any thread starts, so
// the exposer's threads inherit it); the collector reads the first two from a signalfd.
void BlockStopSignals();

}  // namespace gander::exporters::collector
