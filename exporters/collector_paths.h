// Where the collector lives on the host, shared by `gander collect` and the launchers: the
// socket directory, the state file, the default metrics port, and starting a collector.
//
// The socket sits in a directory only the user can enter (0700): the socket file's own mode is
// not honoured everywhere, the directory's is. Nothing inside a sandbox can reach it: the
// sandbox has its own mount view (no $XDG_RUNTIME_DIR, a private $HOME), and Landlock's scoping
// plus the seccomp socket rules cover the no-namespace fallback.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace gander::exporters {

// 9477: not assigned by IANA and not in Prometheus's list of default exporter ports in use
// (9464 is OpenTelemetry's).
inline constexpr int kDefaultMetricsPort = 9477;
inline constexpr const char* kDefaultMetricsListen = "127.0.0.1:9477";

// $XDG_RUNTIME_DIR/gander when XDG_RUNTIME_DIR is set, else the state directory below.
std::string CollectorRuntimeDir();
// $XDG_STATE_HOME/gander, default ~/.local/state/gander.
std::string GanderStateDir();
// CollectorRuntimeDir()/collector.sock.
std::string DefaultCollectorSocket();
// The lock file next to a socket: held by the running collector for its whole life.
std::string CollectorLockPath(const std::string& socket_path);
// Where the collector records the address it serves /metrics on: SOCKET.metrics, in the
// socket's 0700 directory, so that `gander status` finds this user's collector and no other.
std::string MetricsAddressPath(const std::string& socket_path);
// GanderStateDir()/collector-state.json.
std::string DefaultCollectorStatePath();
// GanderStateDir()/audit/NAME.jsonl (the same default `gander run` uses).
std::string DefaultAuditLogFor(const std::string& extension);

// Creates `dir` and its parents (0700) and checks that it is a directory (not a symlink) owned
// by us with no group or other access; tightens the mode when it is ours but too open.
Status EnsurePrivateDir(const std::string& dir);

// The collector executable: PREFIX/libexec/gander/gander-collect for an installed gander
// (PREFIX/bin/gander), else gander-collect next to the running binary (the build tree).
std::string CollectorBinary();
// What a launcher runs to start a collector: CollectorBinary() logging to
// GanderStateDir()/collector.log (a detached collector has no stderr).
std::vector<std::string> DefaultCollectorStartCommand();

// Starts argv[0] with argv, detached: a grandchild in its own session (not in the launcher's
// process group, which Goose kills), stdio on /dev/null, no fds inherited, and a minimal
// environment (HOME, PATH, XDG_*, LANG) so that the collector never holds the launcher's
// secrets. Does not wait for it, but does learn whether its execve worked: a command that
// cannot be executed is an error (the launcher falls back to the audit log at once).
Status SpawnDetached(const std::vector<std::string>& argv);

}  // namespace gander::exporters
