// Copying file trees between the host and sandbox workspaces without ever following a link the
// sandbox could have planted: every component is opened with O_NOFOLLOW from a directory fd.
// Used to copy the caller's files in (sandbox_create), to clone a workspace (sandbox_fork) and
// to copy results out (sandbox_export). Data is reflinked (FICLONE) where the filesystem can,
// else copied in the kernel (copy_file_range); modes and modification times are kept (a fork's
// `make` does not rebuild everything).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/result.h"

namespace gander::mcp {

struct CopyOptions {
  bool follow_top = false;    // the top entry may be a symlink (a host path the user named)
  bool keep_symlinks = true;  // copy symlinks as symlinks; false: skip them
  uint64_t max_bytes = 4ull << 30;
  uint64_t max_file_bytes = 0;  // a larger file (by the bytes it holds) is skipped; 0: none
  uint64_t max_entries = 200000;
  // Entries (by their path: the source name, then "/child" per level) left out and counted as
  // skipped, e.g. key stores inside a directory the caller copies in.
  std::function<bool(const std::string& where)> skip = nullptr;
};

struct CopyStats {
  uint64_t files = 0, dirs = 0, symlinks = 0, bytes = 0, skipped = 0;
  uint64_t too_large = 0;  // of the skipped: past max_file_bytes
};

// Copies `src_name` in the directory `src_dir` to `dst_name` in `dst_dir` (created; an
// existing regular file there is replaced, an existing directory merged into).
Status CopyTree(int src_dir, const std::string& src_name, int dst_dir, const std::string& dst_name,
                const CopyOptions& options, CopyStats& stats);

}  // namespace gander::mcp
