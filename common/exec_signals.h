// What gander's signal state must not pass on to a program it starts: gander run holds
// SIGTERM, SIGINT, SIGHUP and the watch threads' wake signal for itself
// (monitor::HoldTerminationSignals), several commands ignore SIGPIPE, and an exec keeps both
// the mask and an ignored disposition. Every program gander starts gets default dispositions
// and an empty mask, as Goose's own children do: ResetSignalsForExec in a forked child just
// before its exec (async-signal-safe), ResetSignalsInSpawn on a posix_spawn's attributes.
#pragma once

#include <signal.h>
#include <spawn.h>

namespace gander {

inline void ResetSignalsForExec() {
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Adds the same reset to `attr` (initialised by the caller), keeping flags already set.
inline void ResetSignalsInSpawn(posix_spawnattr_t* attr) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setsigmask(attr, &none);
  short flags = 0;
  posix_spawnattr_getflags(attr, &flags);
  posix_spawnattr_setflags(attr, flags | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

}  // namespace gander
