// rm -rf of a path by descriptors: what a sandbox wrote (a workspace copy, private
// directories, runsc's files) is removed without following a link it planted.
#pragma once

#include <string>

namespace gander {

// rm -rf of `path` by fds (openat/unlinkat from the directory above it): no symlink is
// followed, no path re-walked that a process inside could swap; read-only directories are
// made writable first, and no depth exhausts the fds. Errors are ignored (best effort).
void RemoveTree(const std::string& path);

}  // namespace gander
