// The supervisor loop: one poll loop that relays stdio between Goose and the extension,
// watches the sandbox init through its pidfd, turns gander's own signals and stdin EOF into
// the shutdown sequence Goose expects, and returns the extension's exit status.
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

namespace gander::monitor {

// Another fd the loop polls: the seccomp listener, the sandbox's sync socket. The callback
// runs with poll's revents when it is readable or hung up; it returns false to stop polling
// the fd (it must, on a hang-up with nothing left to read, or the loop would spin).
struct Watch {
  int fd = -1;
  std::function<bool(short revents)> on_ready;
};

struct SupervisorOptions {
  int client_in = 0;   // Goose -> gander
  int client_out = 1;  // gander -> Goose (nothing but the extension's bytes goes here)
  int child_in = -1;   // gander -> extension (owned: closed on client EOF)
  int child_out = -1;  // extension -> gander
  int pidfd = -1;      // the sandbox init
  // Without a pid namespace, SIGKILL of the init does not take the tree with it: the
  // extension's process group is killed too.
  pid_t kill_group = -1;
  // After stdin EOF: SIGTERM to the whole sandbox after term_after_eof_ms, SIGKILL after
  // kill_after_eof_ms; Goose kills at 3 s, so both stay well inside.
  int term_after_eof_ms = 1000;
  int kill_after_eof_ms = 2500;
  // After gander itself gets SIGTERM/SIGINT/SIGHUP: SIGTERM now, SIGKILL after this.
  int kill_after_signal_ms = 1500;
  std::vector<Watch> watches;
  // Runs once per loop turn, after the events of the turn (e.g. drain the event queue).
  std::function<void()> after_turn;
};

// Runs until the init exited and the extension's output is drained. Returns the exit status
// gander should exit with: the extension's, or 128+N when it was killed by signal N.
int Supervise(const SupervisorOptions& options);

}  // namespace gander::monitor
