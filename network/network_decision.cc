#include "network/network_decision.h"

#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

namespace gander::network {

int SockaddrFamily(const void* data, size_t size) {
  sa_family_t family = AF_UNSPEC;
  if (size < sizeof(family)) return AF_UNSPEC;
  std::memcpy(&family, data, sizeof(family));
  return family;
}

std::optional<InetAddress> ParseInetSockaddr(const void* data, size_t size) {
  int family = SockaddrFamily(data, size);
  InetAddress out;
  out.family = family;
  if (family == AF_INET && size >= sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, data, sizeof(in));
    out.ip = policies::IpAddress::V4(reinterpret_cast<const uint8_t*>(&in.sin_addr));
    out.port = ntohs(in.sin_port);
    return out;
  }
  // The kernel accepts an AF_INET6 address without sin6_scope_id (SIN6_LEN_RFC2133, 24 bytes).
  if (family == AF_INET6 && size >= 24) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, data, std::min(size, sizeof(in6)));
    out.ip = policies::IpAddress::V6(in6.sin6_addr.s6_addr);
    out.port = ntohs(in6.sin6_port);
    return out;
  }
  return std::nullopt;
}

namespace {

// One hex field of /proc/net/tcp{,6}: the address is printed as the raw 32-bit words in the
// host's byte order (%08X), the port as a number.
bool ParseHexWord(std::string_view hex, uint32_t* out) {
  if (hex.empty() || hex.size() > 8) return false;
  uint32_t v = 0;
  for (char c : hex) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint32_t>(d);
  }
  *out = v;
  return true;
}

// The rows of /proc/net/tcp{,6} after the header that end in a newline, each as its first
// four fields ("  sl  local_address rem_address   st ..."); `row` returns false to stop.
template <typename Row>
void ForEachTableRow(std::string_view table, Row row) {
  size_t pos = table.find('\n');  // the header line
  while (pos != std::string_view::npos) {
    size_t end = table.find('\n', pos + 1);
    if (end == std::string_view::npos) return;  // a partial row: more text to come
    std::string_view line = table.substr(pos + 1, end - pos - 1);
    pos = end;
    std::vector<std::string_view> fields;
    for (size_t i = 0; i < line.size() && fields.size() < 4;) {
      while (i < line.size() && line[i] == ' ') ++i;
      size_t j = line.find(' ', i);
      if (j == std::string_view::npos) j = line.size();
      if (j > i) fields.push_back(line.substr(i, j - i));
      i = j;
    }
    if (fields.size() == 4 && !row(fields)) return;
  }
}

constexpr std::string_view kListenState = "0A";

}  // namespace

bool TableListensOn(std::string_view table, bool v6_table, const policies::IpAddress& ip,
                    uint16_t port) {
  bool found = false;
  ForEachTableRow(table, [&](const std::vector<std::string_view>& fields) {
    if (fields[3] != kListenState) return true;
    std::string_view local = fields[1];
    size_t colon = local.find(':');
    uint32_t lport = 0;
    if (colon == std::string_view::npos || !ParseHexWord(local.substr(colon + 1), &lport) ||
        lport != port) {
      return true;
    }
    std::string_view hex = local.substr(0, colon);
    uint8_t bytes[16] = {};
    size_t words = v6_table ? 4 : 1;
    if (hex.size() != words * 8) return true;
    for (size_t w = 0; w < words; ++w) {
      uint32_t word = 0;
      if (!ParseHexWord(hex.substr(w * 8, 8), &word)) return true;
      std::memcpy(bytes + w * 4, &word, 4);
    }
    policies::IpAddress listener =
        v6_table ? policies::IpAddress::V6(bytes) : policies::IpAddress::V4(bytes);
    found = listener.IsUnspecified() || ip.IsUnspecified() || listener == ip;
    return !found;
  });
  return found;
}

bool TablePastListeners(std::string_view table) {
  bool past = false;
  ForEachTableRow(table, [&](const std::vector<std::string_view>& fields) {
    past = fields[3] != kListenState;
    return !past;
  });
  return past;
}

bool IsLocalAddress(const policies::IpAddress& ip) { return ip.IsLoopback() || ip.IsUnspecified(); }

namespace {

policies::MatchResult MatchAs(const policies::NetworkMatcher& matcher,
                              const policies::Destination& dest, int sock_type) {
  policies::Destination d = dest;
  d.protocol = sock_type == SOCK_STREAM ? policies::Protocol::kTcp : policies::Protocol::kUdp;
  return matcher.Match(d);
}

}  // namespace

bool ListenersMatter(const policies::NetworkMatcher& matcher, const policies::Destination& dest,
                     int sock_type) {
  if (sock_type != SOCK_STREAM || !IsLocalAddress(dest.ip)) return false;
  return matcher.everything() || !MatchAs(matcher, dest, sock_type).allowed;
}

