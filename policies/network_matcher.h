// The network policy compiled into a pure matcher: which destinations (address, port, and the
// names the DNS stub resolved to that address) an extension may connect to, and which names
// the stub may resolve. Nothing here touches the kernel or resolves anything.
//
// Rules: `network.deny` wins over `network.allow`. A name rule matches a destination only
// through the names the stub returned for its address (DNS pinning: an address the stub never
// handed out is not reached through a name rule). Host loopback (127.0.0.0/8, ::1) is reached
// only when a rule names it explicitly: an address or CIDR inside loopback, or an exact name
// that resolved to it; wildcards and wider CIDR blocks (0.0.0.0/0) never reach it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "policies/network_host.h"
#include "policies/policy.h"

namespace gander::policies {

// An IPv4 or IPv6 address; IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are stored as IPv4.
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4: the first 4

  static std::optional<IpAddress> Parse(std::string_view text);
  static IpAddress V4(const uint8_t b[4]);
  static IpAddress V6(const uint8_t b[16]);  // unmaps ::ffff:a.b.c.d
  size_t size() const { return v6 ? 16 : 4; }
  bool IsLoopback() const;
  bool IsUnspecified() const;  // 0.0.0.0 or ::
  std::string ToString() const;
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;
};

// What a connection attempt is checked against.
struct Destination {
  IpAddress ip;
  uint16_t port = 0;
  std::vector<std::string> names;  // names the stub resolved to `ip` (lower case, no final dot)
  Protocol protocol = Protocol::kTcp;
};

struct MatchResult {
  bool allowed = false;
  std::string rule;  // the allow rule's host (allowed) or the deny rule's host (denied), or ""
};

class NetworkMatcher {
 public:
  // Compiles validated rules (the parser checked every host); an error names a bad rule.
  static Result<NetworkMatcher> Compile(const NetworkRules& rules);
  // `--mode learn`: every destination (host loopback included, rule "*") and every name.
  static NetworkMatcher Everything();

  MatchResult Match(const Destination& destination) const;
  // May the DNS stub resolve `name` (any allow name rule matches it and no deny rule without
  // ports names it)? `name` is compared case-insensitively, a final dot ignored.
  bool MayResolve(std::string_view name) const;
  bool empty() const { return allow_.empty() && !everything_; }
  bool everything() const { return everything_; }

 private:
  struct Rule {
    HostKind kind = HostKind::kName;
    std::string host;  // as written
    std::string name;  // kName: lower case; kWildcard: ".suffix" lower case
    IpAddress address;
    unsigned prefix = 0;               // kCidr / kAddress (full length)
    std::vector<uint16_t> ports;       // empty: every port (deny rules only)
    std::optional<Protocol> protocol;  // unset: allow TCP only, deny both
  };
  static bool MatchesPort(const Rule& rule, uint16_t port);
  // Does `rule` match by address or name? `loopback_ok` is set when the match may reach
  // host loopback (an explicit rule).
  static bool MatchesHost(const Rule& rule, const Destination& d, bool* explicit_loopback);

  std::vector<Rule> allow_;
  std::vector<Rule> deny_;
  bool everything_ = false;
};

// `network.deny_errno`: the errnos a policy may name for refused connections, and the value of
// one (nullopt when it is not among them).
inline constexpr const char* kDenyErrnoNames =
    "one of: ECONNREFUSED, EACCES, EPERM, ENETUNREACH, EHOSTUNREACH, ETIMEDOUT, ECONNRESET";
std::optional<int> DenyErrnoValue(std::string_view name);

// A DNS name normalised for comparison: lower case, without a final dot.
std::string NormalizeName(std::string_view name);

}  // namespace gander::policies
