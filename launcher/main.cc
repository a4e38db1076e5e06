// gander: a per-extension sandbox and monitor for stdio MCP servers.
#include <malloc.h>

#include "launcher/cli.h"

int main(int argc, char** argv) {
  // One malloc arena for every thread: gander's few threads take turns under one lock anyway,
  // and a thread's first allocation would otherwise map a fresh 64 MiB arena, on the path of
  // the extension's first seccomp notification (the listener's thread starts with the
  // sandbox).
  mallopt(M_ARENA_MAX, 1);
  return gander::launcher::Main(argc, argv);
}
