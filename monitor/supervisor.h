// The supervisor loop: one poll loop that relays stdio between Goose and the extension,
// watches the sandbox init through its pidfd, turns gander's own signals and stdin EOF into
// the shutdown sequence Goose expects, and returns the extension's exit status.
#pragma once

#include <sys/types.h>

namespace gander::monitor {

struct SupervisorOptions {
  int client_in = 0;    // Goose -> gander
  int client_out = 1;   // gander -> Goose (nothing but the extension's bytes goes here)
  int child_in = -1;    // gander -> extension (owned: closed on client EOF)
  int child_out = -1;   // extension -> gander
  int pidfd = -1;       // the sandbox init
  // Without a pid namespace, SIGKILL of the init does not take the tree with it: the
  // extension's process group is killed too.
  pid_t kill_group = -1;
  // After stdin EOF: SIGTERM to the whole sandbox after term_after_eof_ms, SIGKILL after
  // kill_after_eof_ms; Goose kills at 3 s, so both stay well inside.
  int term_after_eof_ms = 1000;
  int kill_after_eof_ms = 2500;
  // After gander itself gets SIGTERM/SIGINT/SIGHUP: SIGTERM now, SIGKILL after this.
  int kill_after_signal_ms = 1500;
};

// Runs until the init exited and the extension's output is drained. Returns the exit status
// gander should exit with: the extension's, or 128+N when it was killed by signal N.
int Supervise(const SupervisorOptions& options);

}  // namespace gander::monitor
