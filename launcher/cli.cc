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
#include "policies/parsed_profiles.h"
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

// What the command line fills in, and its commands (each set once added).
struct Cli {
  std::string log_level = "warn";
  RunOptions run;
  std::string require, backend, mode = "enforce", files, collector = "auto", install_mode;
  install::InstallOptions install;
  std::string check_file, show_name;
  SuggestOptions suggest;
  std::string diff_old, diff_new;
  std::string goose_config = DefaultGooseConfig();
  bool dry_run = false, start = true;
  vet::AuditOptions audit_opts;
  std::string audit_format = "text", audit_fail_on = "high";
  std::string update_name;
  bool json = false, probe_kvm = false;
  std::string completion_shell;
  std::vector<std::string> help_topic;
  std::string status_address;  // this user's collector
  mcp::ServerOptions mcp_opts;
  std::string mcp_backend = "native", mcp_collector = "auto", mcp_ttl;
  bool mcp_no_namespaces = false;
  CLI::App *run_cmd = nullptr, *check_cmd = nullptr, *show_cmd = nullptr, *suggest_cmd = nullptr,
           *diff_cmd = nullptr, *wrap_cmd = nullptr, *unwrap_cmd = nullptr,
           *goose_doctor_cmd = nullptr, *audit_cmd = nullptr, *update_cmd = nullptr,
           *doctor_cmd = nullptr, *completions_cmd = nullptr, *help_cmd = nullptr,
           *version_cmd = nullptr, *status_cmd = nullptr, *collect_cmd = nullptr,
           *mcp_cmd = nullptr;
};

// Was this command on the command line? (Main builds only `run` when that is the command.)
bool Given(const CLI::App* cmd) { return cmd != nullptr && cmd->parsed(); }

// An option that takes one of `choices`, which CLI11 checks and lists in the help.
CLI::Option* AddChoice(CLI::App* cmd, const std::string& name, std::string& into,
                       const std::string& help, std::initializer_list<const char*> choices) {
  return cmd->add_option(name, into, help)->check(CLI::IsMember(choices));
}

// gander run.
void AddRunCommand(CLI::App& app, Cli& c) {
  c.run_cmd = app.add_subcommand("run", "Run COMMAND in a sandbox (gander run -- CMD ARGS)");
  AddChoice(c.run_cmd, "--log-level", c.log_level, "as gander --log-level",
            {"trace", "debug", "info", "warn", "error", "off"});
  auto* policy_opt = c.run_cmd->add_option("--policy", c.run.policy_file, "Policy file (YAML)");
  c.run_cmd
      ->add_option("--profile", c.run.profile, "Shipped or user profile name (default: default)")
      ->excludes(policy_opt);
  c.run_cmd->add_option("--name", c.run.name,
                        "Extension name (default: the name gander was invoked as when that is a "
                        "symlink, else the command's basename)");
  c.run_cmd->add_option("--workspace", c.run.workspace, "Workspace directory (default: cwd)");
  AddChoice(c.run_cmd, "--require", c.require, "Refuse to start below this isolation level",
            {"basic", "seccomp", "landlock", "full"});
  c.run_cmd->add_flag("--no-namespaces", c.run.no_namespaces,
                      "Do not use namespaces: Landlock and seccomp only (what gander falls back "
                      "to where user namespaces are refused); host names then resolve only for "
                      "resolvers honouring RES_OPTIONS=use-vc (glibc), over TCP");
  c.run_cmd->add_flag("--allow-home-write", c.run.allow_home_write,
                      "Let a workspace (or write grant) that is your home, or holds it, be "
                      "writable; without it, it is shown read-only. Shell start-up files, ~/.ssh, "
                      "~/.local/bin, autostart, systemd units and gander's own state stay "
                      "read-only either way");
  AddChoice(c.run_cmd, "--backend", c.backend,
            "native (gander's own sandbox) or gvisor (runsc, rootless; network through "
            "gander's egress broker); default: the policy's backend, else native",
            {"native", "gvisor"});
  AddChoice(c.run_cmd, "--mode", c.mode,
            "enforce (default); monitor: trial the policy, enforcing only the default "
            "profile and logging what the policy would refuse as would_deny; or learn: "
            "every syscall counted by name and every file access logged (for baselining)",
            {"enforce", "monitor", "learn"});
  AddChoice(c.run_cmd, "--files", c.files,
            "Which file syscalls the monitor watches (default: the "
            "policy's monitor.files, else opens)",
            {"off", "opens", "all"});
  c.run_cmd->add_option("--audit-log", c.run.audit_log,
                        "Audit log file (JSON lines; default "
                        "$XDG_STATE_HOME/gander/audit/NAME.jsonl)");
  AddChoice(c.run_cmd, "--collector", c.collector,
            "auto (default): send events to the metrics collector, starting one when none "
            "runs; connect: only if one runs; off: write the audit log directly, no metrics",
            {"auto", "connect", "off"});
  AddChoice(c.run_cmd, "--install", c.install_mode,
            "auto: when COMMAND is npx, npm exec, uvx or pipx run, install its "
            "package into a per-extension cache in a sandbox of its own (registry or "
            "index only), then run it "
            "from there offline; off: run COMMAND as it is. Default: the policy's `install:`, "
            "else auto",
            {"auto", "off"});
  c.run_cmd->add_option("--osv-endpoint", c.install.osv_endpoint,
                        "OSV API checked before an install (default: GANDER_OSV_ENDPOINT, else "
                        "https://api.osv.dev; off: no check)");
  c.run_cmd->add_option("command", c.run.command, "The extension's command and arguments")
      ->required();
  c.run_cmd->positionals_at_end();
}

