// The paths the file tools accept: relative to the sandbox's workspace, never leaving it. The
// lexical check here is the first gate (a clear error before anything is opened); the second is
// the kernel's, at open time: openat2(RESOLVE_BENEATH) from the workspace's directory fd, which
// also refuses symlinks and magic links that lead out (OpenBeneath). Pure but for OpenBeneath.
#pragma once

#include <string>

#include "common/result.h"

namespace gander::mcp {

// Returns the normalised relative path ("." for the workspace itself), or an error naming
// what is wrong: empty, absolute, a ".." component, a NUL byte, longer than PATH_MAX.
// "a//b/./c/" becomes "a/b/c".
Result<std::string> CheckWorkspacePath(const std::string& path);

// Opens `relative` (already checked) beneath the directory `dir_fd`: openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS where the kernel has it, else a walk that refuses
// every symlink (O_NOFOLLOW per component). `flags` as for open(2); O_CLOEXEC is added.
Result<int> OpenBeneath(int dir_fd, const std::string& relative, int flags, int mode = 0);

}  // namespace gander::mcp
