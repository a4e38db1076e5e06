// The socket factory: with namespaces, a helper process that joins the sandbox's user and
// network namespaces (as their owner, gander may) and answers each request with a socket made
// there (Egress::StartSocketFactory forks it, on the first request).
//
// The protocol, over a SOCK_SEQPACKET pair, one message each way per request:
//   request: `int type` (SOCK_STREAM, SOCK_DGRAM or SOCK_RAW), then the socket address, whose
//            length is the rest of the message;
//   answer:  `int errno` (0: made), with the socket passed (SCM_RIGHTS) when it is 0.
// SOCK_STREAM: a non-blocking TCP socket bound to the address with SO_REUSEPORT (BoundSocket:
// the peer of a parked connect); SOCK_DGRAM: the UDP relay of an allowed destination, bound to
// its address (DatagramRelaySocket); SOCK_RAW: an IPPROTO_RAW socket of the address's family
// (FailParked). A message no longer than the type, or the pair closing, ends the helper.
#pragma once

#include <sys/socket.h>

#include "common/unique_fd.h"

namespace gander::network {

// Asks the helper at the other end of `channel` for a socket; invalid, with `*error` the
// helper's errno (or EIO when the channel failed), when there is none.
UniqueFd RequestFactorySocket(int channel, int type, const sockaddr_storage& addr, socklen_t len,
                              int* error);

// The helper's side: answers requests on `channel` until it closes or a request is too short.
// Async-signal-safe (the helper is forked from a process that may have threads).
void ServeFactoryRequests(int channel);

}  // namespace gander::network