// gander policy check|show|suggest|diff.
void AddPolicyCommands(CLI::App& app, Cli& c) {
  auto* policy_cmd = app.add_subcommand("policy", "Check or show policies");
  policy_cmd->require_subcommand(1);
  c.check_cmd = policy_cmd->add_subcommand("check", "Validate a policy file");
  c.check_cmd->add_option("file", c.check_file, "Policy file")->required();
  c.show_cmd =
      policy_cmd->add_subcommand("show", "Print the effective policy (after extends) as YAML");
  c.show_cmd->add_option("name", c.show_name, "Profile name or policy file")->required();
  c.suggest_cmd = policy_cmd->add_subcommand(
      "suggest", "Suggest a policy from learning runs' audit logs (gander run --mode learn)");
  c.suggest_cmd->add_option("name", c.suggest.name, "Extension name");
  c.suggest_cmd->add_option("--from", c.suggest.from, "Audit log(s) (default: NAME's)");
  c.suggest_cmd->add_option("--workspace", c.suggest.workspace, "Workspace (default: cwd)");
  c.suggest_cmd->add_option("--base", c.suggest.base, "Profile or policy to extend (default)");
  c.suggest_cmd->add_option("--check", c.suggest.check,
                            "Exit 1 listing what POLICY does not cover of the learned behaviour");
  AddChoice(c.suggest_cmd, "--format", c.suggest.format,
            "yaml (a policy) or oci-seccomp (an OCI runtime-spec seccomp profile from the "
            "syscall census)",
            {"yaml", "oci-seccomp"});
  c.diff_cmd = policy_cmd->add_subcommand("diff", "Effective rules added/removed: OLD NEW");
  c.diff_cmd->add_option("old", c.diff_old, "Profile name or policy file")->required();
  c.diff_cmd->add_option("new", c.diff_new, "Profile name or policy file")->required();
}

// gander goose wrap|unwrap|doctor.
void AddGooseCommands(CLI::App& app, Cli& c) {
  auto* goose_cmd = app.add_subcommand("goose", "Wrap Goose's stdio extensions in gander");
  goose_cmd->require_subcommand(1);
  c.wrap_cmd = goose_cmd->add_subcommand("wrap", "Run every enabled stdio extension in gander");
  c.unwrap_cmd = goose_cmd->add_subcommand("unwrap", "Restore the original commands");
  c.goose_doctor_cmd = goose_cmd->add_subcommand("doctor", "Check each extension");
  for (auto* sub : {c.wrap_cmd, c.unwrap_cmd, c.goose_doctor_cmd}) {
    sub->add_option("--config", c.goose_config, "Goose's config.yaml")->capture_default_str();
  }
  for (auto* sub : {c.wrap_cmd, c.unwrap_cmd}) {
    sub->add_flag("--dry-run", c.dry_run, "Print the diff, write nothing");
  }
  c.goose_doctor_cmd->add_flag("--start,!--no-start", c.start,
                               "Start each wrapped extension as Goose would (initialize + "
                               "tools/list, at most 60 s each; the default) or, with --no-start, "
                               "check the config only");

  c.goose_doctor_cmd->add_flag("--json", c.json, "Print the report as JSON");
}

