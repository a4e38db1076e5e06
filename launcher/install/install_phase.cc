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

#include "common/unique_fd.h"
#include "exporters/audit_log.h"
#include "launcher/install/capture.h"
#include "launcher/install/osv.h"
#include "launcher/install/package_spec.h"

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

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text) || !out.flush()) return Error{errno, "write " + path};
  return {};
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

// One `install` lifecycle line in the audit log, written directly (also when a collector runs:
// these happen before any sandbox exists).
void RecordInstallEvent(const std::string& audit_path, const std::string& name,
                        const std::string& detail) {
  std::error_code ignored;
  fs::create_directories(fs::path(audit_path).parent_path(), ignored);
  auto log = exporters::AuditLog::Open({.path = audit_path});
  if (!log) {
    spdlog::warn("{}: no audit log: {}", name, log.error().Describe());
    return;
  }
  monitor::Event e;
  e.time_ns = monitor::WallClockNowNs();
  e.extension = name;
  e.payload = monitor::LifecycleEvent{monitor::LifecyclePhase::kInstall, detail};
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

// The policy of the install sandbox: the default profile, the cache as the workspace, the
// registry as the only destination, npm's cache and settings pointed into the cache.
std::string InstallPolicy(const std::string& cache, const HostPort& registry,
                          const std::string& registry_url, const std::string& tarball) {
  nlohmann::json q = registry.host;  // JSON strings are valid YAML scalars
  std::ostringstream y;
  y << "# Written by gander for the install phase of this extension's package; rewritten at\n"
       "# every install. The cache is the workspace; the registry is the only destination.\n"
       "version: 1\n"
       "extends: default\n";
  if (!tarball.empty()) y << "filesystem:\n  read: [" << nlohmann::json(tarball).dump() << "]\n";
  y << "network:\n  allow:\n    - {host: " << q.dump() << ", ports: [" << registry.port << "]}\n"
    << "env:\n  pass: [NODE_EXTRA_CA_CERTS, SSL_CERT_FILE]\n  set:\n"
    << "    npm_config_registry: " << nlohmann::json(registry_url).dump() << "\n"
    << "    npm_config_cache: " << nlohmann::json(cache + "/.npm").dump() << "\n"
    << "    npm_config_update_notifier: \"false\"\n"
    << "    npm_config_audit: \"false\"\n"
    << "    npm_config_fund: \"false\"\n"
    << "    npm_config_yes: \"true\"\n";
  return y.str();
}

// The package.json inside a local tarball, read on the host without unpacking the rest.
Result<std::string> TarballPackageJson(const std::string& tarball) {
  return CaptureOutput({"tar", "-xzOf", tarball, "package/package.json"}, "");
}

// OSV before an install. An error refuses the install.
Status CheckPackage(const std::string& name, const std::string& version, const RunOptions& run,
                    const InstallOptions& install) {
  const std::string endpoint = OsvEndpoint(install.osv_endpoint);
  const std::string what = name + (version.empty() ? " (every version)" : "@" + version);
  if (endpoint == "off") {
    spdlog::warn("{}: {} not checked against OSV (--osv-endpoint off)", run.name, what);
    RecordInstallEvent(AuditPath(run), run.name, "osv off: " + what + " not checked");
    return {};
  }
  OsvVerdict verdict = CheckOsv(endpoint, name, version);
  switch (verdict.kind) {
    case OsvVerdict::Kind::kClean:
      spdlog::info("{}: OSV ({}): no malware advisory for {}", run.name, endpoint, what);
      RecordInstallEvent(AuditPath(run), run.name, "osv clean: " + what);
      return {};
    case OsvVerdict::Kind::kUnreachable:
      spdlog::warn("{}: could not check {} against OSV ({}); installing without the malware check",
                   run.name, what, verdict.reason);
      RecordInstallEvent(AuditPath(run), run.name,
                         "osv unreachable: " + what + " not checked: " + verdict.reason);
      return {};
    case OsvVerdict::Kind::kMalicious: {
      std::string ids;
      for (const auto& id : verdict.malicious_ids) ids += (ids.empty() ? "" : ", ") + id;
      RecordInstallEvent(AuditPath(run), run.name,
                         "osv malicious: " + what + ": " + ids + ": install refused");
      return MakeError("refusing to install " + what + ": OSV (" + endpoint +
                       ") lists it as malicious: " + ids);
    }
  }
  return {};
}

// `npm install` in the install sandbox. Its stdout goes to gander's stderr (gander's stdout is
// Goose's); its stdin stays open and empty.
int InstallInSandbox(const RunOptions& run, const std::string& cache, const std::string& policy,
                     const std::string& spec) {
  RunOptions o;
  o.policy_file = policy;
  o.name = run.name;
  o.workspace = cache;
  o.require = run.require;
  o.audit_log = AuditPath(run);
  o.collector = run.collector;
  o.log_home = true;
  // npm runs in the cache (the sandbox's working directory is the workspace) rather than with
  // --prefix, which would also move npm's global config (the system's npmrc: its CA file).
  o.command = {"npm", "install", "--no-audit", "--no-fund", spec};
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return kExitSetupFailed;
  UniqueFd in_read(in[0]), in_write(in[1]);
  UniqueFd out(fcntl(2, F_DUPFD_CLOEXEC, 3));
  o.client_in = in_read.get();
  o.client_out = out.get();
  return Run(o);
}

// Installs (or refreshes) `package` into NAME's cache; returns what the marker records.
Result<Installed> Install(const RunOptions& run, const PackageRun& package,
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
  if (Status checked =
          CheckPackage(spec.name, spec.exact() || spec.tarball ? spec.version : "", run, install);
      !checked) {
    return checked.error();
  }

  const std::string registry = HostRegistry();
  auto host = UrlHostPort(registry);
  if (!host) return host.error();
  std::error_code ec;
  if (fresh) fs::remove_all(cache, ec);
  fs::create_directories(cache, ec);
  if (ec) return Error{ec.value(), "create " + cache};
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
  const std::string policy = PackagesDir() + "/" + run.name + ".install.yaml";
  if (Status written = WriteFile(policy, InstallPolicy(cache, *host, registry, tarball));
      !written) {
    return written.error();
  }
  spdlog::warn("{}: installing {} from {} into {} (sandboxed; policy {})", run.name, spec.text,
               tarball.empty() ? registry : tarball, cache, policy);
  RecordInstallEvent(AuditPath(run), run.name,
                     "installing " + spec.text + " from " + (tarball.empty() ? registry : tarball));
  int status = InstallInSandbox(run, cache, policy, npm_spec);
  if (status != 0) {
    RecordInstallEvent(AuditPath(run), run.name,
                       "install failed: npm exited with status " + std::to_string(status));
    return MakeError("installing " + spec.text + " failed (npm exited with status " +
                     std::to_string(status) + "; its output is above, the audit log " +
                     AuditPath(run) + " has what it tried)");
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
  RecordInstallEvent(AuditPath(run), run.name,
                     "installed " + name + "@" + done.version + " (bin " + done.bin + ")");
  return done;
}

}  // namespace

std::string PackagesDir() {
  if (const char* xdg = getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/gander/packages";
  }
  return Home() + "/.local/share/gander/packages";
}

std::string NameSource(const std::vector<std::string>& command) {
  auto parsed = ParsePackageRunner(command);
  if (parsed && *parsed && !(*parsed)->package.name.empty()) {
    const std::string& name = (*parsed)->package.name;
    return name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  }
  return command.empty() ? "" : command[0];
}

int RunWithInstall(RunOptions run, const InstallOptions& install) {
  if (!install.enabled) return Run(run);
  auto parsed = ParsePackageRunner(run.command);
  if (!parsed) {
    spdlog::error("{}", parsed.error().message);
    return kExitUsage;
  }
  if (!*parsed) return Run(run);
  const PackageRun& package = **parsed;
  if (package.runner == Runner::kUvx || package.runner == Runner::kPipxRun) {
    spdlog::error(
        "{}: the install phase does not support {} yet (only npx and npm exec); run the "
        "package's installed command, or pass --install off to run `{}` as it is",
        run.name, RunnerName(package.runner), RunnerName(package.runner));
    return kExitUsage;
  }
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
  InstallOptions options = install;
  if (options.osv_endpoint.empty() && getenv("GANDER_OSV_ENDPOINT") == nullptr) {
    options.osv_endpoint = policy->monitor.osv_endpoint.value_or("");
  }
  const std::string cache = PackagesDir() + "/" + run.name;
  auto installed = ReadMarker(cache);
  if (!installed || installed->spec != package.package.text) {
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
    auto manifest = ReadFile(cache + "/node_modules/" + installed->package + "/package.json");
    auto bin = PickBin(manifest.value_or(""), package.bin);
    if (!bin) {
      spdlog::error("{}: {}", run.name, bin.error().message);
      return kExitUsage;
    }
    installed->bin = *bin;
  }
  std::vector<std::string> command{cache + "/node_modules/.bin/" + installed->bin};
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
  PackageRun package{.package = ParseNpmSpec(before->spec)};
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
