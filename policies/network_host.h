// Syntax of the `host` in a network rule: a DNS name, a `*.suffix` wildcard, an IPv4 or IPv6
// address, or a CIDR block. Pure string checks; nothing is resolved.
#pragma once

#include <string_view>

#include "common/result.h"

namespace gander::policies {

enum class HostKind {
  kName,      // api.github.com
  kWildcard,  // *.github.com: any name strictly below the suffix
  kAddress,   // 140.82.112.3 or 2001:db8::1
  kCidr,      // 10.0.0.0/8 or 2001:db8::/32 (host bits must be zero)
};

// What kind of host `host` is, or an error saying why it is none (no position; callers add it).
Result<HostKind> ClassifyHost(std::string_view host);

}  // namespace gander::policies
