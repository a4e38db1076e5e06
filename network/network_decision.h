// What to do with a network syscall (connect, sendto, sendmsg, sendmmsg), decided on the
// supervisor's own copy of the address: a pure function of (address, socket type, policy),
// tested without a kernel. The egress broker (egress.h) carries the decision out.
//
// Never CONTINUE an inet connect: an allowed TCP connect is brokered (the supervisor connects
// to the validated destination itself), a connect to the sandbox's own loopback or to an
// allowed UDP destination's relay is performed by the supervisor on the child's socket with
// the copied address. UDP rules (`protocol: udp`) take effect only with a network namespace:
// the relay lives there, and without one the sandbox cannot make UDP sockets at all. Only non-inet
// families (AF_UNIX, AF_NETLINK, ...) continue: the kernel interprets their address by the socket's
// own family, and their reach is the mount view (unix paths), Landlock scoping (abstract
// unix) and the empty network namespace.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policies/network_matcher.h"

namespace gander::network {

// An inet socket address, parsed from raw sockaddr bytes.
struct InetAddress {
  int family = AF_INET;  // of the sockaddr as written: AF_INET or AF_INET6
  policies::IpAddress ip;
  uint16_t port = 0;
};

// The family of a raw sockaddr (AF_UNSPEC when shorter than sa_family), and its inet form
// when it is a complete AF_INET / AF_INET6 address.
int SockaddrFamily(const void* data, size_t size);
std::optional<InetAddress> ParseInetSockaddr(const void* data, size_t size);

enum class NetAction {
  kContinue,  // not inet, or an address the kernel ignores: let the syscall run
  kDeny,      // refuse with `error`, and report
  kLocal,     // the sandbox's own loopback: the supervisor connects the child's socket itself
  kBroker,    // TCP to an allowed host: the supervisor connects and relays
  kRelay,     // UDP to an allowed host: through the supervisor's datagram relay (egress.h)
  kDnsStub,   // without namespaces, TCP to a nameserver of the host's resolv.conf, port 53:
              // the supervisor connects the child's socket to the DNS stub's TCP listener
};

struct NetDecision {
  NetAction action = NetAction::kDeny;
  int error = 0;
  std::string rule;  // the policy host that allowed or denied it, "" when none
  // `--mode monitor`: let through, but the policy on trial would refuse it (would_deny).
  bool would_deny = false;
};

struct NetContext {
  bool namespaces = true;  // the sandbox has its own (empty) network namespace
  int deny_errno = 0;      // the policy's errno for refused connections
  // A TCP connect to loopback, with a network namespace: were the sandbox's own listeners
  // read (`listeners_known`), and does one take this address and port (`local_listener`)?
  // Nothing listening inside means the extension reaches for a host-loopback service: it is
  // refused with ECONNREFUSED (what the empty loopback answers) and reported; under a matcher
  // allowing everything (learn mode) it is brokered to the host instead.
  bool listeners_known = false;
  bool local_listener = false;
  // Without namespaces, when the DNS stub listens on host loopback: the nameservers of the
  // host's resolv.conf, whose port 53 over TCP is the stub (glibc asks them over TCP with
  // RES_OPTIONS=use-vc, which gander sets in this mode).
  std::vector<policies::IpAddress> nameservers{};
};

// connect() of a socket of type `sock_type` (SOCK_STREAM, SOCK_DGRAM, ...) to `dest`.
NetDecision DecideConnect(const policies::NetworkMatcher& matcher,
                          const policies::Destination& dest, int sock_type,
                          const NetContext& context);

// sendto/sendmsg/sendmmsg naming `dest` on a socket of `sock_type`.
NetDecision DecideSend(const policies::NetworkMatcher& matcher, const policies::Destination& dest,
                       int sock_type, const NetContext& context);

// Does a TCP socket in LISTEN state in `table` (the text of /proc/PID/net/tcp, or of tcp6
// when `v6_table`) take a connect to `ip`:`port`? Generous on purpose: a listener on the
// wildcard address, or on any address when `ip` is unspecified, counts.
bool TableListensOn(std::string_view table, bool v6_table, const policies::IpAddress& ip,
                    uint16_t port);

// Has `table` (as read so far) a complete row past its listeners? The kernel prints every
// LISTEN socket before the connected ones, so a reader may stop there: a sandbox with
// thousands of TIME_WAIT sockets need not print them all at each connect.
bool TablePastListeners(std::string_view table);

// Does DecideConnect's answer for `dest` under `matcher` depend on the sandbox's own listeners
// (NetContext::local_listener)? Only for a TCP connect to loopback that the matcher does not
// allow by name, or under a matcher allowing everything.
bool ListenersMatter(const policies::NetworkMatcher& matcher, const policies::Destination& dest,
                     int sock_type);

// The `nameserver` addresses of a resolv.conf text, in order (a scope suffix such as
// "%eth0" dropped); 127.0.0.1 when it names none, as glibc then asks the local host.
std::vector<policies::IpAddress> ParseNameservers(std::string_view resolv_conf);

// The address and name pairs of an /etc/hosts file (every name of a line, aliases too,
// lower-cased; comments and malformed lines skipped).
std::vector<std::pair<policies::IpAddress, std::string>> ParseHostsFile(std::string_view hosts);

// Is `ip` the sandbox's own host (loopback or unspecified, which Linux connects to locally)?
bool IsLocalAddress(const policies::IpAddress& ip);

}  // namespace gander::network
