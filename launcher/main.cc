// gander: a per-extension sandbox and monitor for stdio MCP servers.
#include <malloc.h>

#include "launcher/cli.h"

int main(int argc, char** argv) {
  // One malloc arena for every thread. The seccomp listener's thread would otherwise make its
  // own at its first allocation (a 128 MiB reservation, trimmed, and fresh pages to fault in),
  // while deciding the extension's execve, which waits; it takes the supervisor's lock for
  // each notification anyway, so the arena's lock adds no contention worth a second arena.
  mallopt(M_ARENA_MAX, 1);
  return gander::launcher::Main(argc, argv);
}
