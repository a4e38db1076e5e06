// The compiled network policy; see network_matcher.h.
#include "policies/network_matcher.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace gander::policies {
namespace {

bool PrefixMatches(const IpAddress& block, unsigned prefix, const IpAddress& ip) {
  if (block.v6 != ip.v6) return false;
  for (unsigned bit = 0; bit < prefix; ++bit) {
    uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
    if ((block.bytes[bit / 8] & mask) != (ip.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

// Is the whole block inside host loopback (so that naming it is naming loopback)?
bool BlockIsLoopback(const IpAddress& block, unsigned prefix) {
  if (!block.v6) return prefix >= 8 && block.bytes[0] == 127;
  return prefix == 128 && block.IsLoopback();
}

}  // namespace

std::string NormalizeName(std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<int> DenyErrnoValue(std::string_view name) {
  static constexpr std::pair<std::string_view, int> kErrnos[] = {{"ECONNREFUSED", ECONNREFUSED},
                                                                 {"EACCES", EACCES},
                                                                 {"EPERM", EPERM},
                                                                 {"ENETUNREACH", ENETUNREACH},
                                                                 {"EHOSTUNREACH", EHOSTUNREACH},
                                                                 {"ETIMEDOUT", ETIMEDOUT},
                                                                 {"ECONNRESET", ECONNRESET}};
  for (const auto& [known, value] : kErrnos) {
    if (known == name) return value;
  }
  return std::nullopt;
}

IpAddress IpAddress::V4(const uint8_t b[4]) {
  IpAddress ip;
  std::memcpy(ip.bytes.data(), b, 4);
  return ip;
}

IpAddress IpAddress::V6(const uint8_t b[16]) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(b, kMapped, 12) == 0) return V4(b + 12);
  IpAddress ip;
  ip.v6 = true;
  std::memcpy(ip.bytes.data(), b, 16);
  return ip;
}

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  std::string s(text);
  uint8_t buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) return V4(buf);
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) return V6(buf);
  return std::nullopt;
}

bool IpAddress::IsLoopback() const {
  if (!v6) return bytes[0] == 127;
  static constexpr uint8_t kOne[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(bytes.data(), kOne, 16) == 0;
}

bool IpAddress::IsUnspecified() const {
  return std::all_of(bytes.begin(), bytes.begin() + static_cast<long>(size()),
                     [](uint8_t b) { return b == 0; });
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof(buf));
  return buf;
}

Result<NetworkMatcher> NetworkMatcher::Compile(const NetworkRules& rules) {
  NetworkMatcher matcher;
  for (bool allow : {true, false}) {
    for (const NetworkRule& written : allow ? rules.allow : rules.deny) {
      Result<HostKind> kind = ClassifyHost(written.host);
      if (!kind) return kind.error();
      Rule rule;
      rule.kind = *kind;
      rule.host = written.host;
      rule.ports = written.ports;
      rule.protocol = written.protocol;
      switch (*kind) {
        case HostKind::kName:
          rule.name = NormalizeName(written.host);
          break;
        case HostKind::kWildcard:
          rule.name = NormalizeName(std::string_view(written.host).substr(1));  // ".suffix"
          break;
        case HostKind::kAddress:
          rule.address = *IpAddress::Parse(written.host);
          rule.prefix = static_cast<unsigned>(rule.address.size() * 8);
          break;
        case HostKind::kCidr: {
          size_t slash = written.host.find('/');
          std::optional<IpAddress> block = IpAddress::Parse(written.host.substr(0, slash));
          if (!block) return MakeError("'" + written.host + "': bad address");
          rule.address = *block;
          rule.prefix = static_cast<unsigned>(std::stoul(written.host.substr(slash + 1)));
          // ::ffff:10.0.0.0/104 was unmapped to IPv4: shift the prefix with it.
          if (!block->v6 && written.host.find(':') != std::string::npos) {
            rule.prefix = rule.prefix >= 96 ? rule.prefix - 96 : 0;
          }
          break;
        }
      }
      if (allow && rule.ports.empty()) {
        return MakeError("'" + written.host + "': an allow rule must name its ports");
      }
      (allow ? matcher.allow_ : matcher.deny_).push_back(std::move(rule));
    }
  }
  return matcher;
}

bool NetworkMatcher::MatchesPort(const Rule& rule, uint16_t port) {
  return rule.ports.empty() ||
         std::find(rule.ports.begin(), rule.ports.end(), port) != rule.ports.end();
}

bool NetworkMatcher::MatchesHost(const Rule& rule, const Destination& d, bool* explicit_loopback) {
  *explicit_loopback = false;
  switch (rule.kind) {
    case HostKind::kAddress:
    case HostKind::kCidr:
      if (!PrefixMatches(rule.address, rule.prefix, d.ip)) return false;
      *explicit_loopback = BlockIsLoopback(rule.address, rule.prefix);
      return true;
    case HostKind::kName:
      for (const std::string& name : d.names) {
        if (name == rule.name) {
          *explicit_loopback = true;
          return true;
        }
      }
      return false;
    case HostKind::kWildcard:
      for (const std::string& name : d.names) {
        if (name.size() > rule.name.size() && name.ends_with(rule.name)) return true;
      }
      return false;
  }
  return false;
}

NetworkMatcher NetworkMatcher::Everything() {
  NetworkMatcher matcher;
  matcher.everything_ = true;
  return matcher;
}

MatchResult NetworkMatcher::Match(const Destination& d) const {
  if (everything_) return {!d.ip.IsUnspecified() && d.port != 0, "*"};
  bool explicit_loopback = false;
  for (const Rule& rule : deny_) {
    // A deny rule names what it refuses: loopback or not, it applies.
    if ((!rule.protocol || *rule.protocol == d.protocol) && MatchesPort(rule, d.port) &&
        MatchesHost(rule, d, &explicit_loopback)) {
      return {false, rule.host};
    }
  }
  if (d.ip.IsUnspecified() || d.port == 0) return {false, ""};
  for (const Rule& rule : allow_) {
    if (rule.protocol.value_or(Protocol::kTcp) != d.protocol) continue;
    if (!MatchesPort(rule, d.port) || !MatchesHost(rule, d, &explicit_loopback)) continue;
    if (d.ip.IsLoopback() && !explicit_loopback) continue;
    return {true, rule.host};
  }
  return {false, ""};
}

bool NetworkMatcher::MayResolve(std::string_view raw) const {
  std::string name = NormalizeName(raw);
  if (name.empty()) return false;
  if (everything_) return true;
  Destination probe;
  probe.names = {name};
  bool unused = false;
  for (const Rule& rule : deny_) {
    if (rule.ports.empty() && (rule.kind == HostKind::kName || rule.kind == HostKind::kWildcard) &&
        MatchesHost(rule, probe, &unused)) {
      return false;
    }
  }
  for (const Rule& rule : allow_) {
    if ((rule.kind == HostKind::kName || rule.kind == HostKind::kWildcard) &&
        MatchesHost(rule, probe, &unused)) {
      return true;
    }
  }
  return false;
}

}  // namespace gander::policies
