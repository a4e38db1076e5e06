// The sandbox init's life after the extension started: reap every child, forward signals to
// the whole tree, and when the extension exits kill what is left and exit with its status.
// Written against raw system calls only (Sys), no libc: the same code runs in gander's own
// image (the fallback, Sys through libc's syscall()) and in gander-init, the freestanding
// image the init execs so that it stops holding a copy of gander (init_main.cc).
#pragma once

namespace gander::init {

struct InitArgs {
  int extension = 0;                   // the extension's pid, as the init sees it
  bool namespaces = true;              // pid 1 of a pid namespace (else a child subreaper)
  int death_signal = 0;                // the PDEATHSIG armed before: kill the tree and exit 137
  const char* cgroup_procs = nullptr;  // the run's cgroup.procs without namespaces, or null
  // The sync socket to gander, or -1: the extension's exit code is reported there once the
  // tree is gone, before the init's own exit (whose teardown of the namespaces takes a while).
  int report_fd = -1;
};

// The report's wire form (sandbox/child_step.h, ChildReport: three host-order int32 fields,
// step, errno, detail): this step number, 0, the exit code. child_setup.cc checks the number
// against ChildStep::kExited; gander-init has no use for the rest of that header.
inline constexpr int kExitReportStep = 25;

// A system call: its raw result, -errno on failure.
long Sys(long nr, long a = 0, long b = 0, long c = 0, long d = 0);

// Never returns.
[[noreturn]] void RunInit(const InitArgs& args);

}  // namespace gander::init
