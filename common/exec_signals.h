// What gander's signal state must not pass on to a program it starts: gander run holds
// SIGTERM, SIGINT, SIGHUP and the watch threads' wake signal for itself
// (monitor::HoldTerminationSignals) and ignores SIGPIPE, and an exec keeps both the mask and
// an ignored disposition. Called in a forked child just before its exec (async-signal-safe).
#pragma once

#include <signal.h>

namespace gander {

inline void ResetSignalsForExec() {
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace gander
