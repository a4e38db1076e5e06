// The table of escape attempts (gander_probe subcommands) the escape, audit-log and gVisor suites
// run, the test-name parameters over it, and how an attempt's outcome is judged: inside the
// sandbox it must fail; without gander (the control) it must succeed.
#pragma once

#include <errno.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "escape_fixture.h"

namespace gander::escape_suite {

constexpr int kForkbombChildren = 1500;  // above the default profile's cap of 1024
constexpr int kSigsysStatus = 128 + SIGSYS;

// ---------------------------------------------------------------------------------------------
// The attempts

enum class Control {
  kDirect,          // the unsandboxed attempt succeeds for any user
  kRootElseUserns,  // as root directly; as 65534 inside `unshare -Urm` (needs a capability)
  kRootOnly,        // only root can succeed unsandboxed (capability in the initial userns)
  kNone,            // no unsandboxed equivalent (the target exists only inside the sandbox)
};

// In degraded mode (no namespaces: Landlock + seccomp only), an attempt is
//   kRequired: on the brief's list, or denied by what the contract gives seccomp / layer 1
//   kDesign:   denied by DESIGN.md's promises (Landlock scoping, the connect broker)
enum class Degraded { kNotApplicable, kRequired, kDesign };

struct Attempt {
  const char* name;
  Argv args;  // probe arguments; {HOME}, {WS}, {OUT}, {TOOLS}, ... are expanded
  Control control = Control::kDirect;
  const char* why_no_control = "";  // for kRootOnly / kNone
  Degraded degraded = Degraded::kNotApplicable;
  bool expect_sigsys = false;    // must be killed by SIGSYS rather than fail with an errno
  const char* host_absent = "";  // a host path that must not exist after the sandboxed run
  bool judged_on_host = false;   // judged by host_absent only: the target may be private inside
                                 // the sandbox (a write there is not an escape)
  bool udp = false;              // judged by the host UDP listener, not the probe's status
  bool leak_fd = false;          // pass an inherited fd (9) to gander / the direct run
  bool stderr_tty = false;       // stderr is a pty, the controlling terminal of gander / the
                                 // direct run (the terminal an extension could inject into)
  bool degraded_only = false;    // an escape only where there are no namespaces
  bool hold_stdin = false;       // runs longer than the second gander waits after stdin's EOF
};

// clang-format off
inline const std::vector<Attempt>& Attempts() {
  constexpr auto kReq = Degraded::kRequired;
  constexpr auto kDesign = Degraded::kDesign;
  static const std::vector<Attempt> kAttempts = {
      // Files the default profile hides.
      {.name = "read_ssh_key", .args = {"read", "{HOME}/.ssh/id_rsa"}, .degraded = kReq},
      {.name = "list_ssh_dir", .args = {"list", "{HOME}/.ssh"}, .degraded = kReq},
      {.name = "read_aws_credentials", .args = {"read", "{HOME}/.aws/credentials"},
       .degraded = kReq},
      {.name = "read_goose_secrets", .args = {"read", "{HOME}/.config/goose/secrets.yaml"},
       .degraded = kReq},
      {.name = "read_key_via_workspace_symlink", .args = {"read", "{WS}/key-link"},
       .degraded = kReq},
      {.name = "read_outside_via_workspace_symlink", .args = {"read", "{WS}/outside-link"},
       .degraded = kReq},
      {.name = "read_outside_workspace", .args = {"read", "{OUT}/host-secret"}, .degraded = kReq},
      // Inside, pid 1 is the sandbox's init: its root must not be the host's root.
      {.name = "read_key_via_proc1_root", .args = {"read", "/proc/1/root{HOME}/.ssh/id_rsa"},
       .control = Control::kNone,
       .why_no_control = "/proc/1 means the sandbox's init only inside the sandbox"},
      {.name = "read_real_root_home", .args = {"read", "/root/.profile"},
       .control = Control::kRootOnly, .why_no_control = "/root is mode 0700", .degraded = kReq},
      {.name = "read_raw_block_device", .args = {"read", "{BLOCKDEV}"}, .control = Control::kNone,
       .why_no_control = "opening a disk needs root, and the host may refuse even root "
                         "(device cgroup, VM); inside, /dev must simply have no disk",
       .degraded = kReq},
      {.name = "write_outside_workspace", .args = {"write", "{OUT}/escaped"}, .degraded = kReq,
       .host_absent = "{OUT}/escaped"},
      {.name = "write_ssh_authorized_keys", .args = {"write", "{HOME}/.ssh/authorized_keys"},
       .degraded = kReq, .host_absent = "{HOME}/.ssh/authorized_keys"},
      // The command's own install prefix is readable, never writable.
      {.name = "write_into_command_prefix", .args = {"write", "{TOOLS}/planted-by-probe"},
       .degraded = kReq, .host_absent = "{TOOLS}/planted-by-probe"},
      // A host tmpfs shared by every process: persistence and a channel between sandboxes.
      {.name = "write_dev_shm", .args = {"write", "/dev/shm/{SHMNAME}"}, .degraded = kReq,
       .host_absent = "/dev/shm/{SHMNAME}", .judged_on_host = true},
      {.name = "inherited_fd", .args = {"fds"}, .degraded = kReq, .leak_fd = true},
      // Secrets in the environment (its own, and any /proc/PID/environ it can read).
      {.name = "env_openai_api_key", .args = {"env", "OPENAI_API_KEY", "{SECRET}"},
       .degraded = kReq},
      // Network and IPC.
      {.name = "tcp_host_loopback", .args = {"tcp", "127.0.0.1", "{PORT}"}, .degraded = kDesign},
      {.name = "udp_host_loopback", .args = {"udp", "127.0.0.1", "{UDP}"}, .degraded = kDesign,
       .udp = true},
      {.name = "unix_host_socket", .args = {"unix", "{SOCK}"}},
      // Egress: UDP past the DNS stub, a DNS query carrying data, raw and netlink sockets.
      {.name = "udp_remote", .args = {"udp", "192.0.2.1", "53"}, .control = Control::kNone,
       .why_no_control = "192.0.2.1 (TEST-NET-1) is unroutable: a sent datagram is the escape"},
      {.name = "dns_exfil_made_up_name", .args = {"dns-exfil"}, .control = Control::kNone,
       .why_no_control = "the host's resolver may be unreachable from this machine"},
      {.name = "packet_socket", .args = {"packet"}, .control = Control::kRootOnly,
       .why_no_control = "AF_PACKET needs CAP_NET_RAW"},
      // The floor compares socket()'s family as 32 bits, as the kernel reads it.
      {.name = "vsock_family_high_bits", .args = {"vsock-high-bits"}, .degraded = kReq},
      {.name = "unix_family_high_bits", .args = {"unix-high-bits", "{SOCK}"}, .degraded = kReq},
      // An MPTCP socket: with namespaces it only reaches the empty netns (the attempt is made
      // without them only).
      {.name = "mptcp_protocol_high_bits", .args = {"mptcp-high-bits"}, .degraded = kReq,
       .degraded_only = true},
      // The family flip between the broker's copy and the kernel's read, at a host listener.
      {.name = "connect_family_flip_race", .args = {"family-race", "127.0.0.1", "{PORT}", "1000"},
       .degraded = kReq, .hold_stdin = true},
      // Inbound listeners on the host's network (with namespaces they are in the sandbox's
      // own netns: made there, not an escape).
      {.name = "tcp_listen_autobind_host", .args = {"listen-autobind"}, .degraded = kReq,
       .degraded_only = true},
      {.name = "tcp_bind_any_host", .args = {"bind-any"}, .degraded = kReq,
       .degraded_only = true},
      // Code no grant names, run from memory.
      {.name = "memfd_execveat", .args = {"memfd-exec"}, .degraded = kReq},
      {.name = "netlink_sees_host_interfaces", .args = {"netlink"}, .control = Control::kNone,
       .why_no_control = "the host may have no interface but lo"},
      {.name = "abstract_host_socket", .args = {"abstract", "{ABSTRACT}"}, .degraded = kDesign},
      // Other processes.
      {.name = "signal_host_process", .args = {"kill", "{VICTIM}"}, .degraded = kDesign},
      {.name = "setns_host_userns", .args = {"setns", "/proc/{VICTIM}/ns/user"}},
      {.name = "ptrace", .args = {"ptrace"}, .degraded = kReq},
      {.name = "process_vm", .args = {"process_vm"}, .degraded = kReq},
      {.name = "forkbomb", .args = {"forkbomb", std::to_string(kForkbombChildren)}},
      // Syscalls the default filter denies, and what dropped capabilities stop.
      {.name = "nested_userns", .args = {"userns"}, .degraded = kReq},
      {.name = "mount", .args = {"mount", "{WS}/mnt"}, .control = Control::kRootElseUserns,
       .degraded = kReq},
      {.name = "umount_home", .args = {"umount", "{HOME}"}, .control = Control::kNone,
       .why_no_control = "$HOME is a mount point only inside the sandbox"},
      {.name = "chroot", .args = {"chroot", "{WS}"}, .control = Control::kRootElseUserns,
       .degraded = kReq},
      {.name = "bpf", .args = {"bpf"}, .control = Control::kRootOnly,
       .why_no_control = "kernel.unprivileged_bpf_disabled stops unprivileged users, even in a "
                         "user namespace",
       .degraded = kReq},
      {.name = "io_uring", .args = {"io_uring"}, .degraded = kReq},
      {.name = "keyctl", .args = {"keyctl"}, .degraded = kReq},
      {.name = "perf_event_open", .args = {"perf"}, .degraded = kReq},
      {.name = "open_by_handle_at", .args = {"open_by_handle", "{WS}/plain"},
       .control = Control::kRootOnly,
       .why_no_control = "open_by_handle_at needs CAP_DAC_READ_SEARCH in the initial user "
                         "namespace",
       .degraded = kReq},
      {.name = "tiocsti", .args = {"tiocsti"}, .degraded = kReq, .stderr_tty = true},
      {.name = "x32_abi", .args = {"x32"}, .degraded = kReq, .expect_sigsys = true},
      {.name = "int80_i386_abi", .args = {"int80"}, .degraded = kReq, .expect_sigsys = true},
  };
  return kAttempts;
}
// clang-format on

inline const Attempt& FindAttempt(const std::string& name) {
  for (const auto& a : Attempts()) {
    if (name == a.name) return a;
  }
  static const Attempt kMissing{.name = "missing", .args = {}, .control = Control::kNone};
  ADD_FAILURE() << "no attempt named " << name;
  return kMissing;
}

inline std::vector<std::string> AttemptNames(bool degraded_only) {
  std::vector<std::string> names;
  for (const auto& a : Attempts()) {
    if (!degraded_only && a.degraded_only) continue;
    if (!degraded_only || a.degraded != Degraded::kNotApplicable) names.push_back(a.name);
  }
  return names;
}

using AttemptParam = std::tuple<Who, std::string>;

// Both users and every attempt (or those of the degraded mode), for INSTANTIATE_TEST_SUITE_P
// (with AttemptParamName).
inline auto EveryUserAndAttempt(bool degraded_only) {
  return ::testing::Combine(::testing::Values(Who::kCurrent, Who::kNobody),
                            ::testing::ValuesIn(AttemptNames(degraded_only)));
}

inline std::string AttemptParamName(const ::testing::TestParamInfo<AttemptParam>& info) {
  return WhoName(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
}

// Checks the outcome of one attempt made inside the sandbox.
inline void ExpectAttemptFailed(const Attempt& a, World& world, const RunResult& r,
                                const std::string& context) {
  if (getenv("GANDER_TEST_VERBOSE")) std::cout << context << "\n";
  EXPECT_FALSE(r.timed_out) << context;
  EXPECT_EQ(r.out, "") << "gander or the sandbox wrote to stdout\n" << context;
  if (a.udp) {
    EXPECT_FALSE(world.UdpReceived()) << "the host UDP listener received the probe's datagram\n"
                                      << context;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << context;
  } else if (a.judged_on_host) {
    EXPECT_TRUE(r.status == 0 || r.status == 1) << context;
  } else if (a.expect_sigsys) {
    EXPECT_EQ(r.status, kSigsysStatus) << "a foreign-ABI syscall must kill the process with "
                                          "SIGSYS (exit 159)\n"
                                       << context;
  } else {
    EXPECT_EQ(r.status, 1) << "the attempt must run and fail (probe exit 1); 0 means it "
                              "SUCCEEDED, other values mean the probe did not run as planned\n"
                           << context;
    EXPECT_NE(r.err.find("probe: "), std::string::npos) << "the probe did not run\n" << context;
  }
  if (*a.host_absent) {
    fs::path p = world.Expand(a.host_absent);
    EXPECT_FALSE(fs::exists(fs::symlink_status(p))) << p << " appeared on the host\n" << context;
  }
}

// The same attempt without gander must succeed, or the sandboxed failure proves nothing.
inline void CheckControl(const Attempt& a, Who who,
                         std::function<RunResult(const Argv&, const Argv&, int, bool)> direct,
                         World& world) {
  Argv wrapper;
  switch (a.control) {
    case Control::kNone:
      std::cout << "[ note ] no unsandboxed control for " << a.name << ": " << a.why_no_control
                << "\n";
      return;
    case Control::kRootOnly:
      if (who != Who::kCurrent || geteuid() != 0) {
        std::cout << "[ note ] no unsandboxed control for " << a.name << " as " << WhoName(who)
                  << ": " << a.why_no_control << "\n";
        return;
      }
      break;
    case Control::kRootElseUserns:
      if (geteuid() != 0 || who == Who::kNobody) {
        wrapper = {"/usr/bin/unshare", "--user", "--map-root-user", "--mount", "--"};
        std::cout << "[ note ] control for " << a.name << " as " << WhoName(who)
                  << " runs inside `unshare -Urm` (needs a capability)\n";
      }
      break;
    case Control::kDirect:
      break;
  }
  RunResult r = direct(wrapper, a.args, a.leak_fd ? world.leak_fd : -1, a.stderr_tty);
  std::string context = "unsandboxed control: " + r.Describe();
  if (a.udp) {
    bool got = world.UdpReceived();
    if (!got)
      GTEST_SKIP() << "inconclusive: the unsandboxed UDP datagram did not arrive\n" << context;
    return;
  }
  if (std::string(a.name) == "int80_i386_abi" && r.status == 128 + SIGSEGV) {
    GTEST_SKIP() << "the kernel has no IA32 emulation (int $0x80 faults unsandboxed)\n" << context;
  }
  if (r.status != 0) {
    GTEST_SKIP() << "inconclusive: the attempt also fails WITHOUT gander for " << WhoName(who)
                 << " (host configuration?), so the sandboxed failure proves nothing\n"
                 << context;
  }
}

// The base of the suites that make each attempt in a sandbox: the attempt run through gander
// with `flags`, and its unsandboxed control (CheckControl).
class AttemptTest : public SandboxTest {
 protected:
  RunResult RunAttempt(const Attempt& a, const Argv& flags, bool hold_stdin) {
    return Gander(flags, ProbeCommand(a.args), w().ws, a.leak_fd ? w().leak_fd : -1, a.stderr_tty,
                  hold_stdin);
  }

  void CheckAttemptControl(const Attempt& a) {
    CheckControl(
        a, who_,
        [this](const Argv& wr, const Argv& args, int fd, bool tty) {
          return Direct(wr, args, fd, tty);
        },
        w());
  }
};

// Attempts whose target this machine may not have.
inline std::string MissingTarget(const Attempt& a, const World& w) {
  if (a.name == std::string("read_raw_block_device") && w.block_device.empty())
    return "no disk block device found under /sys/block";
  if (a.name == std::string("read_real_root_home") && access("/root/.profile", F_OK) != 0 &&
      errno == ENOENT)
    return "/root/.profile does not exist";
  return "";
}

}  // namespace gander::escape_suite
