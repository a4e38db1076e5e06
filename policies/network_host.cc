// Host syntax checks for network rules; see network_host.h.
#include "policies/network_host.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string>

namespace gander::policies {
namespace {

constexpr size_t kMaxNameLength = 253;  // RFC 1035, without the trailing dot
constexpr size_t kMaxLabelLength = 63;

bool IsLabel(std::string_view label) {
  if (label.empty() || label.size() > kMaxLabelLength) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  return std::all_of(label.begin(), label.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0 || c == '-'; });
}

bool IsAllDigits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// A DNS name of one or more labels. The last label may not be all digits, so a mistyped
// IPv4 address ("300.1.1.1") is not taken for a name.
bool IsDnsName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  std::string_view last;
  while (true) {
    size_t dot = name.find('.');
    std::string_view label = name.substr(0, dot);
    if (!IsLabel(label)) return false;
    last = label;
    if (dot == std::string_view::npos) break;
    name.remove_prefix(dot + 1);
  }
  return !IsAllDigits(last);
}

// Parses an IPv4 or IPv6 address into `bytes`; returns the address length in bytes (4 or 16), or
// 0 when `text` is neither.
size_t ParseAddress(std::string_view text, std::array<unsigned char, 16>& bytes) {
  std::string s(text);
  if (inet_pton(AF_INET, s.c_str(), bytes.data()) == 1) return 4;
  if (inet_pton(AF_INET6, s.c_str(), bytes.data()) == 1) return 16;
  return 0;
}

Result<HostKind> ClassifyCidr(std::string_view host) {
  size_t slash = host.find('/');
  std::string_view address = host.substr(0, slash);
  std::string_view prefix_text = host.substr(slash + 1);
  std::array<unsigned char, 16> bytes{};
  size_t length = ParseAddress(address, bytes);
  if (length == 0) {
    return MakeError("'" + std::string(host) + "': '" + std::string(address) +
                     "' is not an IPv4 or IPv6 address");
  }
  unsigned prefix = 0;
  auto [end, ec] =
      std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), prefix);
  if (prefix_text.empty() || prefix_text.size() > 3 || ec != std::errc() ||
      end != prefix_text.data() + prefix_text.size() || prefix > length * 8) {
    return MakeError("'" + std::string(host) + "': prefix length must be 0-" +
                     std::to_string(length * 8));
  }
  for (size_t bit = prefix; bit < length * 8; ++bit) {
    if (bytes[bit / 8] & (0x80 >> (bit % 8))) {
      return MakeError("'" + std::string(host) + "': address has bits set beyond the /" +
                       std::string(prefix_text) + " prefix");
    }
  }
  return HostKind::kCidr;
}

}  // namespace

Result<HostKind> ClassifyHost(std::string_view host) {
  if (host.empty()) return MakeError("empty host");
  if (host.find('/') != std::string_view::npos) return ClassifyCidr(host);
  std::array<unsigned char, 16> bytes{};
  if (ParseAddress(host, bytes) != 0) return HostKind::kAddress;
  if (host.find(':') != std::string_view::npos) {
    return MakeError("'" + std::string(host) + "' is not a valid IPv6 address");
  }
  if (host.starts_with("*.")) {
    if (IsDnsName(host.substr(2))) return HostKind::kWildcard;
    return MakeError("'" + std::string(host) + "': expected '*.' followed by a DNS name");
  }
  if (IsDnsName(host)) return HostKind::kName;
  return MakeError("'" + std::string(host) +
                   "' is not a DNS name, *.suffix, IP address or CIDR block");
}

}  // namespace gander::policies
