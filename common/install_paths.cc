#include "common/install_paths.h"

#include <unistd.h>

#include <climits>

#ifndef GANDER_INSTALL_BINDIR
#define GANDER_INSTALL_BINDIR "bin"
#endif
#ifndef GANDER_INSTALL_LIBEXECDIR
#define GANDER_INSTALL_LIBEXECDIR "libexec"
#endif
#ifndef GANDER_INSTALL_DATADIR
#define GANDER_INSTALL_DATADIR "share"
#endif

namespace gander {

std::string SelfExeDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string self(buf, static_cast<size_t>(n));
  auto slash = self.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : self.substr(0, slash);
}

std::optional<std::string> InstallPrefix() {
  std::string dir = SelfExeDir();
  const std::string bindir = std::string("/") + GANDER_INSTALL_BINDIR;
  if (dir.size() < bindir.size() ||
      dir.compare(dir.size() - bindir.size(), bindir.size(), bindir) != 0)
    return std::nullopt;
  return dir.substr(0, dir.size() - bindir.size());
}

std::optional<std::string> InstalledLibexecDir() {
  auto prefix = InstallPrefix();
  if (!prefix) return std::nullopt;
  return *prefix + "/" + GANDER_INSTALL_LIBEXECDIR + "/gander";
}

std::optional<std::string> InstalledDataDir() {
  auto prefix = InstallPrefix();
  if (!prefix) return std::nullopt;
  return *prefix + "/" + GANDER_INSTALL_DATADIR + "/gander";
}

}  // namespace gander
