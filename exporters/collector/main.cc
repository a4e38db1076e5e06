// gander-collect: the collector daemon's executable, run as `gander collect` (which execs it),
// by a launcher that found none running, or by the systemd user unit. Kept out of the `gander`
// binary so that `gander run` never loads prometheus-cpp, civetweb and a shared libstdc++ at
// start-up.
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "exporters/collector/collector.h"
#include "exporters/collector_paths.h"
#include "exporters/collector_token.h"

namespace {

using gander::exporters::collector::Collector;
using gander::exporters::collector::CollectorOptions;

void SetUpLogging(const std::string& level, const std::string& file) {
  std::shared_ptr<spdlog::logger> logger;
  if (file.empty()) {
    logger = spdlog::stderr_logger_st("gander-collect");
  } else {
    logger = spdlog::rotating_logger_st("gander-collect", file, 1024 * 1024, 2);
    logger->flush_on(spdlog::level::info);
  }
  logger->set_pattern(file.empty() ? "gander collect: %^%l%$: %v"
                                   : "%Y-%m-%dT%H:%M:%S.%e %l [%P] %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gander collect: the per-user metrics collector and audit-log writer"};
  CollectorOptions o;
  o.listen = gander::exporters::kDefaultMetricsListen;
  std::string log_level = "info", log_file;
  int64_t persist_ms = o.persist_interval.count();
  int64_t coalesce_ms = o.coalesce.count();
  app.add_option(
      "--socket", o.socket_path,
      "Unix socket for launchers (default " + gander::exporters::DefaultCollectorSocket() + ")");
  app.add_option("--state", o.state_path,
                 "State file (default " + gander::exporters::DefaultCollectorStatePath() + ")");
  app.add_option("--token", o.token_path,
                 "The token every launcher must present, created when missing (default " +
                     gander::exporters::DefaultCollectorTokenPath() + ")");
  auto* listen = app.add_option("--listen", o.listen,
                                "HOST:PORT serving /metrics, or 'none' (default: the first "
                                "free port from 127.0.0.1:9477 on, one per user; the address "
                                "is recorded in SOCKET.metrics)")
                     ->capture_default_str();
  bool stay = false;
  app.add_flag("--stay", stay,
               "Keep running when the socket's or the state's directory is removed (default: "
               "exit, as nothing is left to serve)");
  app.add_option("--persist-interval-ms", persist_ms,
                 "Longest time between state saves (and acknowledgements)")
      ->capture_default_str();
  app.add_option("--coalesce-ms", coalesce_ms,
                 "After reading events, leave the launchers' sockets unread this long, so that "
                 "a steady stream is read in batches (0: read every record as it comes)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000}))
      ->capture_default_str();
  app.add_option("--max-paths", o.limits.path, "Path label values per extension")
      ->capture_default_str();
  app.add_option("--max-destinations", o.limits.destination,
                 "Destination label values per extension")
      ->capture_default_str();
  app.add_option("--max-syscalls", o.limits.syscall, "Syscall label values per extension")
      ->capture_default_str();
  app.add_option("--max-tools", o.limits.tool, "Tool label values per extension")
      ->capture_default_str();
  app.add_option("--max-secrets", o.limits.secret, "Secret label values per extension")
      ->capture_default_str();
  app.add_option("--max-extensions", o.limits.extensions, "Distinct extensions accepted")
      ->capture_default_str();
  app.add_flag("!--no-audit-log", o.write_audit_logs,
               "Do not write audit logs (metrics only; for benchmarks)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.add_option("--log-file", log_file, "Log here (rotated at 1 MiB) instead of stderr");
  CLI11_PARSE(app, argc, argv);
  if (o.listen == "none") o.listen.clear();
  // The default port is shared by every user of the host: the first free one from it on.
  // An explicit --listen is kept (retried until free).
  if (listen->count() == 0) o.listen_ports_to_try = 64;
  o.exit_when_orphaned = !stay;
  o.persist_interval = std::chrono::milliseconds(persist_ms);
  o.coalesce = std::chrono::milliseconds(coalesce_ms);

  // Before any thread exists (the exposer's inherit the mask): SIGTERM/SIGINT arrive on the
  // collector's signalfd.
  gander::exporters::collector::BlockStopSignals();
  try {
    SetUpLogging(log_level, log_file);
  } catch (const spdlog::spdlog_ex& e) {
    std::cerr << "gander collect: log file: " << e.what() << "\n";
    return 1;
  }
  auto collector = Collector::Start(std::move(o));
  if (!collector) {
    if (collector.error().code == EWOULDBLOCK) {
      spdlog::info("{}: already running", collector.error().message);
      return gander::exporters::collector::kExitAlreadyRunning;
    }
    spdlog::error("{}", collector.error().Describe());
    return 1;
  }
  if (auto s = (*collector)->Run(); !s) {
    spdlog::error("{}", s.error().Describe());
    return 1;
  }
  return 0;
}
