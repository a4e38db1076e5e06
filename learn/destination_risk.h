// Which network destinations `gander policy suggest` never grants, or grants with a flag:
// the address scope (local, link-local, public) of what a host is or resolved to, and the
// well-known paste and tunnel services.
#pragma once

#include <set>
#include <string>

namespace gander::learn {

// Why `host` (a name or an address; `addresses`: what it resolved to while learning) is never
// suggested: public addresses without a name (nothing to pin), link-local (cloud metadata)
// ones, named or not, and well-known paste and tunnel services; "" when it may be.
std::string RiskyHost(const std::string& host, const std::set<std::string>& addresses);

// A named destination that is granted but flagged: "public host 140.82.112.3" when an address it
// was reached at is public, "public host? (no address recorded)" without one; "" when every
// address is local.
std::string PublicFlag(const std::set<std::string>& addresses);

}  // namespace gander::learn
