// Path helpers every room uses: lexical ones (IsWithin, Basename) that never touch the
// filesystem, and RealPath, ReadFile and WriteFile, which do.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gander {

// True when `path` is `dir` or lies beneath it, whole components compared ("/home/user" is
// not within "/home/u"). Both absolute and normalised; a `dir` ending in '/' ("/" among them)
// holds every path that starts with it, so "/" holds every absolute path and no relative or
// empty one. An empty `dir` (an unset $HOME, say) holds "" and every absolute path.
bool IsWithin(std::string_view path, std::string_view dir);

// The last component of `path`: what follows its last '/', or all of it without one.
std::string Basename(std::string_view path);

// realpath(3): the canonical absolute path, every link resolved; nullopt when `path` does not
// exist or a component cannot be searched. `RealPath(p).value_or(p)` keeps `p` then.
std::optional<std::string> RealPath(const std::string& path);

// The whole of the file at `path`, read with read(2), no iostream: the start reads /proc and
// /sys files, and an ifstream's first use costs more than the file. nullopt when it cannot be
// opened or read, or holds more than `limit` bytes. `flags` go with O_RDONLY | O_CLOEXEC
// (O_NOFOLLOW | O_NONBLOCK for a file a sandbox may have planted: no link, no FIFO's wait).
std::optional<std::string> ReadFile(const std::string& path, size_t limit = size_t{16} << 20,
                                    int flags = 0);

// Writes `text` to `path` in one write(2) (what /proc's uid_map and setgroups require), the file
// created with `mode` (less the umask) or truncated first. Errors name the path: "open PATH",
// "write PATH", with errno.
Status WriteFile(const std::string& path, const std::string& text, mode_t mode = 0666);

}  // namespace gander
