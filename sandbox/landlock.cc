#include "sandbox/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace gander::sandbox::landlock {
namespace {

// Our own copies of the uapi structs, sized for ABI 6+ (the kernel accepts a smaller
// ruleset_attr from older callers; we pass the size that matches the ABI in use).
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

}  // namespace

int ProbeAbi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

uint64_t HandledFsRights(int abi) {
  if (abi <= 0) return 0;
  uint64_t rights = (kMakeSym << 1) - 1;  // ABI 1: bits 0..12
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

int ChildApply(const Ruleset& ruleset, const char** failed_path) {
  *failed_path = nullptr;
  RulesetAttr attr{ruleset.handled_fs, ruleset.handled_net, ruleset.scoped};
  size_t attr_size = sizeof(uint64_t);                  // ABI 1-3
  if (ruleset.abi >= 4) attr_size += sizeof(uint64_t);  // handled_access_net
  if (ruleset.abi >= 6) attr_size += sizeof(uint64_t);  // scoped
  int ruleset_fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0));
  if (ruleset_fd < 0) return errno;

  for (const PathRule& rule : ruleset.rules) {
    int fd = open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // nothing there to allow
      *failed_path = rule.path.c_str();
      int err = errno;
      close(ruleset_fd);
      return err;
    }
    // The kernel refuses a file a directory's rights (EINVAL): only then are they narrowed to
    // a file's, which spares a directory (most rules) an fstat.
    uint64_t access = rule.access & ruleset.handled_fs;
    PathBeneathAttr beneath{access, fd};
    long rc =
        access == 0 ? 0 : syscall(SYS_landlock_add_rule, ruleset_fd, kRulePathBeneath, &beneath, 0);
    struct stat st;
    if (rc < 0 && errno == EINVAL && (access & kFileRights) != access && fstat(fd, &st) == 0 &&
        !S_ISDIR(st.st_mode)) {
      beneath.allowed_access = access & kFileRights;
      rc = beneath.allowed_access == 0
               ? 0
               : syscall(SYS_landlock_add_rule, ruleset_fd, kRulePathBeneath, &beneath, 0);
    }
    int err = errno;
    close(fd);
    if (rc < 0) {
      *failed_path = rule.path.c_str();
      close(ruleset_fd);
      return err;
    }
  }
  long rc = syscall(SYS_landlock_restrict_self, ruleset_fd, 0);
  int err = errno;
  close(ruleset_fd);
  return rc < 0 ? err : 0;
}

}  // namespace gander::sandbox::landlock
