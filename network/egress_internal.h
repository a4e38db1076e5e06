// What the egress broker's files share (egress.cc, tcp_broker.cc, udp_relay.cc, dns_stub.cc,
// socket_factory.cc, raw_reply.cc): the state of one connection, UDP flow and DNS client, the
// bounds, and small socket-address helpers. Internal to network/: nothing outside includes it.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "network/egress.h"

namespace gander::network {

inline constexpr size_t kPipeSize = 1 << 20;    // per direction and connection
inline constexpr size_t kTurnBudget = 4 << 20;  // bytes per direction and turn
inline constexpr size_t kMaxRecordedAddresses = 4096;
inline constexpr int kMaxLookupsInFlight = 16;
inline constexpr size_t kMaxDnsTcpConnections = 64;
inline constexpr size_t kMaxDnsTcpBuffer = 2 + 65535;
inline constexpr int kUdpTurnDatagrams = 256;  // per socket and turn
inline constexpr size_t kMaxDatagram = 65536;

// getsockopt of an int option; -1 when it fails.
int SocketOption(int fd, int level, int name);

// The socket address of `ip`:`port`; its length.
socklen_t ToSockaddr(const policies::IpAddress& ip, uint16_t port, sockaddr_storage* out);

// "ip|port" of a socket address, IPv4-mapped addresses unmapped, for matching accepted
// connections to pending ones.
std::string AddressKey(const sockaddr_storage& addr, socklen_t len);

// Blocks or unblocks the open file description shared with the child; returns the old flags.
int SetNonBlocking(int fd);

// The address of `pair` for a socket of `domain`; its length, 0 when there is none.
socklen_t LoopbackFor(int domain, const LoopbackPair& pair, const sockaddr_storage** out);

// A DNS stub client by its address as both ends see it (an IPv6 socket's mapped address
// unmapped, as the IPv4 listener sees it).
std::string StubClientKey(const sockaddr_storage& addr, socklen_t len);

// ::ffff:a.b.c.d:port for an IPv4 address.
sockaddr_storage MappedV6(const sockaddr_storage& v4);

// The part of a network event every kind shares: where to (`host`, the name the stub handed out
// for the address, or ""), over what, the verdict and the deciding rule.
events::NetworkEvent DestinationEvent(const InetAddress& dest, std::string host,
                                      std::string transport, std::string syscall,
                                      events::Verdict verdict, std::string rule);

// Closes `fd` with a reset (SO_LINGER 0), not a FIN.
void ResetAndClose(UniqueFd& fd);

struct Pipe {
  UniqueFd r, w;
  size_t pending = 0;
  bool eof = false;   // the source said EOF
  bool shut = false;  // ... and it was passed on (shutdown(SHUT_WR) of the destination)
};

struct Egress::Connection {
  uint64_t id = 0;
  uint64_t notification = 0;
  bool answered = false;
  bool nonblocking = false;
  events::Event base;
  InetAddress dest;
  std::string host;
  std::string rule;
  events::Verdict verdict =
      events::Verdict::kAllowed;  // kWouldDeny: the policy on trial would refuse it
  UniqueFd child;  // our copy of the child's socket, until it is connected to the relay
  ino_t inode = 0;
  std::string child_address;
  UniqueFd upstream;
  bool upstream_connected = false;
  bool upstream_failed = false;
  UniqueFd inner;  // the relay's accepted end
  bool relaying = false;
  Pipe up, down;  // child -> destination, destination -> child
  uint64_t bytes_out = 0, bytes_in = 0;
  int64_t started_ns = 0;
  bool parked = false;      // the child's socket waits in SYN_SENT on a park listener
  sockaddr_storage park{};  // ... this one
  socklen_t park_len = 0;
};

// One child socket's datagrams to one allowed UDP destination: gander's own socket, connected
// to the destination, carries them; replies go back to `child` from the relay.
struct Egress::UdpFlow {
  sockaddr_storage child{};
  socklen_t child_len = 0;
  UniqueFd upstream;
  uint64_t datagrams_out = 0, datagrams_in = 0, bytes_out = 0, bytes_in = 0;
  uint64_t dropped = 0;  // datagrams not relayed, either way
  int64_t started_ns = 0;
  int64_t last_ns = 0;  // the last datagram either way
};

// An allowed UDP destination: the relay socket bound to its address in the sandbox's network
// namespace, and a flow per child socket that sent to it.
struct Egress::UdpRelay {
  events::Event base;   // of the call that made it
  std::string syscall;  // ... and which call that was
  InetAddress dest;
  std::string host;
  std::string rule;
  events::Verdict verdict = events::Verdict::kAllowed;
  UniqueFd inner;
  std::map<std::string, std::unique_ptr<UdpFlow>> flows;  // by the child's address (AddressKey)
};

// Where a DNS answer goes: a UDP client address, or a DNS-over-TCP connection (tcp != 0).
struct DnsOrigin {
  sockaddr_storage client{};
  socklen_t client_len = 0;
  uint64_t tcp = 0;
};

// Host lookups for the DNS stub, on short-lived threads; results return through an eventfd.
struct Egress::Resolver {
  struct Job {
    DnsOrigin origin;
    std::string query;
    dns::Question question;
    int error = 0;  // EAI_* from getaddrinfo
    std::vector<policies::IpAddress> addresses;
  };
  std::mutex mutex;
  std::deque<Job> done;
  UniqueFd event;
  int in_flight = 0;  // touched by the loop only
};

// A DNS-over-TCP client of the stub (RFC 1035 4.2.2: each message after its 16-bit length).
struct Egress::DnsConnection {
  UniqueFd fd;
  std::string in, out;
  int lookups = 0;  // answers still to come from the resolver
  bool eof = false;
};

}  // namespace gander::network
