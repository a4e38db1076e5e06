#include "learn/destination_risk.h"

#include <array>
#include <string_view>

#include "policies/network_matcher.h"

namespace gander::learn {
namespace {

// Where an address leads. Public: anything not loopback, private (RFC 1918, CGNAT, IPv6 unique
// local), link-local or a documentation range (TEST-NETs, 2001:db8::/32).
enum class Scope { kLocal, kLinkLocal, kPublic };

Scope ScopeOf(const policies::IpAddress& ip) {
  const auto& b = ip.bytes;
  if (ip.IsLoopback() || ip.IsUnspecified()) return Scope::kLocal;
  if (!ip.v6) {
    if (b[0] == 169 && b[1] == 254) return Scope::kLinkLocal;
    if (b[0] == 10 || (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168) ||
        (b[0] == 100 && (b[1] & 0xc0) == 64) || (b[0] == 192 && b[1] == 0 && b[2] == 2) ||
        (b[0] == 198 && b[1] == 51 && b[2] == 100) || (b[0] == 203 && b[1] == 0 && b[2] == 113)) {
      return Scope::kLocal;
    }
    return Scope::kPublic;
  }
  if ((b[0] & 0xfe) == 0xfc) return Scope::kLocal;
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return Scope::kLocal;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return Scope::kLinkLocal;
  return Scope::kPublic;
}

}  // namespace

// Destinations that are never suggested: public addresses without a name (nothing to pin),
// link-local (cloud metadata) ones, named or not, and well-known paste and tunnel services.
std::string RiskyHost(const std::string& host, const std::set<std::string>& addresses) {
  if (auto ip = policies::IpAddress::Parse(host)) {
    switch (ScopeOf(*ip)) {
      case Scope::kLocal:
        return "";
      case Scope::kLinkLocal:
        return ip->v6 ? "link-local address" : "link-local (cloud metadata) address";
      case Scope::kPublic:
        return "a public address without a name (no DNS pinning)";
    }
  }
  for (const auto& address : addresses) {
    auto ip = policies::IpAddress::Parse(address);
    if (ip && ScopeOf(*ip) == Scope::kLinkLocal) {
      return "resolves to link-local (cloud metadata) address " + address;
    }
  }
  static constexpr std::array<std::string_view, 12> kExfil = {
      "pastebin.com",         "transfer.sh", "ngrok.io", "ngrok-free.app", "webhook.site",
      "requestbin.com",       "termbin.com", "0x0.st",   "file.io",        "interact.sh",
      "burpcollaborator.net", "oast.fun"};
  for (auto d : kExfil) {
    if (host == d || host.ends_with("." + std::string(d))) return "a paste / tunnel service";
  }
  return "";
}

// A named destination that is granted but flagged: "public host 140.82.112.3" when an address it
// was reached at is public, "public host? (no address recorded)" without one; "" when every
// address is local.
std::string PublicFlag(const std::set<std::string>& addresses) {
  if (addresses.empty()) return "public host? (no address recorded)";
  std::string publics;
  for (const auto& address : addresses) {
    auto ip = policies::IpAddress::Parse(address);
    if (ip && ScopeOf(*ip) != Scope::kPublic) continue;
    publics += (publics.empty() ? "" : ", ") + address;
  }
  return publics.empty() ? "" : "public host " + publics;
}

}  // namespace gander::learn
