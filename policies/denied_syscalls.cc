#include "policies/denied_syscalls.h"

#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>

namespace gander::monitor {
namespace {

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

// Refused outright with EPERM. Names unknown on this architecture are skipped by the filter.
// clang-format off
constexpr std::string_view kAlways[] = {
    // debugging and cross-process memory
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    // filesystem namespace changes
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "setns",
    // kernel attack surface
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "open_by_handle_at", "name_to_handle_at", "keyctl", "add_key",
    "request_key", "lookup_dcookie", "fanotify_init", "quotactl", "quotactl_fd",
    // machine-wide state
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "acct",
    "syslog", "vhangup", "iopl", "ioperm", "uselib", "nfsservctl", "sethostname",
    "setdomainname",
};
// clang-format on

// socket()'s family is an int: the kernel drops the upper 32 bits of the register, so a
// comparison of all 64 would let AF_VSOCK | 1 << 32 through as AF_VSOCK.
constexpr uint64_t kIntArg = 0xffffffffu;

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
                   {{1, 0xffffffffu, TIOCSTI}, {1, 0xffffffffu, TIOCLINUX}},
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
    // Only TCP then, which Landlock confines: a datagram or SCTP socket could send past the
    // broker by rewriting a non-inet address between the broker's copy and the kernel's read
    // (the broker lets non-inet addresses through), with no empty namespace to land in.
    table.push_back({"socket",
                     EACCES,
                     {{0, ~0ULL, AF_UNIX},
                      {1, 0xf, SOCK_DGRAM},
                      {1, 0xf, SOCK_RAW},
                      {1, 0xf, SOCK_SEQPACKET},
                      {2, ~0ULL, IPPROTO_SCTP},
                      {2, ~0ULL, 262 /* IPPROTO_MPTCP */}},
                     "socket(AF_UNIX, datagram, raw, SCTP, MPTCP)"});
  } else if (options.deny_host_sockets) {
    table.push_back({"socket",
                     EACCES,
                     {{0, kIntArg, AF_INET}, {0, kIntArg, AF_INET6}, {0, kIntArg, AF_UNIX}},
                     "socket(AF_INET/AF_INET6/AF_UNIX)"});
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

}  // namespace gander::monitor
