// The egress broker and DNS stub: the kernel side of the network decisions (network_decision.h).
// One class, its members defined by job: the decisions and the poll loop in egress.cc, TCP in
// tcp_broker.cc, UDP in udp_relay.cc, DNS in dns_stub.cc, the socket helper in
// socket_factory.cc, failing a parked connect in raw_reply.cc; the sockets made inside the
// sandbox's namespace in netns_sockets.h.
//
// An allowed TCP connect: the supervisor copies the address once (the decision is made on the
// copy), takes the child's socket (pidfd_getfd), connects its own socket to the validated
// destination from gander's network namespace, and, once that succeeded, connects the child's
// own socket object to a relay listener inside the sandbox's network namespace (handed over by
// the sandbox init). The accepted end is matched to the pending destination by the child
// socket's local address, and bytes are relayed (splice, through a pipe per direction) and
// counted exactly. The child keeps an ordinary connected TCP socket with its options; its
// peer address (getpeername) is the relay's loopback address.
//
// An allowed UDP destination (`protocol: udp`, namespaces only) gets a relay socket inside the
// sandbox's network namespace bound to the destination's own address and port (the address
// added to the namespace's loopback when it is not local there), made by the same helper. The
// child's datagrams to that address land on the relay; for each child socket (its source
// address) gander sends them on from its own socket, connected to the destination, and sends
// the replies back to the child from the relay, so they come from the address the child sent
// to: connected and unconnected sockets, recvfrom's source address and IPv6 all work as they
// would without gander. A send naming an allowed destination runs once its relay exists: in
// the empty namespace a rewritten address reaches only the sandbox's loopback or another
// allowed destination's relay. Each flow (child socket, destination) emits one network event
// with datagrams and bytes each way when it ends: after `udp_idle` without a datagram either
// way (as conntrack ends a UDP flow; a later datagram starts a new flow), when the table is
// full (`max_udp_flows`: the least recently used flow ends to make room) or when the extension
// exits. The event's `end` says which (idle, evicted, exit).
//
// Without a network namespace ("broker only") the DNS stub has only a TCP listener, on a free
// port of host loopback: the sandbox keeps the host's resolv.conf, glibc asks its nameservers
// over TCP (RES_OPTIONS=use-vc, set by the launcher), and a TCP connect to one of them on port
// 53 is connected by the supervisor to that listener (NetAction::kDnsStub), which serves only
// the sockets so attached.
//
// Everything runs in the supervisor's poll loop through one epoll fd (fd()): no thread, no
// lock, never blocking; each turn moves at most a bounded number of bytes per connection and
// wakes itself (an eventfd) when more is ready. The only threads are host name lookups for the
// DNS stub (getaddrinfo has no non-blocking form); their results come back through an eventfd.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/unique_fd.h"
#include "events/event_queue.h"
#include "monitor/network_handler.h"
#include "network/dns_wire.h"
#include "network/netns_sockets.h"
#include "network/network_decision.h"
#include "policies/network_matcher.h"
#include "relay/tool_call_tracker.h"