// gander audit, gander update.
void AddAuditAndUpdate(CLI::App& app, Cli& c) {
  c.audit_cmd = app.add_subcommand(
      "audit",
      "Run an extension once under the default profile (monitor mode) with bait files in a "
      "fake home, drive it as an MCP client and report what it touched and what its "
      "descriptions ask of the model (gander audit -- CMD ARGS)");
  c.audit_cmd->add_flag("--exercise", c.audit_opts.exercise,
                        "Also call every tool with minimal arguments made from its input schema");
  AddChoice(c.audit_cmd, "--format", c.audit_format, "text (default), markdown or json",
            {"text", "markdown", "json"});
  AddChoice(c.audit_cmd, "--fail-on", c.audit_fail_on,
            "Exit 1 when a finding is at or above this severity: low, medium or high "
            "(default)",
            {"low", "medium", "high"});
  c.audit_cmd->add_option("--workspace", c.audit_opts.workspace,
                          "Workspace directory (default: a new temporary directory)");
  c.audit_cmd
      ->add_option("--timeout", c.audit_opts.timeout_seconds,
                   "Seconds to wait for each MCP answer (default 60)")
      ->check(CLI::Range(1, 3600));
  c.audit_cmd->add_flag("--keep", c.audit_opts.keep,
                        "Keep the temporary directory (fake home, audit log, stderr)");
  c.audit_cmd->add_option("command", c.audit_opts.command, "The extension's command and arguments")
      ->required();
  c.audit_cmd->positionals_at_end();
  c.update_cmd = app.add_subcommand(
      "update",
      "Install NAME's package again (npx/npm exec/uvx/pipx run extensions): the newest its "
      "spec allows");
  c.update_cmd->add_option("name", c.update_name, "Extension name")->required();
  c.update_cmd->add_option("--osv-endpoint", c.install.osv_endpoint, "as for run");
  c.update_cmd->add_option("--audit-log", c.run.audit_log, "as for run");
  AddChoice(c.update_cmd, "--collector", c.collector, "as for run", {"auto", "connect", "off"});
}

// doctor, completions, help, version, status, collect.
void AddReportCommands(CLI::App& app, Cli& c) {
  c.doctor_cmd = app.add_subcommand("doctor", "What this kernel allows, and what run applies");
  c.doctor_cmd->add_flag("--json", c.json, "Print the report as JSON");
  c.doctor_cmd->add_flag("--kvm", c.probe_kvm, "Also try gVisor's KVM platform (can take 5 s)");
  c.completions_cmd =
      app.add_subcommand("completions", "Print a completion script (the build installs them)");
  c.completions_cmd->group("");  // hidden
  AddChoice(c.completions_cmd, "shell", c.completion_shell, "bash, zsh or fish",
            {"bash", "zsh", "fish"})
      ->required();
  c.help_cmd = app.add_subcommand("help", "Print the help of gander or of COMMAND");
  c.help_cmd->add_option("command", c.help_topic, "A command (and subcommand: policy suggest)");
  c.version_cmd = app.add_subcommand("version", "Print gander's version");
  // Everything after `collect` belongs to gander-collect (`gander collect --help` lists it).
  c.status_cmd = app.add_subcommand(
      "status", "One screen from the collector: extensions, isolation, denials, bytes out");
  c.status_cmd->add_option("--collector", c.status_address,
                           "A collector's metrics address (default: this user's collector, found "
                           "through its socket directory)");
  c.status_cmd->add_flag("--json", c.json, "Print the extensions as JSON");
  c.collect_cmd = app.add_subcommand(
      "collect", "Run the metrics collector (one per user; launchers start it when needed)");
  c.collect_cmd->prefix_command();
  c.collect_cmd->set_help_flag();
}

