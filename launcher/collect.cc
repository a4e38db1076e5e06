#include "launcher/collect.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstring>

#include "exporters/collector_paths.h"

namespace gander::launcher {

int ExecCollector(const std::vector<std::string>& args) {
  std::string binary = exporters::CollectorBinary();
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  execv(binary.c_str(), c_argv.data());
  spdlog::error("cannot run the collector {}: {}", binary, std::strerror(errno));
  return 127;
}

}  // namespace gander::launcher
