// Package runners (`npx`, `npm exec`, `uvx`, `pipx run`) as extension commands: which package
// the command fetches, and how to run it from an install cache instead. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace gander::launcher::install {

enum class Runner { kNpx, kNpmExec, kUvx, kPipxRun };
const char* RunnerName(Runner runner);

// An npm package spec split up: `@scope/name@1.2.3` -> {@scope/name, 1.2.3}. A local tarball
// (`./x.tgz`, `/abs/x.tgz`) has `tarball` set and no name until its package.json is read.
struct NpmSpec {
  std::string text{};     // as written
  std::string name{};     // empty for a tarball
  std::string version{};  // the version or range after `@`; empty: the `latest` tag
  bool tarball = false;
  // An exact version (`1.2.3`, `1.2.3-rc.1`): what OSV is asked about. Ranges and tags are not.
  bool exact() const;
};
NpmSpec ParseNpmSpec(const std::string& text);

// What a package-runner command means.
struct PackageRun {
  Runner runner = Runner::kNpx;
  NpmSpec package{};
  std::string bin{};                // `-p PKG CMD`: the bin to run; empty: the package's own
  std::vector<std::string> args{};  // the arguments the bin gets
};

// nullopt: `command` is not a package runner (runs as it is). An error: it is one, but its
// options are not understood (the message says which).
Result<std::optional<PackageRun>> ParsePackageRunner(const std::vector<std::string>& command);

// The registry npm is configured for: `npm_config_registry` in the environment, else the
// `registry=` line of the user's .npmrc text, else https://registry.npmjs.org/.
std::string NpmRegistry(const std::optional<std::string>& env_value, const std::string& npmrc_text);

// host and port of an http(s) URL ("https://registry.npmjs.org/" -> registry.npmjs.org, 443).
struct HostPort {
  std::string host{};
  int port = 0;
};
Result<HostPort> UrlHostPort(const std::string& url);

// The bin `npx PKG` runs, from the installed package.json: `bin` as a string, the only entry
// of `bin`, or the entry named after the package (without its scope); `wanted` when set.
Result<std::string> PickBin(const std::string& package_json_text, const std::string& wanted);

}  // namespace gander::launcher::install