// gander mcp.
void AddMcpCommand(CLI::App& app, Cli& c) {
  c.mcp_cmd = app.add_subcommand(
      "mcp",
      "An MCP server (stdio) whose tools run code in sandboxes gander holds: give Goose this "
      "instead of a shell on your machine (docs/mcp.md)");
  c.mcp_cmd->add_option("--name", c.mcp_opts.pool.server_name,
                        "Server name: each sandbox is the extension NAME.SANDBOX in metrics and "
                        "the audit log (default gander-mcp)");
  c.mcp_cmd->add_option("--config", c.mcp_opts.config_file,
                        "Settings file (default $XDG_CONFIG_HOME/gander/mcp.yaml, if it exists)");
  c.mcp_cmd->add_option("--export-dir", c.mcp_opts.pool.export_dir,
                        "The host directory sandbox_export copies results to (overrides the "
                        "config's export_dir); without one nothing leaves a sandbox");
  c.mcp_cmd->add_option("--files-root", c.mcp_opts.pool.files_roots,
                        "A host directory sandbox_create may copy files from (repeatable; "
                        "default: the current directory)");
  c.mcp_cmd->add_option("--ttl", c.mcp_ttl, "Default sandbox lifetime (default 1h)");
  c.mcp_cmd->add_flag("--no-namespaces", c.mcp_no_namespaces, "as for run");
  AddChoice(c.mcp_cmd, "--backend", c.mcp_backend, "as for run", {"native", "gvisor"});
  AddChoice(c.mcp_cmd, "--collector", c.mcp_collector, "as for run", {"auto", "connect", "off"});
}

// Checks the words, then parses them: an exit code when that ends the run (help, version, a
// usage error), nullopt to go on.
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
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
  return std::nullopt;
}

// `gander help [COMMAND...]` and `gander completions SHELL`: nullopt for any other command.
std::optional<int> HelpOrCompletions(const CLI::App& app, const Cli& c) {
  if (Given(c.completions_cmd))
    return WriteCompletions(app, c.completion_shell, std::cout) ? 0 : kExitUsage;
  if (Given(c.help_cmd)) {
    std::string error;
    const CLI::App* topic = FindCommand(app, c.help_topic, error);
    if (topic == nullptr) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    // Not topic->help(): CLI11 prints the help of the parsed subcommand (help) from the root.
    std::string name = "gander";
    for (size_t i = 0; i + 1 < c.help_topic.size(); ++i) name += " " + c.help_topic[i];
    if (!c.help_topic.empty()) name += " " + topic->get_name();
    std::cout << topic->get_formatter()->make_help(topic, name, CLI::AppFormatMode::Normal);
    return 0;
  }
  return std::nullopt;
}

// `gander mcp`: its options over the config file's, then the server.
int StartMcp(Cli& c) {
  mcp::PoolOptions& pool = c.mcp_opts.pool;
  // Command-line values win over the config file's.
  std::string export_dir = pool.export_dir;
  auto roots = pool.files_roots;
  std::string config =
      c.mcp_opts.config_file.empty() ? mcp::DefaultConfigPath() : c.mcp_opts.config_file;
  if (gander::Status loaded = mcp::LoadConfig(config, !c.mcp_opts.config_file.empty(), pool);
      !loaded) {
    spdlog::error("{}", loaded.error().Describe());
    return kExitUsage;
  }
  if (!export_dir.empty()) pool.export_dir = export_dir;
  if (!roots.empty()) pool.files_roots = roots;
  if (!c.mcp_ttl.empty()) {
    auto ttl = mcp::ParseTtl(nlohmann::json(c.mcp_ttl));
    if (!ttl) {
      spdlog::error("--ttl: {}", ttl.error().message);
      return kExitUsage;
    }
    pool.default_ttl = *ttl;
  }
  pool.gander = SelfPath();
  pool.backend = c.mcp_backend;
  pool.log_level = c.log_level;
  pool.run_flags = {"--backend", c.mcp_backend, "--collector", c.mcp_collector};
  if (c.mcp_no_namespaces) pool.run_flags.push_back("--no-namespaces");
  pool.install_policy = install::InstallStepPolicy();
  return mcp::Serve(std::move(c.mcp_opts));
}

