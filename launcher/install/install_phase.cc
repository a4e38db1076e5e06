#include "launcher/install/install_phase.h"

#include <fcntl.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/path.h"
#include "common/unique_fd.h"
#include "exporters/audit_log.h"
#include "exporters/collector_client.h"
#include "exporters/collector_paths.h"
#include "launcher/command.h"
#include "launcher/install/capture.h"
#include "launcher/install/osv.h"
#include "launcher/install/package_spec.h"
#include "sandbox/filesystem_plan.h"

namespace gander::launcher::install {
namespace {

namespace fs = std::filesystem;

constexpr char kMarker[] = ".gander-install.json";  // in the cache: what was installed

std::string Home() {
  if (const char* home = getenv("HOME"); home && *home) return home;
  if (const passwd* pw = getpwuid(getuid())) return pw->pw_dir;
  return "/nonexistent";
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Status ValidName(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name.starts_with(".")) {
    return MakeError("extension name '" + name +
                     "' cannot name a package cache (no '/', no leading '.'): set --name");
  }
  return {};
}

// The extension's audit log: install events go to the same file as its runs.
std::string AuditPath(const RunOptions& run) {
  return run.audit_log.empty() ? DefaultAuditLogPath(run.name) : run.audit_log;
}

// One `install` lifecycle event: to the collector like every other event when the run uses
// one (it is the audit log's single writer then; with none reachable the client writes the
// log itself), else straight to the audit log.
void RecordInstallEvent(const RunOptions& run, const std::string& detail) {
  events::Event e;
  e.time_ns = events::WallClockNowNs();
  e.extension = run.name;
  e.install_phase = true;
  e.payload = events::LifecycleEvent{events::LifecyclePhase::kInstall, detail};
  const std::string audit_path = AuditPath(run);
  std::error_code ignored;
  fs::create_directories(fs::path(audit_path).parent_path(), ignored);
  if (run.collector != CollectorUse::kOff) {
    exporters::CollectorClientOptions options;
    options.hello.extension = run.name;
    options.hello.home = Home();
    options.audit_log = {.path = audit_path};
    if (run.collector == CollectorUse::kAuto) {
      options.start_command = exporters::DefaultCollectorStartCommand();
    }
    auto client = exporters::CollectorClient::Create(std::move(options));
    client->Publish(e);
    client->Finish(std::chrono::milliseconds(500));
    return;
  }
  auto log = exporters::AuditLog::Open({.path = audit_path});
  if (!log) {
    spdlog::warn("{}: no audit log: {}", run.name, log.error().Describe());
    return;
  }
  (*log)->Publish(e);
  (*log)->Flush();
}

// What the marker file records about an install.
struct Installed {
  std::string runner, spec, registry, package, version, bin;
};

std::optional<Installed> ReadMarker(const std::string& cache) {
  auto text = ReadFile(cache + "/" + kMarker);
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return Installed{j.value("runner", ""),  j.value("spec", ""),    j.value("registry", ""),
                   j.value("package", ""), j.value("version", ""), j.value("bin", "")};
}

Status WriteMarker(const std::string& cache, const Installed& i) {
  nlohmann::json j = {{"runner", i.runner},   {"spec", i.spec},       {"registry", i.registry},
                      {"package", i.package}, {"version", i.version}, {"bin", i.bin}};
  return WriteFile(cache + "/" + kMarker, j.dump(2) + "\n");
}

// The registry npm is configured for on the host (the environment, else ~/.npmrc).
std::string HostRegistry() {
  const char* env = getenv("npm_config_registry");
  return NpmRegistry(env ? std::optional<std::string>(env) : std::nullopt,
                     ReadFile(Home() + "/.npmrc").value_or(""));
}

// The index a Python runner is configured for on the host: uv's environment and uv.toml, or
// pip's (pipx installs with pip) environment and pip.conf files, in pip's order.
std::string HostPythonIndex(Runner runner) {
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* value = getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  const char* xdg = getenv("XDG_CONFIG_HOME");
  const std::string config = xdg && *xdg ? std::string(xdg) : Home() + "/.config";
  if (runner == Runner::kUvx) {
    return UvIndex(env("UV_DEFAULT_INDEX"), env("UV_INDEX_URL"),
                   ReadFile(config + "/uv/uv.toml").value_or(""));
  }
  std::string conf;
  if (auto file = env("PIP_CONFIG_FILE")) {
    conf = ReadFile(*file).value_or("");
  } else {
    for (const std::string& file :
         {std::string("/etc/pip.conf"), Home() + "/.pip/pip.conf", config + "/pip/pip.conf"}) {
      conf += ReadFile(file).value_or("") + "\n";
    }
  }
  return PipIndex(env("PIP_INDEX_URL"), conf);
}

// python3 on the host's PATH, outside the home directory (the sandboxes cannot read an
// interpreter there, such as a pyenv shim).
Result<std::string> HostPython() {
  const char* path = getenv("PATH");
  std::string dirs;
  std::istringstream in(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(in, dir, ':');) {
    if (dir.starts_with("/") && !IsWithin(dir, Home())) dirs += (dirs.empty() ? "" : ":") + dir;
  }
  auto found = FindExecutable("python3", dirs.empty() ? "/usr/bin:/bin" : dirs, "/");
  if (!found) return found.error().Context("python3 (outside the home directory) on PATH");
  return found;
}

// The policy of the install sandbox: the default profile, the cache as the workspace, the
// package index's hosts as the only destinations, the installer's settings pointed into the
// cache.
std::string InstallPolicy(const std::vector<HostPort>& hosts,
                          const std::vector<std::pair<std::string, std::string>>& env_set,
                          const std::vector<std::string>& env_pass, const std::string& tarball) {
  std::ostringstream y;
  y << "# Written by gander for the install phase of this extension's package; rewritten at\n"
       "# every install. The cache is the workspace; the package index is the only destination.\n"
       "version: 1\n"
       "extends: default\n";
  if (!tarball.empty()) y << "filesystem:\n  read: [" << nlohmann::json(tarball).dump() << "]\n";
  y << "network:\n  allow:\n";
  for (const HostPort& h : hosts) {  // JSON strings are valid YAML scalars
    y << "    - {host: " << nlohmann::json(h.host).dump() << ", ports: [" << h.port << "]}\n";
  }
  y << "env:\n  pass: [";
  for (size_t i = 0; i < env_pass.size(); ++i) y << (i ? ", " : "") << env_pass[i];
  y << "]\n  set:\n";
  for (const auto& [name, value] : env_set) {
    y << "    " << name << ": " << nlohmann::json(value).dump() << "\n";
  }
  return y.str();
}

// The package.json inside a local tarball, read on the host without unpacking the rest.
Result<std::string> TarballPackageJson(const std::string& tarball) {
  return CaptureOutput({"tar", "-xzOf", tarball, "package/package.json"}, "");
}

// OSV before an install. An error refuses the install.
Status CheckPackage(const std::string& name, const std::string& version,
                    const std::string& ecosystem, const RunOptions& run,
                    const InstallOptions& install) {
  const std::string endpoint = OsvEndpoint(install.osv_endpoint);
  const std::string what = name + (version.empty() ? " (every version)" : "@" + version);
  if (endpoint == "off") {
    spdlog::warn("{}: {} not checked against OSV (--osv-endpoint off)", run.name, what);
    RecordInstallEvent(run, "osv off: " + what + " not checked");
    return {};
  }
  OsvVerdict verdict = CheckOsv(endpoint, name, version, ecosystem);
  switch (verdict.kind) {
    case OsvVerdict::Kind::kClean:
      spdlog::info("{}: OSV ({}): no malware advisory for {}", run.name, endpoint, what);
      RecordInstallEvent(run, "osv clean: " + what);
      return {};
    case OsvVerdict::Kind::kUnreachable:
      spdlog::warn("{}: could not check {} against OSV ({}); installing without the malware check",
                   run.name, what, verdict.reason);
      RecordInstallEvent(run, "osv unreachable: " + what + " not checked: " + verdict.reason);
      return {};
    case OsvVerdict::Kind::kMalicious: {
      std::string ids;
      for (const auto& id : verdict.malicious_ids) ids += (ids.empty() ? "" : ", ") + id;
      RecordInstallEvent(run, "osv malicious: " + what + ": " + ids + ": install refused");
      return MakeError("refusing to install " + what + ": OSV (" + endpoint +
                       ") lists it as malicious: " + ids);
    }
  }
  return {};
}

// The installer (`npm install`, python's venv + pip) in the install sandbox. Its stdout goes to
// gander's stderr (gander's stdout is Goose's); its stdin stays open and empty.
int InstallInSandbox(const RunOptions& run, const std::string& cache, const std::string& policy,
                     std::vector<std::string> command) {
  RunOptions o;
  o.policy_file = policy;
  o.name = run.name;
  o.workspace = cache;
  o.require = run.require;
  o.audit_log = AuditPath(run);
  o.collector = run.collector;
  o.log_home = true;
  o.install_phase = true;
  o.command = std::move(command);
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return kExitSetupFailed;
  UniqueFd in_read(in[0]), in_write(in[1]);
  UniqueFd out(fcntl(2, F_DUPFD_CLOEXEC, 3));
  o.client_in = in_read.get();
  o.client_out = out.get();
  return Run(o);
}

// Writes the install sandbox's policy next to the cache, runs the installer there and records
// the outcome. `from` is where the package comes from (an index, a registry, a tarball).
Status RunInstaller(const RunOptions& run, const std::string& spec_text, const std::string& from,
                    const std::string& policy_text, std::vector<std::string> command) {
  const std::string cache = PackagesDir() + "/" + run.name;
  const std::string policy = PackagesDir() + "/" + run.name + ".install.yaml";
  if (Status written = WriteFile(policy, policy_text); !written) return written.error();
  spdlog::warn("{}: installing {} from {} into {} (sandboxed; policy {})", run.name, spec_text,
               from, cache, policy);
  RecordInstallEvent(run, "installing " + spec_text + " from " + from);
  const std::string installer = command[0] == "npm" ? "npm" : "pip";
  int status = InstallInSandbox(run, cache, policy, std::move(command));
  if (status != 0) {
    RecordInstallEvent(
        run, "install failed: " + installer + " exited with status " + std::to_string(status));
    return MakeError("installing " + spec_text + " failed (" + installer + " exited with status " +
                     std::to_string(status) + "; its output is above, the audit log " +
                     AuditPath(run) + " has what it tried)");
  }
  return {};
}

Status MakeCache(const std::string& cache, bool fresh) {
  std::error_code ec;
  if (fresh) fs::remove_all(cache, ec);
  fs::create_directories(cache, ec);
  if (ec) return Error{ec.value(), "create " + cache};
  return {};
}

// The installed distribution's .dist-info directory in the cache's venv.
std::optional<fs::path> DistInfo(const std::string& cache, const std::string& name) {
  std::error_code ec;
  for (const auto& lib : fs::directory_iterator(cache + "/venv/lib", ec)) {
    for (const auto& entry : fs::directory_iterator(lib.path() / "site-packages", ec)) {
      const std::string dir = entry.path().filename().string();
      if (!dir.ends_with(".dist-info")) continue;
      const std::string stem = dir.substr(0, dir.size() - 10);  // NAME-VERSION
      auto dash = stem.rfind('-');
      if (dash != std::string::npos &&
          NormalizePyName(stem.substr(0, dash)) == NormalizePyName(name)) {
        return entry.path();
      }
    }
  }
  return std::nullopt;
}

// The console script to run from an installed Python package.
Result<std::string> PythonBin(const std::string& cache, const std::string& name,
                              const std::string& wanted) {
  auto dist = DistInfo(cache, name);
  if (!dist)
    return MakeError("installed package " + name + ": no .dist-info in " + cache + "/venv");
  return PickConsoleScript(ReadFile((*dist / "entry_points.txt").string()).value_or(""), name,
                           wanted);
}

// `uvx` and `pipx run`: a venv in the cache made with the host's python3, the requirement
// installed into it with that venv's pip from the index the runner is configured for.
Result<Installed> InstallPython(const RunOptions& run, const PackageRun& package,
                                const InstallOptions& install, bool fresh) {
  const std::string cache = PackagesDir() + "/" + run.name;
  const PySpec& spec = package.python;
  if (Status checked = CheckPackage(NormalizePyName(spec.name), spec.version, "PyPI", run, install);
      !checked) {
    return checked.error();
  }
  const std::string index = HostPythonIndex(package.runner);
  auto host = UrlHostPort(index);
  if (!host) return host.error();
  std::vector<HostPort> hosts{*host};
  // PyPI serves its files from another host.
  if (host->host == "pypi.org") hosts.push_back({"files.pythonhosted.org", 443});
  auto python = HostPython();
  if (!python) return python.error();
  if (Status made = MakeCache(cache, fresh); !made) return made.error();
  const std::string policy = InstallPolicy(
      hosts,
      {{"PIP_INDEX_URL", index},
       {"PIP_CACHE_DIR", cache + "/.pip-cache"},
       {"PIP_CONFIG_FILE", "/dev/null"},  // no pip.conf: the index above and nothing else
       {"PIP_DISABLE_PIP_VERSION_CHECK", "1"},
       {"PIP_NO_INPUT", "1"},
       {"PIP_NO_WARN_SCRIPT_LOCATION", "1"},
       // sdists are built into wheels (PEP 517), not `setup.py install`ed: one layout
       // (.dist-info) to read the console scripts from
       {"PIP_USE_PEP517", "1"}},
      {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"}, "");
  // The sandbox's working directory is the cache.
  if (Status done = RunInstaller(run, spec.text, index, policy,
                                 {"/bin/sh", "-c",
                                  "set -e; [ -x venv/bin/python ] || \"$0\" -m venv venv; "
                                  "exec venv/bin/python -m pip install --upgrade \"$1\"",
                                  *python, spec.text});
      !done) {
    return done.error();
  }
  auto bin = PythonBin(cache, spec.name, package.bin);
  if (!bin) return bin.error();
  auto dist = DistInfo(cache, spec.name);
  std::string version = dist->stem().string();  // NAME-VERSION
  version = version.substr(version.rfind('-') + 1);
  Installed done{RunnerName(package.runner), spec.text, index, spec.name, version, *bin};
  if (Status marked = WriteMarker(cache, done); !marked) return marked.error();
  RecordInstallEvent(run,
                     "installed " + spec.name + "==" + version + " (console script " + *bin + ")");
  return done;
}

// `npx`, `npm exec`: `npm install SPEC` in the cache.
Result<Installed> InstallNpm(const RunOptions& run, const PackageRun& package,
                             const InstallOptions& install, bool fresh) {
  const std::string cache = PackagesDir() + "/" + run.name;
  NpmSpec spec = package.package;
  std::string npm_spec = spec.text;
  std::string tarball;
  if (spec.tarball) {
    std::string path = spec.text.starts_with("file:") ? spec.text.substr(5) : spec.text;
    std::error_code ec;
    fs::path absolute = fs::canonical(path, ec);
    if (ec) return Error{ec.value(), "package tarball " + path};
    tarball = npm_spec = absolute.string();
    auto manifest = TarballPackageJson(tarball);
    if (!manifest) return manifest.error().Context("reading package.json from " + tarball);
    auto j = nlohmann::json::parse(*manifest, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return MakeError(tarball + ": bad package.json");
    spec.name = j.value("name", "");
    spec.version = j.value("version", "");
  }
  if (Status checked = CheckPackage(spec.name, spec.exact() || spec.tarball ? spec.version : "",
                                    "npm", run, install);
      !checked) {
    return checked.error();
  }

  const std::string registry = HostRegistry();
  auto host = UrlHostPort(registry);
  if (!host) return host.error();
  if (Status made = MakeCache(cache, fresh); !made) return made.error();
  // A package.json makes the cache npm's project root (npm looks upwards for one otherwise).
  if (!fs::exists(cache + "/package.json")) {
    if (Status written = WriteFile(cache + "/package.json",
                                   "{\"private\": true, \"description\": \"gander's install cache "
                                   "for " +
                                       run.name + "\"}\n");
        !written) {
      return written.error();
    }
  }
  // npm's user config is gander's, naming the registry and nothing else: the user's ~/.npmrc
  // (which may hold tokens) is neither read in the sandbox nor reported as its access.
  const std::string npmrc = cache + "/.gander-npmrc";
  if (Status written = WriteFile(npmrc,
                                 "# Written by gander for the install sandbox: the registry only.\n"
                                 "registry=" +
                                     registry + "\n");
      !written) {
    return written.error();
  }
  const std::string policy = InstallPolicy({*host},
                                           {{"npm_config_registry", registry},
                                            {"npm_config_userconfig", npmrc},
                                            {"npm_config_cache", cache + "/.npm"},
                                            {"npm_config_update_notifier", "false"},
                                            {"npm_config_audit", "false"},
                                            {"npm_config_fund", "false"},
                                            {"npm_config_yes", "true"}},
                                           {"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"}, tarball);
  // npm runs in the cache (the sandbox's working directory is the workspace) rather than with
  // --prefix, which would also move npm's global config (the system's npmrc: its CA file).
  if (Status done = RunInstaller(run, spec.text, tarball.empty() ? registry : tarball, policy,
                                 {"npm", "install", "--no-audit", "--no-fund", npm_spec});
      !done) {
    return done.error();
  }

  // The installed package: the spec's name, or for a tarball the dependency npm recorded.
  std::string name = spec.name;
  if (name.empty()) return MakeError("installed package: no name");
  auto manifest = ReadFile(cache + "/node_modules/" + name + "/package.json");
  if (!manifest) return MakeError("installed package " + name + ": no package.json in " + cache);
  auto bin = PickBin(*manifest, package.bin);
  if (!bin) return bin.error();
  auto j = nlohmann::json::parse(*manifest, nullptr, false);
  Installed done{RunnerName(package.runner),
                 package.package.text,
                 registry,
                 name,
                 j.is_object() ? j.value("version", "") : "",
                 *bin};
  if (Status marked = WriteMarker(cache, done); !marked) return marked.error();
  RecordInstallEvent(run, "installed " + name + "@" + done.version + " (bin " + done.bin + ")");
  return done;
}

// Installs (or refreshes) `package` into NAME's cache; returns what the marker records.
Result<Installed> Install(const RunOptions& run, const PackageRun& package,
                          const InstallOptions& install, bool fresh) {
  return IsPython(package.runner) ? InstallPython(run, package, install, fresh)
                                  : InstallNpm(run, package, install, fresh);
}

// Where a bin of an installed package is.
std::string BinPath(const std::string& cache, Runner runner, const std::string& bin) {
  return cache + (IsPython(runner) ? "/venv/bin/" : "/node_modules/.bin/") + bin;
}

}  // namespace

std::string InstallStepPolicy() {
  std::vector<HostPort> hosts;
  std::vector<std::pair<std::string, std::string>> env;
  const std::string registry = HostRegistry();
  if (auto host = UrlHostPort(registry)) {
    hosts.push_back(*host);
    env.push_back({"npm_config_registry", registry});
  }
  const std::string index = HostPythonIndex(Runner::kPipxRun);
  if (auto host = UrlHostPort(index)) {
    hosts.push_back(*host);
    if (host->host == "pypi.org") hosts.push_back({"files.pythonhosted.org", 443});
    env.push_back({"PIP_INDEX_URL", index});
    env.push_back({"PIP_CONFIG_FILE", "/dev/null"});
    env.push_back({"PIP_DISABLE_PIP_VERSION_CHECK", "1"});
  }
  return InstallPolicy(hosts, env, {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"}, "");
}

std::string PackagesDir() {
  if (const char* xdg = getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/gander/packages";
  }
  return Home() + "/.local/share/gander/packages";
}

std::string NameSource(const std::vector<std::string>& command) {
  auto parsed = ParsePackageRunner(command);
  if (parsed && *parsed && !(*parsed)->name().empty()) {
    const std::string& name = (*parsed)->name();
    return name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  }
  return command.empty() ? "" : command[0];
}

int RunWithInstall(RunOptions run, const InstallOptions& install) {
  if (install.enabled == false) return Run(run);
  auto parsed = ParsePackageRunner(run.command);
  if (!parsed) {
    spdlog::error("{}", parsed.error().message);
    return kExitUsage;
  }
  if (!*parsed) return Run(run);
  const PackageRun& package = **parsed;
  if (Status valid = ValidName(run.name); !valid) {
    spdlog::error("{}", valid.error().message);
    return kExitUsage;
  }
  // The extension's policy, checked before anything is installed; it may name the endpoint.
  auto policy = LoadEffectivePolicy(run.policy_file, run.profile);
  if (!policy) {
    spdlog::error("{}", policy.error().Describe());
    return kExitUsage;
  }
  if (!install.enabled && policy->install == false) return Run(run);  // the policy's `install: off`
  InstallOptions options = install;
  if (options.osv_endpoint.empty() && getenv("GANDER_OSV_ENDPOINT") == nullptr) {
    options.osv_endpoint = policy->monitor.osv_endpoint.value_or("");
  }
  const std::string cache = PackagesDir() + "/" + run.name;
  auto installed = ReadMarker(cache);
  if (!installed || installed->spec != package.spec() ||
      installed->runner != RunnerName(package.runner)) {
    auto done = Install(run, package, options, /*fresh=*/true);
    if (!done) {
      spdlog::error("{}: {}", run.name, done.error().Describe());
      return kExitSetupFailed;
    }
    installed = std::move(done).value();
  } else {
    spdlog::debug("{}: {}@{} from the cache {}", run.name, installed->package, installed->version,
                  cache);
  }
  if (!package.bin.empty() && package.bin != installed->bin) {
    auto bin =
        IsPython(package.runner)
            ? PythonBin(cache, installed->package, package.bin)
            : PickBin(ReadFile(cache + "/node_modules/" + installed->package + "/package.json")
                          .value_or(""),
                      package.bin);
    if (!bin) {
      spdlog::error("{}: {}", run.name, bin.error().message);
      return kExitUsage;
    }
    installed->bin = *bin;
  }
  std::vector<std::string> command{BinPath(cache, package.runner, installed->bin)};
  command.insert(command.end(), package.args.begin(), package.args.end());
  run.command = std::move(command);
  return Run(run);
}

int Update(const std::string& name, RunOptions run, const InstallOptions& install,
           std::ostream& out) {
  run.name = name;
  if (Status valid = ValidName(name); !valid) {
    spdlog::error("{}", valid.error().message);
    return kExitUsage;
  }
  const std::string cache = PackagesDir() + "/" + name;
  auto before = ReadMarker(cache);
  if (!before) {
    spdlog::error("{}: no installed package in {} (it is installed at the first start)", name,
                  cache);
    return kExitUsage;
  }
  PackageRun package;
  for (Runner r : {Runner::kNpx, Runner::kNpmExec, Runner::kUvx, Runner::kPipxRun}) {
    if (before->runner == RunnerName(r)) package.runner = r;
  }
  if (IsPython(package.runner)) {
    auto spec = ParsePySpec(before->spec, /*uv_at_form=*/false);
    if (!spec) {
      spdlog::error("{}: {} in {}", name, spec.error().message, cache);
      return kExitUsage;
    }
    package.python = std::move(spec).value();
    package.bin = before->bin;
  } else {
    package.package = ParseNpmSpec(before->spec);
  }
  auto after = Install(run, package, install, /*fresh=*/false);
  if (!after) {
    spdlog::error("{}: {}", name, after.error().Describe());
    return kExitSetupFailed;
  }
  out << name << ": " << after->package << " " << before->version << " -> " << after->version
      << "\n";
  return 0;
}

}  // namespace gander::launcher::install
