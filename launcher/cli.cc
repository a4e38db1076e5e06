#include "launcher/cli.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdio>
#include <iostream>

#include "exporters/collector_paths.h"
#include "launcher/cli_words.h"
#include "launcher/collect.h"
#include "launcher/completions.h"
#include "launcher/doctor.h"
#include "launcher/goose/cli.h"
#include "launcher/install/install_phase.h"
#include "launcher/policy_learn.h"
#include "launcher/run.h"
#include "launcher/status.h"
#include "mcp/executor.h"
#include "mcp/server.h"
#include "policies/expand.h"
#include "policies/loader.h"
#include "policies/parser.h"
#include "sandbox/isolation.h"
#include "vet/audit.h"

namespace gander::launcher {
namespace {

// Diagnostics go to stderr only: while wrapping an extension, stdout carries nothing but the
// extension's MCP messages. Thread-safe: a secret's refresh and revoke commands run on threads
// of their own (launcher/secrets.h) and may log.
void SetUpLogging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("gander");
  // Debug lines carry a microsecond clock: they time the start-up phases.
  logger->set_pattern(level == "debug" || level == "trace" ? "gander: %H:%M:%S.%f %^%l%$: %v"
                                                           : "gander: %^%l%$: %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

int PolicyCheck(const std::string& file) {
  auto policy = LoadEffectivePolicy(file, "");
  if (!policy) {
    spdlog::error("{}", policy.error().Describe());
    return kExitUsage;
  }
  std::cout << file << ": ok (" << policy->source << ")\n";
  return 0;
}

int PolicyShow(const std::string& name) {
  bool is_file = name.find('/') != std::string::npos || name.ends_with(".yaml");
  auto policy = LoadEffectivePolicy(is_file ? name : "", is_file ? "" : name);
  if (!policy) {
    spdlog::error("{}", policy.error().Describe());
    return kExitUsage;
  }
  std::cout << policies::ToYaml(*policy);
  return 0;
}

// This binary, for `gander audit` to run `gander run` with.
std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

int Main(int argc, char** argv) {
  // The executor inside each `gander mcp` sandbox: straight to it, no option parsing on the
  // path every sandbox start takes.
  if (argc == 3 && std::string(argv[1]) == "mcp" && std::string(argv[2]) == "exec") {
    return mcp::ExecutorMain();
  }
  CLI::App app{"gander: runs an MCP stdio extension in its own sandbox and reports what it did"};
  app.name("gander");  // in usage lines and man pages, whatever path gander was run by
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->envname("GANDER_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.set_version_flag("--version", std::string("gander ") + GANDER_VERSION);
  app.footer("`gander help COMMAND` or `gander COMMAND --help` lists a command's options.");

  RunOptions run;
  std::string require;
  auto* run_cmd = app.add_subcommand("run", "Run COMMAND in a sandbox (gander run -- CMD ARGS)");
  run_cmd->add_option("--log-level", log_level, "as gander --log-level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  auto* policy_opt = run_cmd->add_option("--policy", run.policy_file, "Policy file (YAML)");
  run_cmd->add_option("--profile", run.profile, "Shipped or user profile name (default: default)")
      ->excludes(policy_opt);
  run_cmd->add_option("--name", run.name,
                      "Extension name (default: the name gander was invoked as when that is a "
                      "symlink, else the command's basename)");
  run_cmd->add_option("--workspace", run.workspace, "Workspace directory (default: cwd)");
  run_cmd->add_option("--require", require, "Refuse to start below this isolation level")
      ->check(CLI::IsMember({"basic", "seccomp", "landlock", "full"}));
  run_cmd->add_flag("--no-namespaces", run.no_namespaces,
                    "Do not use namespaces: Landlock and seccomp only (what gander falls back "
                    "to where user namespaces are refused); host names then resolve only for "
                    "resolvers honouring RES_OPTIONS=use-vc (glibc), over TCP");
  std::string backend;
  run_cmd
      ->add_option("--backend", backend,
                   "native (gander's own sandbox) or gvisor (runsc, rootless; network through "
                   "gander's egress broker); "
                   "default: the policy's backend, else native")
      ->check(CLI::IsMember({"native", "gvisor"}));
  std::string mode = "enforce", files;
  run_cmd
      ->add_option("--mode", mode,
                   "enforce (default); monitor: trial the policy, enforcing only the default "
                   "profile and logging what the policy would refuse as would_deny; or learn: "
                   "every syscall counted by name and every file access logged (for baselining)")
      ->check(CLI::IsMember({"enforce", "monitor", "learn"}));
  run_cmd
      ->add_option("--files", files,
                   "Which file syscalls the monitor watches (default: the "
                   "policy's monitor.files, else opens)")
      ->check(CLI::IsMember({"off", "opens", "all"}));
  run_cmd->add_option("--audit-log", run.audit_log,
                      "Audit log file (JSON lines; default "
                      "$XDG_STATE_HOME/gander/audit/NAME.jsonl)");
  std::string collector = "auto";
  run_cmd
      ->add_option("--collector", collector,
                   "auto (default): send events to the metrics collector, starting one when none "
                   "runs; connect: only if one runs; off: write the audit log directly, no "
                   "metrics")
      ->check(CLI::IsMember({"auto", "connect", "off"}));
  install::InstallOptions install;
  std::string install_mode;
  run_cmd
      ->add_option(
          "--install", install_mode,
          "auto: when COMMAND is npx, npm exec, uvx or pipx run, install its "
          "package into a per-extension cache in a sandbox of its own (registry or "
          "index only), then run it "
          "from there offline; off: run COMMAND as it is. Default: the policy's `install:`, "
          "else auto")
      ->check(CLI::IsMember({"auto", "off"}));
  run_cmd->add_option("--osv-endpoint", install.osv_endpoint,
                      "OSV API checked before an install (default: GANDER_OSV_ENDPOINT, else "
                      "https://api.osv.dev; off: no check)");
  run_cmd->add_option("command", run.command, "The extension's command and arguments")->required();
  run_cmd->positionals_at_end();

  auto* policy_cmd = app.add_subcommand("policy", "Check or show policies");
  policy_cmd->require_subcommand(1);
  std::string check_file, show_name;
  auto* check_cmd = policy_cmd->add_subcommand("check", "Validate a policy file");
  check_cmd->add_option("file", check_file, "Policy file")->required();
  auto* show_cmd =
      policy_cmd->add_subcommand("show", "Print the effective policy (after extends) as YAML");
  show_cmd->add_option("name", show_name, "Profile name or policy file")->required();
  SuggestOptions suggest;
  auto* suggest_cmd = policy_cmd->add_subcommand(
      "suggest", "Suggest a policy from learning runs' audit logs (gander run --mode learn)");
  suggest_cmd->add_option("name", suggest.name, "Extension name");
  suggest_cmd->add_option("--from", suggest.from, "Audit log(s) (default: NAME's)");
  suggest_cmd->add_option("--workspace", suggest.workspace, "Workspace (default: cwd)");
  suggest_cmd->add_option("--base", suggest.base, "Profile or policy to extend (default)");
  suggest_cmd->add_option("--check", suggest.check,
                          "Exit 1 listing what POLICY does not cover of the learned behaviour");
  suggest_cmd
      ->add_option("--format", suggest.format,
                   "yaml (a policy) or oci-seccomp (an OCI runtime-spec seccomp profile from the "
                   "syscall census)")
      ->check(CLI::IsMember({"yaml", "oci-seccomp"}));
  std::string diff_old, diff_new;
  auto* diff_cmd = policy_cmd->add_subcommand("diff", "Effective rules added/removed: OLD NEW");
  diff_cmd->add_option("old", diff_old, "Profile name or policy file")->required();
  diff_cmd->add_option("new", diff_new, "Profile name or policy file")->required();

  auto* goose_cmd = app.add_subcommand("goose", "Wrap Goose's stdio extensions in gander");
  goose_cmd->require_subcommand(1);
  std::string goose_config = DefaultGooseConfig();
  bool dry_run = false;
  auto* wrap_cmd = goose_cmd->add_subcommand("wrap", "Run every enabled stdio extension in gander");
  auto* unwrap_cmd = goose_cmd->add_subcommand("unwrap", "Restore the original commands");
  auto* goose_doctor_cmd = goose_cmd->add_subcommand("doctor", "Check each extension");
  for (auto* sub : {wrap_cmd, unwrap_cmd, goose_doctor_cmd}) {
    sub->add_option("--config", goose_config, "Goose's config.yaml")->capture_default_str();
  }
  for (auto* sub : {wrap_cmd, unwrap_cmd}) {
    sub->add_flag("--dry-run", dry_run, "Print the diff, write nothing");
  }
  bool start = false;
  goose_doctor_cmd->add_flag("--start", start,
                             "Also start each wrapped extension as Goose would (initialize + "
                             "tools/list, at most 60 s each)");

  vet::AuditOptions audit_opts;
  std::string audit_format = "text", audit_fail_on = "high";
  auto* audit_cmd = app.add_subcommand(
      "audit",
      "Run an extension once under the default profile (monitor mode) with bait files in a "
      "fake home, drive it as an MCP client and report what it touched and what its "
      "descriptions ask of the model (gander audit -- CMD ARGS)");
  audit_cmd->add_flag("--exercise", audit_opts.exercise,
                      "Also call every tool with minimal arguments made from its input schema");
  audit_cmd->add_option("--format", audit_format, "text (default), markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  audit_cmd
      ->add_option("--fail-on", audit_fail_on,
                   "Exit 1 when a finding is at or above this severity: low, medium or high "
                   "(default)")
      ->check(CLI::IsMember({"low", "medium", "high"}));
  audit_cmd->add_option("--workspace", audit_opts.workspace,
                        "Workspace directory (default: a new temporary directory)");
  audit_cmd
      ->add_option("--timeout", audit_opts.timeout_seconds,
                   "Seconds to wait for each MCP answer (default 60)")
      ->check(CLI::Range(1, 3600));
  audit_cmd->add_flag("--keep", audit_opts.keep,
                      "Keep the temporary directory (fake home, audit log, stderr)");
  audit_cmd->add_option("command", audit_opts.command, "The extension's command and arguments")
      ->required();
  audit_cmd->positionals_at_end();
  std::string update_name;
  auto* update_cmd = app.add_subcommand(
      "update",
      "Install NAME's package again (npx/npm exec/uvx/pipx run extensions): the newest its "
      "spec allows");
  update_cmd->add_option("name", update_name, "Extension name")->required();
  update_cmd->add_option("--osv-endpoint", install.osv_endpoint, "as for run");
  update_cmd->add_option("--audit-log", run.audit_log, "as for run");
  update_cmd->add_option("--collector", collector, "as for run")
      ->check(CLI::IsMember({"auto", "connect", "off"}));

  bool json = false;
  goose_doctor_cmd->add_flag("--json", json, "Print the report as JSON");
  auto* doctor_cmd = app.add_subcommand("doctor", "What this kernel allows, and what run applies");
  doctor_cmd->add_flag("--json", json, "Print the report as JSON");
  bool probe_kvm = false;
  doctor_cmd->add_flag("--kvm", probe_kvm, "Also try gVisor's KVM platform (can take 5 s)");
  std::string completion_shell;
  auto* completions_cmd =
      app.add_subcommand("completions", "Print a completion script (the build installs them)");
  completions_cmd->group("");  // hidden
  completions_cmd->add_option("shell", completion_shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  std::vector<std::string> help_topic;
  auto* help_cmd = app.add_subcommand("help", "Print the help of gander or of COMMAND");
  help_cmd->add_option("command", help_topic, "A command (and subcommand: policy suggest)");
  auto* version_cmd = app.add_subcommand("version", "Print gander's version");
  // Everything after `collect` belongs to gander-collect (`gander collect --help` lists it).
  std::string status_address;  // this user's collector
  auto* status_cmd = app.add_subcommand(
      "status", "One screen from the collector: extensions, isolation, denials, bytes out");
  status_cmd->add_option("--collector", status_address,
                         "A collector's metrics address (default: this user's collector, found "
                         "through its socket directory)");
  status_cmd->add_flag("--json", json, "Print the extensions as JSON");
  auto* collect_cmd = app.add_subcommand(
      "collect", "Run the metrics collector (one per user; launchers start it when needed)");
  collect_cmd->prefix_command();
  collect_cmd->set_help_flag();

  mcp::ServerOptions mcp_opts;
  std::string mcp_backend = "native", mcp_collector = "auto", mcp_ttl;
  bool mcp_no_namespaces = false;
  auto* mcp_cmd = app.add_subcommand(
      "mcp",
      "An MCP server (stdio) whose tools run code in sandboxes gander holds: give Goose this "
      "instead of a shell on your machine (docs/mcp.md)");
  mcp_cmd->add_option("--name", mcp_opts.pool.server_name,
                      "Server name: each sandbox is the extension NAME.SANDBOX in metrics and "
                      "the audit log (default gander-mcp)");
  mcp_cmd->add_option("--config", mcp_opts.config_file,
                      "Settings file (default $XDG_CONFIG_HOME/gander/mcp.yaml, if it exists)");
  mcp_cmd->add_option("--export-dir", mcp_opts.pool.export_dir,
                      "The host directory sandbox_export copies results to (overrides the "
                      "config's export_dir); without one nothing leaves a sandbox");
  mcp_cmd->add_option("--files-root", mcp_opts.pool.files_roots,
                      "A host directory sandbox_create may copy files from (repeatable; "
                      "default: the current directory)");
  mcp_cmd->add_option("--ttl", mcp_ttl, "Default sandbox lifetime (default 1h)");
  mcp_cmd->add_flag("--no-namespaces", mcp_no_namespaces, "as for run");
  mcp_cmd->add_option("--backend", mcp_backend, "as for run")
      ->check(CLI::IsMember({"native", "gvisor"}));
  mcp_cmd->add_option("--collector", mcp_collector, "as for run")
      ->check(CLI::IsMember({"auto", "connect", "off"}));

  if (auto error = CheckWords(app, std::vector<std::string>(argv + 1, argv + argc))) {
    std::cerr << *error << "\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // help goes to stdout: asked for, and nothing is being wrapped
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string path = "gander";  // the deepest command parsed, for the pointer to its help
    for (auto parsed = app.get_subcommands(); !parsed.empty();
         parsed = parsed.front()->get_subcommands()) {
      path += " " + parsed.front()->get_name();
    }
    std::cerr << "gander: " << e.what() << "; see `" << path << " --help`\n";
    return kExitUsage;
  }
  if (*completions_cmd) return WriteCompletions(app, completion_shell, std::cout) ? 0 : kExitUsage;
  if (*help_cmd) {
    std::string error;
    const CLI::App* topic = FindCommand(app, help_topic, error);
    if (topic == nullptr) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    // Not topic->help(): CLI11 prints the help of the parsed subcommand (help) from the root.
    std::string name = "gander";
    for (size_t i = 0; i + 1 < help_topic.size(); ++i) name += " " + help_topic[i];
    if (!help_topic.empty()) name += " " + topic->get_name();
    std::cout << topic->get_formatter()->make_help(topic, name, CLI::AppFormatMode::Normal);
    return 0;
  }
  SetUpLogging(log_level);

  if (collector == "connect") run.collector = CollectorUse::kConnect;
  if (collector == "off") run.collector = CollectorUse::kOff;
  if (*mcp_cmd) {
    mcp::PoolOptions& pool = mcp_opts.pool;
    // Command-line values win over the config file's.
    std::string export_dir = pool.export_dir;
    auto roots = pool.files_roots;
    std::string config =
        mcp_opts.config_file.empty() ? mcp::DefaultConfigPath() : mcp_opts.config_file;
    if (gander::Status loaded = mcp::LoadConfig(config, !mcp_opts.config_file.empty(), pool);
        !loaded) {
      spdlog::error("{}", loaded.error().Describe());
      return kExitUsage;
    }
    if (!export_dir.empty()) pool.export_dir = export_dir;
    if (!roots.empty()) pool.files_roots = roots;
    if (!mcp_ttl.empty()) {
      auto ttl = mcp::ParseTtl(nlohmann::json(mcp_ttl));
      if (!ttl) {
        spdlog::error("--ttl: {}", ttl.error().message);
        return kExitUsage;
      }
      pool.default_ttl = *ttl;
    }
    pool.gander = SelfPath();
    pool.backend = mcp_backend;
    pool.log_level = log_level;
    pool.run_flags = {"--backend", mcp_backend, "--collector", mcp_collector};
    if (mcp_no_namespaces) pool.run_flags.push_back("--no-namespaces");
    pool.install_policy = install::InstallStepPolicy();
    return mcp::Serve(std::move(mcp_opts));
  }
  if (*update_cmd) return install::Update(update_name, run, install, std::cout);
  if (*run_cmd) {
    if (!require.empty()) run.require = *ParseLevel(require);
    if (!backend.empty()) run.backend = *policies::ParseBackend(backend);
    if (mode == "monitor") run.mode = RunMode::kMonitor;
    if (mode == "learn") run.mode = RunMode::kLearn;
    if (files == "off") run.files = monitor::FilesWatch::kOff;
    if (files == "opens") run.files = monitor::FilesWatch::kOpens;
    if (files == "all") run.files = monitor::FilesWatch::kAll;
    if (run.name.empty()) {
      run.name = DefaultExtensionName(argv[0], install::NameSource(run.command));
    }
    if (!install_mode.empty()) install.enabled = install_mode == "auto";
    return install::RunWithInstall(run, install);
  }
  if (*audit_cmd) {
    audit_opts.format = audit_format == "json"       ? vet::Format::kJson
                        : audit_format == "markdown" ? vet::Format::kMarkdown
                                                     : vet::Format::kText;
    audit_opts.fail_on = *vet::ParseSeverity(audit_fail_on);
    audit_opts.gander = SelfPath();
    return vet::RunAudit(audit_opts, std::cout);
  }
  if (*check_cmd) return PolicyCheck(check_file);
  if (*show_cmd) return PolicyShow(show_name);
  if (*suggest_cmd) return PolicySuggest(suggest);
  if (*diff_cmd) return PolicyDiff(diff_old, diff_new);
  if (*doctor_cmd) return Doctor(std::cout, json, probe_kvm);
  if (*wrap_cmd || *unwrap_cmd)
    return GooseWrap(goose_config, unwrap_cmd->parsed(), dry_run, std::cout);
  if (*goose_doctor_cmd) return GooseDoctor(goose_config, std::cout, start, json);
  if (*collect_cmd) return ExecCollector(collect_cmd->remaining());
  if (*status_cmd) return Status(status_address, std::cout, json);
  if (*version_cmd) {
    std::cout << "gander " << GANDER_VERSION << "\n";
    return 0;
  }
  return kExitUsage;
}

}  // namespace gander::launcher