// Runs the command that was parsed.
int Dispatch(Cli& c, char** argv) {
  if (Given(c.update_cmd)) return install::Update(c.update_name, c.run, c.install, std::cout);
  if (Given(c.run_cmd)) {
    if (!c.require.empty()) c.run.require = *sandbox::ParseLevel(c.require);
    if (!c.backend.empty()) c.run.backend = *policies::ParseBackend(c.backend);
    if (c.mode == "monitor") c.run.mode = RunMode::kMonitor;
    if (c.mode == "learn") c.run.mode = RunMode::kLearn;
    if (!c.files.empty()) c.run.files = *policies::ParseFilesMonitoring(c.files);
    if (c.run.name.empty()) {
      c.run.name = DefaultExtensionName(argv[0], install::NameSource(c.run.command));
    }
    if (!c.install_mode.empty()) c.install.enabled = c.install_mode == "auto";
    return install::RunWithInstall(c.run, c.install);
  }
  if (Given(c.audit_cmd)) {
    c.audit_opts.format = c.audit_format == "json"       ? vet::Format::kJson
                          : c.audit_format == "markdown" ? vet::Format::kMarkdown
                                                         : vet::Format::kText;
    c.audit_opts.fail_on = *vet::ParseSeverity(c.audit_fail_on);
    c.audit_opts.gander = SelfPath();
    return vet::RunAudit(c.audit_opts, std::cout);
  }
  if (Given(c.check_cmd)) return PolicyCheck(c.check_file);
  if (Given(c.show_cmd)) return PolicyShow(c.show_name);
  if (Given(c.suggest_cmd)) return PolicySuggest(c.suggest);
  if (Given(c.diff_cmd)) return PolicyDiff(c.diff_old, c.diff_new);
  if (Given(c.doctor_cmd)) return Doctor(std::cout, c.json, c.probe_kvm);
  if (Given(c.wrap_cmd) || Given(c.unwrap_cmd))
    return GooseWrap(c.goose_config, Given(c.unwrap_cmd), c.dry_run, std::cout);
  if (Given(c.goose_doctor_cmd)) return GooseDoctor(c.goose_config, std::cout, c.start, c.json);
  if (Given(c.collect_cmd)) return ExecCollector(c.collect_cmd->remaining());
  if (Given(c.status_cmd)) return Status(c.status_address, std::cout, c.json);
  if (Given(c.version_cmd)) {
    std::cout << "gander " << GANDER_VERSION << "\n";
    return 0;
  }
  return kExitUsage;
}

}  // namespace

int Main(int argc, char** argv) {
  // The shipped profiles as the build parsed them: no YAML parse of a profile at each start.
  policies::UseParsedProfiles(&policies::ParsedShippedProfile);
  // The executor inside each `gander mcp` sandbox: straight to it, no option parsing on the
  // path every sandbox start takes.
  if (argc == 3 && std::string(argv[1]) == "mcp" && std::string(argv[2]) == "exec") {
    return mcp::ExecutorMain();
  }
  // `gander -- CMD ARGS` is `gander run -- CMD ARGS`: the form other sandboxes' users type
  // first (bwrap, firejail, srt all take the command after their options).
  std::vector<char*> with_run;
  if (argc >= 3 && std::string_view(argv[1]) == "--") {
    static char run_word[] = "run";
    with_run.assign(argv, argv + argc);
    with_run.insert(with_run.begin() + 1, run_word);
    with_run.push_back(nullptr);
    argc += 1;
    argv = with_run.data();
  }
  CLI::App app{"gander: runs an MCP stdio extension in its own sandbox and reports what it did"};
  app.name("gander");  // in usage lines and man pages, whatever path gander was run by
  app.require_subcommand(1);
  Cli c;
  AddChoice(&app, "--log-level", c.log_level, "trace, debug, info, warn, error or off",
            {"trace", "debug", "info", "warn", "error", "off"})
      ->envname("GANDER_LOG_LEVEL");
  app.set_version_flag("--version", std::string("gander ") + GANDER_VERSION);
  app.footer("`gander help COMMAND` or `gander COMMAND --help` lists a command's options.");
  AddRunCommand(app, c);
  // `gander run ...`, the command every extension's start takes, gets only its own options: the
  // whole command tree costs ~0.25 ms of each start. Anything else (help, a global option first,
  // a misspelt command) gets the whole tree.
  if (argc < 2 || std::string_view(argv[1]) != "run") {
    AddPolicyCommands(app, c);
    AddGooseCommands(app, c);
    AddAuditAndUpdate(app, c);
    AddReportCommands(app, c);
    AddMcpCommand(app, c);
  }
  if (auto done = Parse(app, argc, argv)) return *done;
  if (auto done = HelpOrCompletions(app, c)) return *done;
  SetUpLogging(c.log_level);
  if (c.collector == "connect") c.run.collector = CollectorUse::kConnect;
  if (c.collector == "off") c.run.collector = CollectorUse::kOff;
  if (Given(c.mcp_cmd)) return StartMcp(c);
  return Dispatch(c, argv);
}

}  // namespace gander::launcher
