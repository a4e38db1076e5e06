#include "policies/denied_syscalls.h"

#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>

namespace gander::policies {
namespace {

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

// Refused outright with EPERM. Names unknown on this architecture are skipped by the filter.
constexpr std::string_view kAlways[] = {
#include "policies/denied_syscall_names.inc"
};

// socket()'s family is an int: the kernel drops the upper 32 bits of the register, so a
// comparison of all 64 would let AF_VSOCK | 1 << 32 through as AF_VSOCK.
constexpr uint64_t kIntArg = 0xffffffffu;

constexpr uint64_t kMfdNoexecSeal = 0x0008U;  // MFD_NOEXEC_SEAL, Linux 6.3

// Namespace-creating clone flags; CLONE_NEWUSER matters most (nested user namespaces are the
// usual kernel exploit entry), the rest are refused alongside it. One pattern per flag:
// libseccomp compares (arg & mask) == value and ORs rules together.
std::vector<ArgPattern> NamespaceFlags() {
  std::vector<ArgPattern> patterns;
  for (uint64_t flag : {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                        CLONE_NEWUTS, CLONE_NEWCGROUP}) {
    patterns.push_back({0, flag, flag});
  }
  return patterns;
}

// socket() patterns refusing all but plain TCP streams (libseccomp ORs MASKED_EQ patterns, so
// "not in {0, IPPROTO_TCP}" is spelled as the values that differ from both).
std::vector<ArgPattern> OnlyPlainTcpStreams() {
  std::vector<ArgPattern> patterns{{0, kIntArg, AF_UNIX}};
  // type & SOCK_TYPE_MASK (0xf) must be SOCK_STREAM (1): refuse 0 and any of bits 1..3.
  patterns.push_back({1, 0xf, 0});
  for (uint64_t bit : {0x2, 0x4, 0x8}) patterns.push_back({1, bit, bit});
  // protocol must be 0 or IPPROTO_TCP (6 = bits 1 and 2): refuse any other bit, and the
  // values of bits 1 and 2 alone (2, 4).
  static_assert(IPPROTO_TCP == 6);
  for (int bit = 0; bit < 32; ++bit) {
    if (bit == 1 || bit == 2) continue;
    patterns.push_back({2, uint64_t{1} << bit, uint64_t{1} << bit});
  }
  patterns.push_back({2, kIntArg, 2});
  patterns.push_back({2, kIntArg, 4});
  return patterns;
}

}  // namespace

std::vector<DeniedSyscall> DeniedSyscalls(const DenyOptions& options) {
  std::vector<DeniedSyscall> table;
  for (std::string_view name : kAlways) table.push_back({name, EPERM, {}, name});
  // clone3 keeps its flags in memory the filter cannot read: ENOSYS makes libc use clone.
  table.push_back({"clone3", ENOSYS, {}, "clone3", /*silent=*/true});
  table.push_back({"clone", EPERM, NamespaceFlags(), "clone(CLONE_NEW*)"});
  table.push_back({"unshare", EPERM, NamespaceFlags(), "unshare(CLONE_NEW*)"});
  // Terminal injection: pushing bytes into a terminal's input queue, or console control.
  table.push_back({"ioctl",
                   EPERM,
                   {{1, kIntArg, TIOCSTI}, {1, kIntArg, TIOCLINUX}},
                   "ioctl(TIOCSTI/TIOCLINUX)"});
  // Socket families with no business in an MCP server, some of which reach past the network
  // namespace (vsock to the hypervisor, bluetooth, packet sockets on devices).
  {
    std::vector<ArgPattern> families;
    for (uint64_t family : {AF_PACKET, AF_VSOCK,      AF_BLUETOOTH, AF_CAN,  AF_TIPC,    AF_RDS,
                            AF_LLC,    AF_IEEE802154, AF_XDP,       AF_KCM,  AF_QIPCRTR, AF_SMC,
                            AF_ATMPVC, AF_ATMSVC,     AF_APPLETALK, AF_X25,  AF_AX25,    AF_NETROM,
                            AF_ROSE,   AF_DECnet,     AF_IPX,       AF_IRDA, AF_NFC,     AF_PPPOX,
                            AF_ISDN,   AF_PHONET,     AF_CAIF,      AF_IUCV, AF_RXRPC}) {
      families.push_back({0, kIntArg, family});
    }
    table.push_back(
        {"socket", EAFNOSUPPORT, std::move(families), "socket(AF_PACKET/AF_VSOCK/...)"});
  }
  // TCP Fast Open connects from sendto/sendmsg, past the connect broker.
  table.push_back(
      {"sendto", EOPNOTSUPP, {{3, MSG_FASTOPEN, MSG_FASTOPEN}}, "sendto(MSG_FASTOPEN)"});
  table.push_back(
      {"sendmsg", EOPNOTSUPP, {{2, MSG_FASTOPEN, MSG_FASTOPEN}}, "sendmsg(MSG_FASTOPEN)"});
  table.push_back(
      {"sendmmsg", EOPNOTSUPP, {{3, MSG_FASTOPEN, MSG_FASTOPEN}}, "sendmmsg(MSG_FASTOPEN)"});
  if (options.deny_host_sockets && options.inet_brokered) {
    // Only plain TCP stream sockets then, which Landlock confines and the broker decides: a
    // datagram, SCTP or MPTCP socket could send past the broker by rewriting a non-inet
    // address between the broker's copy and the kernel's read, and Landlock's TCP rules do
    // not cover MPTCP or SCTP. So: no AF_UNIX, no type but SOCK_STREAM, no protocol but 0 and
    // IPPROTO_TCP, each an int compared on its 32 bits.
    table.push_back({"socket", EACCES, OnlyPlainTcpStreams(), "socket(AF_UNIX, not TCP)"});
  } else if (options.deny_host_sockets) {
    table.push_back({"socket",
                     EACCES,
                     {{0, kIntArg, AF_INET}, {0, kIntArg, AF_INET6}, {0, kIntArg, AF_UNIX}},
                     "socket(AF_INET/AF_INET6/AF_UNIX)"});
  }
  if (options.deny_host_sockets) {
    // Without a network namespace a listener is on the host's network: listen() on an
    // unbound TCP socket autobinds on 0.0.0.0 (past Landlock's bind rule, which autobind does
    // not consult), and the extension would serve the LAN. No policy key allows inbound
    // listeners, so none are made; bind() itself is Landlock's (every TCP bind refused).
    table.push_back({"listen", EACCES, {}, "listen() without a network namespace"});
  }
  if (options.deny_exec_memfd) {
    // flags is an unsigned int; the one bit tested lies in its low 32.
    table.push_back({"memfd_create",
                     EACCES,
                     {{1, kMfdNoexecSeal, 0}},
                     "memfd_create(without MFD_NOEXEC_SEAL)"});
  }
  return table;
}

bool Matches(const DeniedSyscall& entry, const uint64_t args[6]) {
  if (entry.any_of.empty()) return true;
  for (const ArgPattern& p : entry.any_of) {
    if ((args[p.arg] & p.mask) == p.value) return true;
  }
  return false;
}

}  // namespace gander::policies