namespace gander::network {

struct DnsOrigin;  // egress_internal.h

// One loopback socket address per family; ss_family 0 when there is none.
struct LoopbackPair {
  sockaddr_storage v4{}, v6{};
};

struct EgressConfig {
  std::string extension;
  policies::NetworkMatcher matcher;
  bool namespaces = true;
  int deny_errno = 111;  // ECONNREFUSED
  // The sandbox is gVisor's sentry on host sockets (--network=host): its hostinet retries a
  // datagram send the host refused with ECONNREFUSED (a UDP socket's pending ICMP error, to
  // it) and the sender blocks for good. Datagram refusals are then EPERM (a netfilter
  // refusal's errno) instead; the policy's other deny_errno values pass as they are.
  bool gvisor_hostinet = false;
  // `--mode monitor`: the policy on trial. What the enforced rules (`matcher`) allow but it
  // would refuse is recorded as would_deny (connections, datagrams, DNS names).
  std::optional<policies::NetworkMatcher> trial;
  EgressSockets sockets;
  // With namespaces: the sandbox init, whose user and network namespaces a helper process
  // joins to make the sockets that complete parked connects (see Egress::ParkPeer).
  pid_t sandbox_pid = 0;
  // Without namespaces: the nameservers of the host's resolv.conf. A TCP connect to one of
  // them on port 53 is connected to the DNS stub's TCP listener (sockets.dns_tcp) instead.
  std::vector<policies::IpAddress> nameservers;
  // Without namespaces: the host's /etc/hosts (ParseHostsFile). The extension reads names
  // from it without asking the stub, so the broker knows those addresses by these names.
  std::vector<std::pair<policies::IpAddress, std::string>> hosts_file;
  // UDP flows: one ends after this long without a datagram either way, and at most this many
  // are open (a new one then ends the least recently used). Tests shorten them through
  // GANDER_UDP_IDLE_MS and GANDER_UDP_MAX_FLOWS (launcher/run.cc).
  std::chrono::milliseconds udp_idle{60000};
  size_t max_udp_flows = 1024;
  // The relay's tracker: a DNS query carries the tool call in flight, as every notified event
  // does, and counts for it; so does each connection or UDP flow a call starts (its event is
  // written when it ends, maybe after the call). Null: no attribution.
  relay::ToolCallTracker* tool_calls = nullptr;
};

struct EgressStats {
  uint64_t brokered = 0;     // connections relayed
  uint64_t udp_flows = 0;    // UDP flows relayed (a child socket and an allowed destination)
  uint64_t udp_idle = 0;     // ... ended after `udp_idle` without a datagram
  uint64_t udp_evicted = 0;  // ... ended to make room (`max_udp_flows`)
  uint64_t udp_dropped = 0;  // datagrams not relayed (a send failed, no socket for a flow)
  uint64_t denied = 0;
  uint64_t dns_queries = 0;
  uint64_t dns_refused = 0;
  size_t open = 0;
};

class Egress final : public monitor::NetworkHandler {
 public:
  Egress(EgressConfig config, monitor::Unotify& unotify, monitor::TargetMemory& memory,
         events::BoundedEventQueue& queue);
  ~Egress() override;
  Egress(const Egress&) = delete;
  Egress& operator=(const Egress&) = delete;

  // Poll this for POLLIN; then call OnReady(), which never blocks.
  int fd() const { return epoll_.get(); }
  void OnReady();

  std::optional<monitor::Response> OnSyscall(const monitor::Notification& n,
                                             std::string_view syscall, const events::Event& base,
                                             std::vector<events::Event>& events) override;
  EgressStats stats() const;
  // The extension is gone: moves what is left and records every open connection (a network
  // event each, with the bytes counted so far), so none is missing from the audit log.
  void CloseAll();

  // Once the extension is gone: relays what the destinations still send (the child's ends
  // read EOF now) for up to `grace`, so connections that were closing end on their own with
  // exact counts; then ends the rest (CloseAll). Every connection has emitted its event on
  // return.
  void Shutdown(std::chrono::milliseconds grace);
  // The sockets in the sandbox's namespace, unwatched, for the caller to close once Shutdown
  // returned.
  EgressSockets TakeSockets();

  struct Connection;
  struct Resolver;
  struct DnsConnection;
  struct UdpRelay;
  struct UdpFlow;

 private:
  using Handler = void (Egress::*)(int fd, uint32_t events);
  std::optional<monitor::Response> OnConnect(const monitor::Notification& n,
                                             const events::Event& base,
                                             std::vector<events::Event>& events);
  std::optional<monitor::Response> OnSend(const monitor::Notification& n, std::string_view syscall,
                                          const events::Event& base,
                                          std::vector<events::Event>& events);
  UniqueFd TakeSocket(const monitor::Notification& n, const events::Event& base, int fd,
                      int* error);
  std::optional<monitor::Response> ConnectLocal(const monitor::Notification& n, UniqueFd sock,
                                                const sockaddr_storage& addr, socklen_t len);
  std::optional<monitor::Response> StartBroker(const monitor::Notification& n,
                                               const events::Event& base, UniqueFd sock,
                                               const InetAddress& dest, const NetDecision& decision,
                                               std::vector<events::Event>& events);
  void CountForToolCall(const events::Event& base);
  events::Event Denied(const events::Event& base, std::string_view syscall, const InetAddress& addr,
                       std::string transport, const NetDecision& d);
  // Does a socket in the sandbox's network namespace listen on loopback `ip`:`port`? False
  // when its tables could not be read (then `listening` says nothing).
  bool SandboxListens(const policies::IpAddress& ip, uint16_t port, bool* listening) const;
  std::vector<std::string> NamesOf(const policies::IpAddress& ip) const;

  void Watch(int fd, uint32_t events, Handler handler);
  void Unwatch(int fd);
  void OnLocalConnected(int fd, uint32_t events);
  void OnUpstream(int fd, uint32_t events);
  void OnAccept(int fd, uint32_t events);
  void OnRelay(int fd, uint32_t events);
  void OnParked(int fd, uint32_t events);
  void OnKick(int fd, uint32_t events);
  void OnDns(int fd, uint32_t events);
  void OnDnsAccept(int fd, uint32_t events);
  void OnDnsTcp(int fd, uint32_t events);
  void OnDnsQuery(const uint8_t* query, size_t size, const DnsOrigin& origin);
  void DnsReply(const DnsOrigin& origin, const std::string& reply);
  void FlushDnsTcp(uint64_t id);
  void OnResolved(int fd, uint32_t events);

