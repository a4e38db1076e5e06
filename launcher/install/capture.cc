#include "launcher/install/capture.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/exec_signals.h"
#include "common/exec_strings.h"
#include "common/unique_fd.h"

extern char** environ;

namespace gander::launcher::install {

Result<std::string> CaptureOutput(const std::vector<std::string>& argv, const std::string& input) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd in_read(in[0]), in_write(in[1]);
  if (pipe2(out, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd out_read(out[0]), out_write(out[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  ResetSignalsInSpawn(&attr);  // SIGPIPE is ignored here once a helper has run
  const ExecStrings args(argv);
  pid_t pid = 0;
  int err = posix_spawnp(&pid, args.front(), &actions, &attr, args.get(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return Error{err, "spawn " + argv[0]};
  in_read.Reset();
  out_write.Reset();
  signal(SIGPIPE, SIG_IGN);  // a helper that exits early shows up as EPIPE
  // The body is small (well under a pipe's buffer): write it all, then read the answer.
  for (size_t done = 0; done < input.size();) {
    ssize_t n = write(in_write.get(), input.data() + done, input.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  in_write.Reset();
  std::string output;
  char buf[8192];
  for (ssize_t n; (n = read(out_read.get(), buf, sizeof(buf))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError(
        argv[0] + " exited with status " +
        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
  }
  return output;
}

}  // namespace gander::launcher::install