NetDecision DecideConnect(const policies::NetworkMatcher& matcher,
                          const policies::Destination& dest, int sock_type,
                          const NetContext& context) {
  bool tcp = sock_type == SOCK_STREAM;
  if (tcp && dest.port == 53 && !context.namespaces &&
      std::find(context.nameservers.begin(), context.nameservers.end(), dest.ip) !=
          context.nameservers.end()) {
    return {NetAction::kDnsStub, 0, ""};
  }
  bool udp = sock_type == SOCK_DGRAM && context.namespaces;
  policies::MatchResult match = MatchAs(matcher, dest, sock_type);
  if (IsLocalAddress(dest.ip)) {
    // Host loopback only when the policy names it (or allows everything and nothing in the
    // sandbox listens there); otherwise, with a network namespace, this is the sandbox's own
    // loopback (the extension talking to its children, the DNS stub).
    bool inside_first = matcher.everything() && context.local_listener;
    if (match.allowed && tcp && !inside_first) return {NetAction::kBroker, 0, match.rule};
    if (match.allowed && udp && !matcher.everything()) return {NetAction::kRelay, 0, match.rule};
    if (context.namespaces) {
      if (tcp && context.listeners_known && !context.local_listener) {
        return {NetAction::kDeny, ECONNREFUSED, match.rule};
      }
      return {NetAction::kLocal, 0, ""};
    }
    return {NetAction::kDeny, context.deny_errno, match.rule};
  }
  if (match.allowed && tcp) return {NetAction::kBroker, 0, match.rule};
  if (match.allowed && udp) return {NetAction::kRelay, 0, match.rule};
  return {NetAction::kDeny, context.deny_errno, match.rule};
}

std::vector<policies::IpAddress> ParseNameservers(std::string_view resolv_conf) {
  std::vector<policies::IpAddress> out;
  while (!resolv_conf.empty()) {
    size_t end = resolv_conf.find('\n');
    std::string_view line = resolv_conf.substr(0, end);
    resolv_conf = end == std::string_view::npos ? "" : resolv_conf.substr(end + 1);
    auto word = [&line]() {
      size_t start = line.find_first_not_of(" \t\r");
      if (start == std::string_view::npos) return std::string_view();
      line.remove_prefix(start);
      size_t stop = std::min(line.find_first_of(" \t\r"), line.size());
      std::string_view w = line.substr(0, stop);
      line.remove_prefix(stop);
      return w;
    };
    if (word() != "nameserver") continue;
    std::string_view address = word();
    address = address.substr(0, address.find('%'));
    if (auto ip = policies::IpAddress::Parse(std::string(address))) out.push_back(*ip);
  }
  if (out.empty()) out.push_back(*policies::IpAddress::Parse("127.0.0.1"));
  return out;
}

std::vector<std::pair<policies::IpAddress, std::string>> ParseHostsFile(std::string_view hosts) {
  std::vector<std::pair<policies::IpAddress, std::string>> out;
  while (!hosts.empty()) {
    size_t end = hosts.find('\n');
    std::string_view line = hosts.substr(0, end);
    hosts = end == std::string_view::npos ? "" : hosts.substr(end + 1);
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> words;
    while (true) {
      size_t start = line.find_first_not_of(" \t\r");
      if (start == std::string_view::npos) break;
      line.remove_prefix(start);
      size_t stop = std::min(line.find_first_of(" \t\r"), line.size());
      words.push_back(line.substr(0, stop));
      line.remove_prefix(stop);
    }
    if (words.size() < 2) continue;
    auto ip = policies::IpAddress::Parse(std::string(words[0].substr(0, words[0].find('%'))));
    if (!ip) continue;
    for (size_t i = 1; i < words.size(); ++i) {
      std::string name(words[i]);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.emplace_back(*ip, std::move(name));
    }
  }
  return out;
}

NetDecision DecideSend(const policies::NetworkMatcher& matcher, const policies::Destination& dest,
                       int sock_type, const NetContext& context) {
  // TCP ignores the address of sendto/sendmsg (MSG_FASTOPEN, which would use it, is refused
  // by the filter), so the connection decided at connect() is where the bytes go.
  if (sock_type == SOCK_STREAM) return {NetAction::kContinue, 0, ""};
  policies::MatchResult match = MatchAs(matcher, dest, sock_type);
  if (match.allowed && sock_type == SOCK_DGRAM && context.namespaces) {
    return {NetAction::kRelay, 0, match.rule};
  }
  // A datagram to the sandbox's own loopback: the empty namespace has no route anywhere else,
  // so a thread rewriting the address meanwhile reaches nothing more.
  if (context.namespaces && IsLocalAddress(dest.ip)) return {NetAction::kContinue, 0, ""};
  return {NetAction::kDeny, context.deny_errno, match.rule};
}

}  // namespace gander::network
