// The extension's file descriptor table, grown before its execve.
//
// The kernel's table starts at 64 slots and doubles (to 128, 256...) when a descriptor past
// its end is opened. In a process with more than one thread (node: libuv's thread pool, V8's
// workers) every growth waits for an RCU grace period (expand_fdtable: synchronize_rcu while
// the table is shared), and every thread that opens a file meanwhile waits with it: ~11 ms
// per growth on a 2-vCPU VM, twice for server-filesystem's start (it holds ~140 files open at
// once while its ES modules load). A process started from a shell or Goose usually inherits
// a table grown already; the sandbox's extension starts with a fresh one (the init's, which
// closed everything), so it paid those waits, bare and bubblewrap did not.
#pragma once

namespace gander::sandbox {

// How many descriptors PresizeFdTable makes room for (the table's size is FDSize in
// /proc/PID/status: 512 after it on Linux 6.18; ~8 KiB of kernel memory).
inline constexpr int kPresizedFds = 512;

// Grows the calling process's descriptor table to hold kPresizedFds descriptors (fewer when
// RLIMIT_NOFILE is lower), while it has one thread, so that no grace period is waited for:
// a dup to the top slot, closed at once. Opens nothing that outlives the call; async-signal-
// safe (for the vfork child before execve). Best effort: a refusal changes nothing else.
void PresizeFdTable() noexcept;

}  // namespace gander::sandbox