  void UpstreamDone(Connection& c, int error);
  void Park(Connection& c);
  bool Unpark(Connection& c);
  bool ConnectParked(Connection& c);
  bool ParkedEnds(const Connection& c, sockaddr_storage* local, socklen_t* local_len,
                  sockaddr_storage* park, socklen_t* park_len) const;
  bool FailParked(Connection& c, int error);
  int RawSocket(int family);
  void RememberFailedConnect(ino_t inode);
  UniqueFd ParkPeer(const sockaddr_storage& park, socklen_t len);
  // A socket of `type` bound to `addr` in the child's network namespace (the factory helper).
  UniqueFd FactorySocket(int type, const sockaddr_storage& addr, socklen_t len, int* error);
  // The relay for an allowed UDP destination, made on first use: 0, or why there is none.
  int EnsureUdpRelay(const events::Event& base, std::string_view syscall, const InetAddress& dest,
                     const NetDecision& decision);
  void OnUdpInner(int fd, uint32_t events);
  void OnUdpUpstream(int fd, uint32_t events);
  // Ends a flow: its event (`end`: idle, evicted, exit), its socket closed.
  void FinishUdpFlow(UdpRelay& relay, const std::string& key, std::string_view end);
  events::Event UdpFlowEvent(const UdpRelay& relay, const UdpFlow& f, std::string_view end);
  bool EvictUdpFlow();  // the least recently used one; false when there is none
  void OnUdpTimer(int fd, uint32_t events);  // ends idle flows
  void OpenFactoryNamespaces();
  void StartSocketFactory();
  void AttachChild(Connection& c);
  void StartRelay(Connection& c);
  void Pump(Connection& c);
  void Finish(Connection& c, int error, bool reset);
  void Kick();

  EgressConfig config_;
  NetContext context_;
  monitor::Unotify& unotify_;
  monitor::TargetMemory& memory_;
  events::BoundedEventQueue& queue_;
  UniqueFd epoll_;
  UniqueFd kick_;
  // The bound addresses of config_.sockets' relay, park and refuse sockets (v6: the IPv4
  // one, mapped, where the namespace has no ::1).
  LoopbackPair relay_, park_, refuse_;
  LoopbackPair dns_stub_;  // without namespaces: the DNS stub's TCP listener
  std::unordered_map<int, Handler> handlers_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<int, uint64_t> by_fd_;           // upstream/inner fd -> connection
  std::map<std::string, uint64_t> by_child_address_;  // the child's local address -> connection
  std::map<uint64_t, uint64_t> by_inode_;             // the child's socket inode -> connection
  std::set<uint64_t> more_;                           // connections with bytes left this turn
  // Blocking local connects waiting for completion: fd of our copy -> (notification, flags).
  struct LocalPending {
    UniqueFd sock;
    uint64_t notification = 0;
    int flags = 0;
  };
  std::unordered_map<int, LocalPending> local_;
  // The DNS stub's records: address -> names it was handed out for (bounded).
  std::map<policies::IpAddress, std::set<std::string>> names_;
  std::shared_ptr<Resolver> resolver_;
  UniqueFd factory_;  // with namespaces: the helper that makes sockets in the sandbox's netns
  UniqueFd factory_user_ns_, factory_net_ns_;  // pinned at start, until the helper starts
  pid_t factory_pid_ = -1;
  std::map<uint64_t, std::unique_ptr<DnsConnection>> dns_tcp_;  // by id; their fds in by_fd_
  std::set<std::string> dns_clients_;  // without namespaces: child sockets sent to the stub
  std::map<std::string, std::unique_ptr<UdpRelay>> udp_relays_;  // by "ip|port"
  std::unordered_map<int, UdpRelay*> udp_by_fd_;  // relay and flow upstream fds -> relay
  size_t udp_flows_ = 0;
  UniqueFd udp_timer_;  // a timerfd, armed while flows are open
  bool udp_timer_armed_ = false;
  EgressStats stats_;
  // Raw sockets in the child's network namespace (FailParked), made on first use.
  struct Raw {
    UniqueFd fd;
    bool tried = false;
  };
  Raw raw_v4_, raw_v6_;
  // Inodes of child sockets whose parked connect failed, until their next connect (bounded).
  std::set<ino_t> failed_connects_;
};

}  // namespace gander::network
