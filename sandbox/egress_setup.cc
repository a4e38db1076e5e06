#include "sandbox/egress_setup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gander::sandbox {
namespace {

constexpr const char* kResolvConf = "nameserver 127.0.0.1\noptions attempts:2 timeout:2\n";
constexpr const char* kHosts = "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n";

bool Visible(const std::string& path, const std::vector<MountOp>& planned) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;  // a symlink: left alone
  bool bound = false;
  for (const MountOp& op : planned) {
    bool covers = op.target == "/" || path == op.target || path.starts_with(op.target + "/");
    if (!covers) continue;
    bound = op.kind == MountOp::Kind::kBind;  // the last mount covering it wins
  }
  return bound;
}

}  // namespace

Result<std::vector<MountOp>> EgressMounts(const std::string& dir,
                                          const std::vector<MountOp>& planned) {
  std::vector<MountOp> mounts;
  for (auto [name, text] : {std::pair{"resolv.conf", kResolvConf}, std::pair{"hosts", kHosts}}) {
    std::string target = std::string("/etc/") + name;
    if (!Visible(target, planned)) continue;
    std::string source = dir + "/" + name;
    int fd = open(source.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("create " + source);
    std::string content(text);
    bool ok = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
    close(fd);
    if (!ok) return ErrnoError("write " + source);
    mounts.push_back(MountOp{MountOp::Kind::kBind, source, target, false, false});
  }
  return mounts;
}

}  // namespace gander::sandbox
