#include "launcher/install/package_spec.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string_view>

#include "common/enum_names.h"
#include "common/path.h"

namespace gander::launcher::install {
namespace {

std::string Trim(const std::string& s) {
  auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  auto end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

// The runner options before the package, as far as gander understands them: the flags in
// `ignored`, and the option (`short_name` or `long_name`, also as `long_name=VALUE`) that
// names the package apart from the command. The word after them is the command (or package).
struct RunnerWords {
  size_t command = 0;   // index in rest
  std::string package;  // the option's value; empty without it
};
Result<RunnerWords> ParseRunnerOptions(Runner runner, const std::vector<std::string>& rest,
                                       std::initializer_list<std::string_view> ignored,
                                       std::string_view short_name, const std::string& long_name) {
  RunnerWords words;
  size_t& i = words.command;
  for (; i < rest.size(); ++i) {
    const std::string& a = rest[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    if (std::find(ignored.begin(), ignored.end(), a) != ignored.end()) continue;
    if (a == short_name || a == long_name) {
      if (i + 1 >= rest.size()) return MakeError(a + " needs a package");
      words.package = rest[++i];
      continue;
    }
    if (a.starts_with(long_name + "=")) {
      words.package = a.substr(long_name.size() + 1);
      continue;
    }
    return MakeError(std::string(RunnerName(runner)) + " option " + a +
                     " is not understood by gander's install phase (--install off runs the "
                     "command as it is)");
  }
  if (i >= rest.size()) return MakeError(std::string(RunnerName(runner)) + ": no package named");
  return words;
}

// npx and `npm exec`: `[-y] [-p|--package PKG] CMD|PKG ARGS...`.
Result<std::optional<PackageRun>> ParseNpmRunner(Runner runner,
                                                 const std::vector<std::string>& rest) {
  auto words = ParseRunnerOptions(runner, rest, {"-y", "--yes", "-q", "--quiet", "--silent"}, "-p",
                                  "--package");
  if (!words) return words.error();
  size_t i = words->command;
  PackageRun run{.runner = runner};
  if (words->package.empty()) {
    run.package = ParseNpmSpec(rest[i]);
  } else {
    run.package = ParseNpmSpec(words->package);
    run.bin = rest[i];
  }
  run.args.assign(rest.begin() + static_cast<long>(i) + 1, rest.end());
  return std::optional<PackageRun>(std::move(run));
}

// `uvx [--from PKG] CMD|PKG ARGS...` and `pipx run [--spec PKG] CMD|PKG ARGS...`.
Result<std::optional<PackageRun>> ParsePythonRunner(Runner runner,
                                                    const std::vector<std::string>& rest) {
  auto words =
      runner == Runner::kUvx
          ? ParseRunnerOptions(runner, rest, {"-q", "--quiet"}, "", "--from")
          : ParseRunnerOptions(runner, rest, {"-q", "--quiet", "--no-cache"}, "", "--spec");
  if (!words) return words.error();
  size_t i = words->command;
  const std::string& from = words->package;
  PackageRun run{.runner = runner};
  auto spec = ParsePySpec(from.empty() ? rest[i] : from, runner == Runner::kUvx);
  if (!spec) return spec.error().Context(RunnerName(runner));
  run.python = std::move(spec).value();
  if (!from.empty()) run.bin = rest[i];
  run.args.assign(rest.begin() + static_cast<long>(i) + 1, rest.end());
  return std::optional<PackageRun>(std::move(run));
}

// The value of `key = value` (quotes removed) when `line` is that key; nullopt otherwise.
std::optional<std::string> KeyValue(const std::string& line, const std::string& key) {
  auto eq = line.find('=');
  if (eq == std::string::npos || Trim(line.substr(0, eq)) != key) return std::nullopt;
  std::string value = Trim(line.substr(eq + 1));
  if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0]) {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

}  // namespace

bool IsPython(Runner runner) { return runner == Runner::kUvx || runner == Runner::kPipxRun; }

std::string NormalizePyName(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

Result<PySpec> ParsePySpec(const std::string& text, bool uv_at_form) {
  // PEP 508's name, optional [extras], then a version specifier; no URL or path.
  static const std::regex kSpec(
      R"(^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[A-Za-z0-9._,\s-]*\])?\s*(.*)$)");
  std::smatch m;
  if (!std::regex_match(text, m, kSpec)) {
    return MakeError("package " + text +
                     ": expected NAME[EXTRAS][VERSION SPECIFIER] (gander installs Python "
                     "packages from an index only, not from URLs or files)");
  }
  PySpec spec{.text = text, .name = m[1].str()};
  std::string rest = Trim(m[3].str());
  if (uv_at_form && rest.starts_with("@")) {
    std::string version = Trim(rest.substr(1));
    rest = version == "latest" ? "" : "==" + version;
    spec.text = m[1].str() + m[2].str() + rest;
  }
  static const std::regex kSpecifier(
      R"(^((~=|==|!=|<=|>=|<|>|===)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*$)");
  if (!rest.empty() && !std::regex_match(rest, kSpecifier)) {
    return MakeError("package " + text + ": '" + rest +
                     "' is not a version specifier (gander installs Python packages from an "
                     "index only, not from URLs or files)");
  }
  static const std::regex kExact(R"(^==\s*([0-9][A-Za-z0-9.+!_-]*)$)");
  if (std::smatch v; std::regex_match(rest, v, kExact)) spec.version = v[1].str();
  return spec;
}

constexpr EnumName<Runner> kRunnerNames[] = {{Runner::kNpx, "npx"},
                                             {Runner::kNpmExec, "npm exec"},
                                             {Runner::kUvx, "uvx"},
                                             {Runner::kPipxRun, "pipx run"}};

const char* RunnerName(Runner runner) { return NameOf(kRunnerNames, runner); }

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
  if (program == "uvx") return ParsePythonRunner(Runner::kUvx, rest);
  if (program == "pipx" && !rest.empty() && rest[0] == "run") {
    return ParsePythonRunner(Runner::kPipxRun, {rest.begin() + 1, rest.end()});
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

std::string UvIndex(const std::optional<std::string>& default_index,
                    const std::optional<std::string>& index_url, const std::string& uv_toml) {
  if (default_index && !default_index->empty()) return *default_index;
  if (index_url && !index_url->empty()) return *index_url;
  std::string top_level, in_block, block_url;
  bool in_index = false, block_default = false, top = true;
  auto end_block = [&] {
    if (in_index && block_default && !block_url.empty()) in_block = block_url;
    block_url.clear();
    block_default = false;
  };
  std::istringstream lines(uv_toml);
  for (std::string line; std::getline(lines, line);) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      end_block();
      top = false;
      in_index = line == "[[index]]";
      continue;
    }
    if (top) {
      if (auto v = KeyValue(line, "index-url")) top_level = *v;
    } else if (in_index) {
      if (auto v = KeyValue(line, "url")) block_url = *v;
      if (auto v = KeyValue(line, "default")) block_default = *v == "true";
    }
  }
  end_block();
  if (!in_block.empty()) return in_block;
  return top_level.empty() ? kPyPiIndex : top_level;
}

std::string PipIndex(const std::optional<std::string>& env_value, const std::string& pip_conf) {
  if (env_value && !env_value->empty()) return *env_value;
  std::string index = kPyPiIndex, section;
  std::istringstream lines(pip_conf);
  for (std::string line; std::getline(lines, line);) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    if (section != "[global]" && section != "[install]") continue;
    for (const char* key : {"index-url", "index_url"}) {
      if (auto v = KeyValue(line, key)) index = *v;
    }
  }
  return index;
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

namespace gander::launcher::install {

Result<std::string> PickConsoleScript(const std::string& entry_points_txt,
                                      const std::string& package, const std::string& wanted) {
  std::vector<std::string> scripts;
  bool in_section = false;
  std::istringstream lines(entry_points_txt);
  for (std::string line; std::getline(lines, line);) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      in_section = line == "[console_scripts]";
      continue;
    }
    auto eq = line.find('=');
    if (in_section && eq != std::string::npos) scripts.push_back(Trim(line.substr(0, eq)));
  }
  auto has = [&](const std::string& name) {
    return std::find(scripts.begin(), scripts.end(), name) != scripts.end();
  };
  if (!wanted.empty()) {
    if (has(wanted)) return wanted;
  } else {
    for (const std::string& s : scripts) {
      if (NormalizePyName(s) == NormalizePyName(package)) return s;
    }
    if (scripts.size() == 1) return scripts[0];
  }
  std::string names;
  for (const auto& s : scripts) names += (names.empty() ? "" : ", ") + s;
  return MakeError("package " + package + " has no console script " +
                   (wanted.empty() ? package : wanted) + " (it has " +
                   (names.empty() ? "none" : names) + ")");
}

}  // namespace gander::launcher::install
