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

// A Python requirement as `uvx` and `pipx run` take it: `name[extras]==1.2`, a range
// (`name>=1`), or uvx's `name@1.2` / `name@latest`. Index names only: no URLs or local files.
struct PySpec {
  std::string text{};     // the requirement pip gets (uvx's `name@1.2` as `name==1.2`)
  std::string name{};     // the distribution's name as written, without extras or version
  std::string version{};  // the version of an exact `==V` pin (what OSV is asked about); else ""
};
Result<PySpec> ParsePySpec(const std::string& text, bool uv_at_form);

// PEP 503's normalized name: lower case, runs of `-`, `_`, `.` as one `-`.
std::string NormalizePyName(const std::string& name);

bool IsPython(Runner runner);

// What a package-runner command means.
struct PackageRun {
  Runner runner = Runner::kNpx;
  NpmSpec package{};  // npx, npm exec
  PySpec python{};    // uvx, pipx run
  // `-p PKG CMD` / `--from PKG CMD` / `--spec PKG CMD`: the bin (console script) to run;
  // empty: the package's own
  std::string bin{};
  std::vector<std::string> args{};  // the arguments the bin gets
  const std::string& spec() const { return IsPython(runner) ? python.text : package.text; }
  const std::string& name() const { return IsPython(runner) ? python.name : package.name; }
};

// nullopt: `command` is not a package runner (runs as it is). An error: it is one, but its
// options are not understood (the message says which).
Result<std::optional<PackageRun>> ParsePackageRunner(const std::vector<std::string>& command);

// The registry npm is configured for: `npm_config_registry` in the environment, else the
// `registry=` line of the user's .npmrc text, else https://registry.npmjs.org/.
std::string NpmRegistry(const std::optional<std::string>& env_value, const std::string& npmrc_text);

inline constexpr const char* kPyPiIndex = "https://pypi.org/simple";

// The index uv is configured for: UV_DEFAULT_INDEX, else UV_INDEX_URL, else uv.toml's
// `index-url = "..."` or the `url` of an `[[index]]` with `default = true`, else PyPI.
std::string UvIndex(const std::optional<std::string>& default_index,
                    const std::optional<std::string>& index_url, const std::string& uv_toml);

// The index pip (and so pipx) is configured for: PIP_INDEX_URL, else `index-url` in the
// `[global]` or `[install]` section of pip.conf, else PyPI.
std::string PipIndex(const std::optional<std::string>& env_value, const std::string& pip_conf);

// host and port of an http(s) URL ("https://registry.npmjs.org/" -> registry.npmjs.org, 443).
struct HostPort {
  std::string host{};
  int port = 0;
};
Result<HostPort> UrlHostPort(const std::string& url);

// The bin `npx PKG` runs, from the installed package.json: `bin` as a string, the only entry
// of `bin`, or the entry named after the package (without its scope); `wanted` when set.
Result<std::string> PickBin(const std::string& package_json_text, const std::string& wanted);

// The console script `uvx PKG` / `pipx run PKG` runs, from the installed distribution's
// entry_points.txt: `wanted` when set, else the one named after the package (`-` or `_`),
// else the only one.
Result<std::string> PickConsoleScript(const std::string& entry_points_txt,
                                      const std::string& package, const std::string& wanted);

}  // namespace gander::launcher::install
