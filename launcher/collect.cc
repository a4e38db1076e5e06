#include "launcher/collect.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstring>

#include "common/exec_strings.h"
#include "exporters/collector_paths.h"

namespace gander::launcher {

int ExecCollector(const std::vector<std::string>& args) {
  std::string binary = exporters::CollectorBinary();
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  execv(binary.c_str(), ExecStrings(std::move(argv)).get());
  spdlog::error("cannot run the collector {}: {}", binary, std::strerror(errno));
  return 127;
}

}  // namespace gander::launcher
