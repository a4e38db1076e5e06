// Stage "open sinks" of `gander run`, and the sinks' closing.
#include "launcher/run/sinks.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "exporters/collector_paths.h"
#include "policies/fingerprint.h"

namespace gander::launcher {
namespace {

// The audit log, or nothing (with a warning): losing the log must not stop the extension.
std::unique_ptr<exporters::AuditLog> OpenAuditLog(exporters::AuditLogOptions options,
                                                  const std::string& name) {
  MakeParentDirs(options.path);
  auto log = exporters::AuditLog::Open(std::move(options));
  if (!log) {
    spdlog::warn("{}: no audit log: {}", name, log.error().Describe());
    return nullptr;
  }
  return std::move(log).value();
}

// `secrets_mounted`: file-delivered secrets appear at /run/secrets (namespaces or gVisor).
events::RunInfo RunInfo(const Prepared& p, sandbox::IsolationLevel level,
                        const std::string& accounting, bool secrets_mounted) {
  std::vector<events::RunSecret> secrets;
  for (const auto& [name, rule] : p.policy.secrets) {
    const bool file = rule.as == policies::SecretDelivery::kFile;
    secrets.push_back({.name = name,
                       .from = rule.from == policies::SecretSource::kEnv    ? "env"
                               : rule.from == policies::SecretSource::kFile ? "file"
                                                                            : "command",
                       .as = file ? "file" : "env",
                       .file = file ? p.secrets->FilePath(name, secrets_mounted) : ""});
  }
  std::string sources;
  for (const auto& source : p.policy.sources) sources += (sources.empty() ? "" : " <- ") + source;
  const bool gvisor = p.backend == policies::Backend::kGvisor;
  return {.backend = gvisor ? "gvisor" : "native",
          .isolation = gvisor ? "gvisor" : sandbox::LevelName(level),
          .mode = ModeName(p.mode),
          .syscall_accounting = accounting,
          .policy_sha256 = policies::PolicySha256(p.policy),
          .policy = sources,
          .workspace = p.workspace,
          .command_grants = p.command.readable,
          .secrets = std::move(secrets)};
}

}  // namespace

void InstallPhaseSink::Publish(const events::Event& event) {
  events::Event marked = event;
  marked.install_phase = true;
  inner_->Publish(marked);
}

// The monitor: events go through a bounded queue (never blocking the extension) to the
// collector, which counts them and writes the audit log, or to the audit log directly.
void OpenSinks(Session& s) {
  const Prepared& p = s.p;
  const events::RunInfo info = RunInfo(p, s.level, s.accounting, s.use_namespaces || p.gvisor());
  exporters::AuditLogOptions audit_options{.path = p.audit_log,
                                           .max_bytes = p.policy.audit_log_max_size,
                                           .max_files = p.policy.audit_log_files};
  s.sinks = std::make_unique<Sinks>();
  Sinks& out = *s.sinks;
  if (s.options.collector == CollectorUse::kOff) {
    out.audit = OpenAuditLog(audit_options, p.name);
    out.sink = out.audit.get();
  } else {
    MakeParentDirs(p.audit_log);
    exporters::CollectorClientOptions options;
    options.hello.extension = p.name;
    options.hello.info.run = info;
    options.hello.home = p.home;
    for (const auto& rule : p.policy.network.allow) {
      options.hello.info.destinations.push_back(rule.host);  // their series start at 0
    }
    for (const auto& [name, rule] : p.policy.secrets) options.hello.info.secrets.push_back(name);
    if (s.options.collector == CollectorUse::kAuto) {
      options.start_command = exporters::DefaultCollectorStartCommand();
    }
    options.audit_log = audit_options;
    out.collector = exporters::CollectorClient::Create(std::move(options));
    if (out.collector->fallback()) {
      spdlog::debug("{}: no collector ({}): writing the audit log directly", p.name,
                    out.collector->last_error() ? out.collector->last_error()->Describe() : "none");
    }
    out.sink = out.collector.get();
  }
  out.install = std::make_unique<InstallPhaseSink>(out.sink);
  if (s.options.install_phase && out.sink) out.sink = out.install.get();
  // A refusal is never silent: one actionable line on stderr when a call or the run fails after
  // one (launcher/denial_notice.h).
  out.notice = std::make_unique<DenialNotice>(out.sink, p.name, p.policy_label);
  out.sink = out.notice.get();
  events::Event start = Lifecycle(
      p.name, events::LifecyclePhase::kStart,
      p.command.exec_path + " (backend " + info.backend + ", isolation " + info.isolation +
          ", mode " + ModeName(p.mode) + ", syscall accounting " + s.accounting + ")");
  std::get<events::LifecycleEvent>(start.payload).info = info;
  s.queue.Push(std::move(start));
}

namespace {

void DrainQueue(Session& s) {
  Sinks& out = *s.sinks;
  while (out.sink && !s.queue.empty()) s.queue.Drain(*out.sink, std::chrono::milliseconds(100));
}

}  // namespace

void StartClosingSinks(Session& s) {
  DrainQueue(s);
  if (s.sinks->collector) s.sinks->collector->StartFinish();
}

void CloseSinks(Session& s) {
  Sinks& out = *s.sinks;
  DrainQueue(s);
  if (out.audit && out.audit->last_error()) {
    spdlog::warn("{}: audit log {}: {}", s.p.name, s.p.audit_log,
                 out.audit->last_error()->Describe());
  }
  if (out.collector) {
    out.collector->Finish(std::chrono::milliseconds(500));
    if (out.collector->last_error() && !out.collector->fallback()) {
      spdlog::warn("{}: collector: {}", s.p.name, out.collector->last_error()->Describe());
    }
  }
}

}  // namespace gander::launcher
