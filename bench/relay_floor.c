// relay_floor: the least a stdio relay can do, as a column of bench/startup.sh (issue 20's
// steady row). `relay_floor CMD ARGS...` runs CMD with its stdin and stdout on two pipes and
// copies bytes both ways with one blocking thread per direction: no parsing, no poll set, no
// monitor. Every wrapper that sees the JSON-RPC stream (gander, ToolHive's proxy, srt's) pays at
// least these two hand-offs per message; bubblewrap and firejail pass the descriptors through
// and pay none. The gap between this column and `bare` is the floor of a relay on the machine;
// the gap between gander and this column is what gander's own relay adds.
//
// Exits with CMD's status (128 + signal when it was killed).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_stdin = -1;

static void copy(int from, int to) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(from, buf, sizeof(buf));
    if (n <= 0) return;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(to, buf + done, (size_t)(n - done));
      if (w <= 0) return;
      done += w;
    }
  }
}

static void* upstream(void* unused) {
  (void)unused;
  copy(0, child_stdin);
  close(child_stdin);  // the client's EOF reaches the child
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: relay_floor CMD [ARGS...]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return perror("pipe2"), 1;
  pid_t pid = fork();
  if (pid < 0) return perror("fork"), 1;
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0) _exit(126);
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  child_stdin = in[1];
  pthread_t thread;
  if (pthread_create(&thread, NULL, upstream, NULL) != 0) return perror("pthread_create"), 1;
  pthread_detach(thread);
  copy(out[0], 1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return perror("waitpid"), 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
