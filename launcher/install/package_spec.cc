#include "launcher/install/package_spec.h"

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace gander::launcher::install {
namespace {

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Trim(const std::string& s) {
  auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  auto end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

// The options npx and `npm exec` take before the package, as far as gander understands them.
Result<std::optional<PackageRun>> ParseNpmRunner(Runner runner,
                                                 const std::vector<std::string>& rest) {
  PackageRun run{.runner = runner};
  std::string package_option;
  size_t i = 0;
  for (; i < rest.size(); ++i) {
    const std::string& a = rest[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    if (a == "-y" || a == "--yes" || a == "-q" || a == "--quiet" || a == "--silent") continue;
    if (a == "-p" || a == "--package") {
      if (i + 1 >= rest.size()) return MakeError(a + " needs a package");
      package_option = rest[++i];
      continue;
    }
    if (a.starts_with("--package=")) {
      package_option = a.substr(10);
      continue;
    }
    return MakeError(std::string(RunnerName(runner)) + " option " + a +
                     " is not understood by gander's install phase (--install off runs the "
                     "command as it is)");
  }
  if (i >= rest.size()) return MakeError(std::string(RunnerName(runner)) + ": no package named");
  if (package_option.empty()) {
    run.package = ParseNpmSpec(rest[i]);
  } else {
    run.package = ParseNpmSpec(package_option);
    run.bin = rest[i];
  }
  run.args.assign(rest.begin() + static_cast<long>(i) + 1, rest.end());
  return std::optional<PackageRun>(std::move(run));
}

}  // namespace

const char* RunnerName(Runner runner) {
  switch (runner) {
    case Runner::kNpx:
      return "npx";
    case Runner::kNpmExec:
      return "npm exec";
    case Runner::kUvx:
      return "uvx";
    case Runner::kPipxRun:
      return "pipx run";
  }
  return "npx";
}

bool NpmSpec::exact() const {
  static const std::regex kExact(R"(^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$)");
  return !tarball && std::regex_match(version, kExact);
}

NpmSpec ParseNpmSpec(const std::string& text) {
  NpmSpec spec{.text = text};
  if (text.starts_with("/") || text.starts_with("./") || text.starts_with("../") ||
      text.starts_with("file:") || text.ends_with(".tgz") || text.ends_with(".tar.gz")) {
    spec.tarball = true;
    return spec;
  }
  // The version starts at the first `@` after the name (a scope's `@` is the first character).
  auto at = text.find('@', text.starts_with("@") ? 1 : 0);
  spec.name = text.substr(0, at);
  if (at != std::string::npos) spec.version = text.substr(at + 1);
  return spec;
}

Result<std::optional<PackageRun>> ParsePackageRunner(const std::vector<std::string>& command) {
  if (command.empty()) return std::optional<PackageRun>();
  const std::string program = Basename(command[0]);
  std::vector<std::string> rest(command.begin() + 1, command.end());
  if (program == "npx") return ParseNpmRunner(Runner::kNpx, rest);
  if (program == "npm" && !rest.empty() && (rest[0] == "exec" || rest[0] == "x")) {
    return ParseNpmRunner(Runner::kNpmExec, {rest.begin() + 1, rest.end()});
  }
  if (program == "uvx" || (program == "pipx" && !rest.empty() && rest[0] == "run")) {
    PackageRun run{.runner = program == "uvx" ? Runner::kUvx : Runner::kPipxRun};
    return std::optional<PackageRun>(std::move(run));
  }
  return std::optional<PackageRun>();
}

std::string NpmRegistry(const std::optional<std::string>& env_value,
                        const std::string& npmrc_text) {
  std::string registry = "https://registry.npmjs.org/";
  if (env_value && !env_value->empty()) return *env_value;
  std::istringstream lines(npmrc_text);
  for (std::string line; std::getline(lines, line);) {
    line = Trim(line);
    if (!line.starts_with("registry")) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos || Trim(line.substr(0, eq)) != "registry") continue;
    registry = Trim(line.substr(eq + 1));
  }
  return registry;
}

Result<HostPort> UrlHostPort(const std::string& url) {
  static const std::regex kUrl(R"(^(https?)://([^/:@\[\]]+)(:(\d{1,5}))?(/.*)?$)");
  std::smatch m;
  if (!std::regex_match(url, m, kUrl)) {
    return MakeError("registry URL " + url + ": expected http(s)://HOST[:PORT]/...");
  }
  HostPort hp{.host = m[2].str(), .port = m[1].str() == "https" ? 443 : 80};
  if (m[4].matched) hp.port = std::stoi(m[4].str());
  if (hp.port <= 0 || hp.port > 65535) return MakeError("registry URL " + url + ": bad port");
  return hp;
}

Result<std::string> PickBin(const std::string& package_json_text, const std::string& wanted) {
  auto json = nlohmann::json::parse(package_json_text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return MakeError("package.json is not JSON");
  const std::string name = json.value("name", "");
  const std::string unscoped = Basename(name);
  const auto bin = json.find("bin");
  if (bin == json.end()) return MakeError("package " + name + " has no bin to run");
  if (bin->is_string()) {
    if (!wanted.empty() && wanted != unscoped) {
      return MakeError("package " + name + " has no bin " + wanted);
    }
    return unscoped;
  }
  if (!bin->is_object() || bin->empty()) return MakeError("package " + name + ": bad bin");
  const std::string& look_for = wanted.empty() ? unscoped : wanted;
  if (bin->contains(look_for)) return look_for;
  if (wanted.empty() && bin->size() == 1) return bin->begin().key();
  return MakeError("package " + name + " has no bin " + look_for + " (it has " + [&] {
    std::string names;
    for (const auto& [key, value] : bin->items()) {
      names += (names.empty() ? "" : ", ") + key;
    }
    return names;
  }() + ")");
}

}  // namespace gander::launcher::install
