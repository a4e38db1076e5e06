// gander: a per-extension sandbox and monitor for stdio MCP servers.
#include "launcher/cli.h"

int main(int argc, char** argv) { return gander::launcher::Main(argc, argv); }
