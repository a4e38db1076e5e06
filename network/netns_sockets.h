// The sockets gander's network broker serves, made inside the network namespace the child's
// sockets live in: by the sandbox init between clone and exec, by the gVisor start, and by
// the socket factory's helper process (socket_factory.h) after it joined the sandbox's
// namespaces. Everything declared here is async-signal-safe (no allocation, no lock, no
// logging): it runs in a child of a process that may have threads.
#pragma once

#include <sys/socket.h>

#include "common/unique_fd.h"

namespace gander::network {

// The loopback sockets the broker serves, opened in the network namespace the child's sockets
// live in (the sandbox's, by its init; or the host's without one). Any may be invalid.
struct EgressSockets {
  // Listening TCP sockets the child's sockets are connected to (127.0.0.1 and ::1).
  UniqueFd relay_v4, relay_v6;
  // Listeners whose accept queue is full and never drained: a connect to one stays in SYN_SENT
  // (its SYNs are dropped), which is where a non-blocking connect waits while the broker
  // connects to the destination, so that poll() does not report it writable yet.
  UniqueFd park_v4, park_v6;
  // Bound, not listening: a connect to one is refused (RST). Where gander cannot fail a parked
  // connect in place (Egress::FailParked), how a refusal reaches a non-blocking connect's
  // SO_ERROR; and what a retried connect after a failure is answered with by the kernel.
  UniqueFd refuse_v4, refuse_v6;
  // The DNS stub's UDP socket and TCP listener, on 127.0.0.1:53 in the sandbox's namespace.
  // Without one: only the TCP listener, on a free port of host loopback (see nameservers).
  UniqueFd dns_udp, dns_tcp;
};

// Opens the relay, park and refuse sockets (not the DNS socket) on loopback in the calling
// process's network namespace; IPv6 ones only where ::1 exists. Async-signal-safe (the
// sandbox init calls it between clone and exec). Returns 0 or the errno of the IPv4 relay.
int OpenEgressSockets(EgressSockets& out);

// Brings up `lo` in the calling process's network namespace; returns 0 or the errno.
// (Also used by the gVisor backend between fork and exec.)
int BringUpLoopback();
// Opens the DNS stub's sockets (UDP and a TCP listener on 127.0.0.1:53) in the calling
// process's network namespace; left invalid where that fails. With `host_loopback` (no network
// namespace): only the TCP listener, on a free port.
void OpenDnsStub(EgressSockets& sockets, bool host_loopback = false);

// A TCP socket of `family` on loopback, any port, listening with `backlog` (or only bound when
// backlog < 0); -1 on failure. Async-signal-safe.
int LoopbackSocket(int family, int backlog, bool reuseport = false);

// A non-blocking TCP socket bound to `addr` with SO_REUSEPORT (beside a park listener); -1 on
// failure. Async-signal-safe.
int BoundSocket(const sockaddr_storage& addr, socklen_t len);

// Adds `addr`'s address (a /32 or /128) to the loopback interface (index 1 in a new network
// namespace) of the calling process's network namespace, so that a socket can be bound to it
// and the namespace routes datagrams for it locally. Async-signal-safe (the factory helper).
int AddLoopbackAddress(const sockaddr_storage& addr);

// A UDP socket bound to `addr` (the relay of an allowed destination, in the sandbox's network
// namespace), the address added to loopback first when it is not local. Async-signal-safe.
int DatagramRelaySocket(const sockaddr_storage& addr, socklen_t len);

// A listener whose accept queue is full for good: backlog 1 holds two connections (the kernel
// admits while the queue holds no more than the backlog), which are never accepted; every later
// SYN is dropped, whatever the syncookies setting. The two clients are closed at once: their
// connections stay queued. Async-signal-safe.
int ParkingListener(int family);

}  // namespace gander::network
