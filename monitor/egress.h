// The egress broker and DNS stub: the kernel side of the network decisions (network_decision.h).
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
// Everything runs in the supervisor's poll loop through one epoll fd (fd()): no thread, no
// lock, never blocking; each turn moves at most a bounded number of bytes per connection and
// wakes itself (an eventfd) when more is ready. The only threads are host name lookups for the
// DNS stub (getaddrinfo has no non-blocking form); their results come back through an eventfd.
#pragma once

#include <sys/socket.h>

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
#include "monitor/event_queue.h"
#include "monitor/network_decision.h"
#include "monitor/network_handler.h"
#include "policies/network_matcher.h"

namespace gander::monitor {

struct EgressConfig {
  std::string extension;
  policies::NetworkMatcher matcher;
  bool namespaces = true;
  int deny_errno = 111;  // ECONNREFUSED
  // Listening TCP sockets the child's sockets are connected to: 127.0.0.1 and ::1 inside the
  // sandbox's network namespace (or host loopback without one). relay_v6 may be invalid.
  UniqueFd relay_v4;
  UniqueFd relay_v6;
  // The DNS stub's UDP socket, bound to 127.0.0.1:53 in the sandbox's namespace; may be invalid.
  UniqueFd dns_udp;
  // A non-blocking connect waits this long for the destination before answering EINPROGRESS,
  // so that a quick refusal is reported by connect() as without gander. After it, a failure
  // of the destination shows as a reset of the established connection.
  std::chrono::milliseconds nonblocking_grace{100};
};

struct EgressStats {
  uint64_t brokered = 0;  // connections relayed
  uint64_t denied = 0;
  uint64_t dns_queries = 0;
  uint64_t dns_refused = 0;
  size_t open = 0;
};

class Egress final : public NetworkHandler {
 public:
  Egress(EgressConfig config, Unotify& unotify, TargetMemory& memory, BoundedEventQueue& queue);
  ~Egress() override;
  Egress(const Egress&) = delete;
  Egress& operator=(const Egress&) = delete;

  // Poll this for POLLIN; then call OnReady(), which never blocks.
  int fd() const { return epoll_.get(); }
  void OnReady();

  std::optional<Response> OnSyscall(const Notification& n, std::string_view syscall,
                                    const Event& base, std::vector<Event>& events) override;
  EgressStats stats() const;

  // Once the extension is gone: relays what the destinations still send (the child's ends
  // read EOF now) for up to `grace`, so connections that were closing end on their own with
  // exact counts; then ends the rest. Every connection has emitted its event on return.
  void Shutdown(std::chrono::milliseconds grace);

  struct Connection;
  struct Resolver;

 private:
  using Handler = void (Egress::*)(int fd, uint32_t events);
  std::optional<Response> OnConnect(const Notification& n, const Event& base,
                                    std::vector<Event>& events);
  std::optional<Response> OnSend(const Notification& n, std::string_view syscall, const Event& base,
                                 std::vector<Event>& events);
  UniqueFd TakeSocket(const Notification& n, const Event& base, int fd, int* error);
  std::optional<Response> ConnectLocal(const Notification& n, UniqueFd sock,
                                       const sockaddr_storage& addr, socklen_t len);
  std::optional<Response> StartBroker(const Notification& n, const Event& base, UniqueFd sock,
                                      const InetAddress& dest, const NetDecision& decision,
                                      std::vector<Event>& events);
  Event Denied(const Event& base, std::string_view syscall, const InetAddress& addr,
               std::string transport, const NetDecision& d);
  std::vector<std::string> NamesOf(const policies::IpAddress& ip) const;

  void Watch(int fd, uint32_t events, Handler handler);
  void Unwatch(int fd);
  void OnLocalConnected(int fd, uint32_t events);
  void OnUpstream(int fd, uint32_t events);
  void OnAccept(int fd, uint32_t events);
  void OnRelay(int fd, uint32_t events);
  void OnTimer(int fd, uint32_t events);
  void OnKick(int fd, uint32_t events);
  void OnDns(int fd, uint32_t events);
  void OnResolved(int fd, uint32_t events);

  void UpstreamDone(Connection& c, int error);
  void AttachChild(Connection& c);
  void StartRelay(Connection& c);
  void Pump(Connection& c);
  void Finish(Connection& c, int error, bool reset);
  void ArmTimer();
  void Kick();

  EgressConfig config_;
  NetContext context_;
  Unotify& unotify_;
  TargetMemory& memory_;
  BoundedEventQueue& queue_;
  UniqueFd epoll_;
  UniqueFd timer_;
  UniqueFd kick_;
  sockaddr_storage relay_v4_addr_{};
  sockaddr_storage relay_v6_addr_{};
  std::unordered_map<int, Handler> handlers_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<int, uint64_t> by_fd_;           // upstream/inner fd -> connection
  std::map<std::string, uint64_t> by_child_address_;  // the child's local address -> connection
  std::map<uint64_t, uint64_t> by_inode_;             // the child's socket inode -> connection
  std::multimap<int64_t, uint64_t> deadlines_;        // grace deadline (monotonic ns) -> id
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
  EgressStats stats_;
};

// The DNS wire format, as much as the stub needs. Pure, for tests.
namespace dns {
struct Question {
  uint16_t id = 0;
  uint16_t flags = 0;
  std::string name;  // lower case, no final dot
  uint16_t qtype = 0;
  uint16_t qclass = 0;
  size_t question_end = 0;  // offset just past the question
};
constexpr uint16_t kTypeA = 1;
constexpr uint16_t kTypeAAAA = 28;
constexpr int kNoError = 0, kFormErr = 1, kServFail = 2, kNxDomain = 3, kRefused = 5;
std::optional<Question> ParseQuery(const uint8_t* data, size_t size);
// A response to `query` (its header and question copied) with `rcode` and the addresses of
// the question's type as answers.
std::string BuildResponse(const uint8_t* query, const Question& q, int rcode,
                          const std::vector<policies::IpAddress>& answers);
}  // namespace dns

}  // namespace gander::monitor
