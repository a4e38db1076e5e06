// A connection to a Unix stream socket by path: the collector client, `gander status` and
// `gander goose doctor` all connect this way.
#pragma once

#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gander {

// A connected SOCK_STREAM socket, close-on-exec; `extra_flags` are OR'ed into the socket type
// (SOCK_NONBLOCK for a non-blocking connect). ENAMETOOLONG when `path` does not fit sun_path.
Result<UniqueFd> ConnectUnix(const std::string& path, int extra_flags = 0);

}  // namespace gander
