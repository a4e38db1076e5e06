/* gander_egress_probe: a static program that knows nothing of proxies, for the egress tests.
 *
 * Linked with -static: no dynamic loader, no libc hook, no proxy variable read; it talks to
 * the kernel directly, so only the broker (seccomp user notification) can confine it.
 *
 *   gander_egress_probe get IP PORT PATH
 *       connect, send "GET PATH HTTP/1.0", read the response (up to 1 MiB); prints "get: ok
 * status=<code> bytes=<n>" (exit 0) or "get: connect: <errno name>" (exit 1). gander_egress_probe
 * race ALLOWED_IP FORBIDDEN_IP PORT ATTEMPTS [until-forbidden|until-both] a second thread
 * rewrites the sockaddr's address between ALLOWED_IP and FORBIDDEN_IP in a tight loop while this
 * thread connects with it, ATTEMPTS times (with until-forbidden: until a connection reached
 * FORBIDDEN_IP, at most ATTEMPTS tries; with until-both: at least ATTEMPTS tries, then on until
 * one connect succeeded and one failed, at most 25 times ATTEMPTS: on a loaded machine the
 * rewriting thread can sit out hundreds of tries, and both outcomes are what a test checks). Prints "race: attempts=<n> connected=<n> failed=<n> peer_allowed=<n>
 * peer_forbidden=<n>"; the peer counts come from getpeername (meaningful without gander only:
 * through the broker the peer is its relay). Output goes to stdout; exit 2 on usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char* ErrnoName(int e) {
  switch (e) {
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENETUNREACH:
      return "ENETUNREACH";
    case EHOSTUNREACH:
      return "EHOSTUNREACH";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case ECONNRESET:
      return "ECONNRESET";
    case EINVAL:
      return "EINVAL";
    default:
      return strerror(e);
  }
}

static int Address(const char* ip, const char* port, struct sockaddr_in* out) {
  memset(out, 0, sizeof(*out));
  out->sin_family = AF_INET;
  out->sin_port = htons((unsigned short)atoi(port));
  return inet_pton(AF_INET, ip, &out->sin_addr) == 1;
}

static int Get(const char* ip, const char* port, const char* path) {
  struct sockaddr_in a;
  if (!Address(ip, port, &a)) return 2;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr*)&a, sizeof(a)) != 0) {
    printf("get: connect: %s\n", ErrnoName(errno));
    return 1;
  }
  char request[512];
  int len = snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, ip);
  if (write(fd, request, (size_t)len) != len) {
    printf("get: write: %s\n", ErrnoName(errno));
    return 1;
  }
  /* To the end of the body (Content-Length; the server may keep the connection open) or EOF. */
  static char response[1 << 20];
  size_t total = 0;
  long long want = -1;
  ssize_t n;
  while ((want < 0 || (long long)total < want) &&
         (n = read(fd, response + total, sizeof(response) - total)) > 0) {
    total += (size_t)n;
    response[total < sizeof(response) ? total : sizeof(response) - 1] = 0;
    char* end = strstr(response, "\r\n\r\n");
    char* length = strstr(response, "Content-Length:");
    if (want < 0 && end && length && length < end) {
      want = (end + 4 - response) + atoll(length + strlen("Content-Length:"));
    }
    if (total == sizeof(response)) break;
  }
  close(fd);
  int status = 0;
  if (sscanf(response, "HTTP/1.%*d %d", &status) != 1) status = 0;
  printf("get: ok status=%d bytes=%zu\n", status, total);
  return status == 200 ? 0 : 1;
}

/* The race: `target` is read by the kernel (or the supervisor) while `Flip` rewrites its
 * address; a 32-bit aligned store, so the address is always one of the two, never a mix. */
static struct sockaddr_in target;
static uint32_t flip_values[2];
static volatile int stop;

static void* Flip(void* unused) {
  (void)unused;
  for (unsigned i = 0; !stop; ++i) {
    __atomic_store_n(&target.sin_addr.s_addr, flip_values[i & 1], __ATOMIC_RELAXED);
  }
  return NULL;
}

enum Until { kCount, kForbidden, kBoth };

static int Race(const char* allowed, const char* forbidden, const char* port, long attempts,
                enum Until until) {
  struct sockaddr_in a, f;
  if (!Address(allowed, port, &a) || !Address(forbidden, port, &f) || attempts <= 0) return 2;
  target = a;
  flip_values[0] = a.sin_addr.s_addr;
  flip_values[1] = f.sin_addr.s_addr;
  pthread_t thread;
  if (pthread_create(&thread, NULL, Flip, NULL) != 0) return 2;
  long tried = 0, connected = 0, failed = 0, peer_allowed = 0, peer_forbidden = 0;
  const long most = until == kBoth ? 25 * attempts : attempts;
  while (tried < most) {
    if (tried >= attempts && (until != kBoth || (connected > 0 && failed > 0))) break;
    ++tried;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      ++failed;
      continue;
    }
    if (connect(fd, (struct sockaddr*)&target, sizeof(target)) == 0) {
      ++connected;
      struct sockaddr_in peer;
      socklen_t len = sizeof(peer);
      if (getpeername(fd, (struct sockaddr*)&peer, &len) == 0) {
        if (peer.sin_addr.s_addr == a.sin_addr.s_addr) ++peer_allowed;
        if (peer.sin_addr.s_addr == f.sin_addr.s_addr) ++peer_forbidden;
      }
    } else {
      ++failed;
    }
    close(fd);
    if (until == kForbidden && peer_forbidden > 0) break;
  }
  stop = 1;
  pthread_join(thread, NULL);
  printf("race: attempts=%ld connected=%ld failed=%ld peer_allowed=%ld peer_forbidden=%ld\n", tried,
         connected, failed, peer_allowed, peer_forbidden);
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 5 && strcmp(argv[1], "get") == 0) return Get(argv[2], argv[3], argv[4]);
  if ((argc == 6 || argc == 7) && strcmp(argv[1], "race") == 0) {
    enum Until until = kCount;
    if (argc == 7 && strcmp(argv[6], "until-forbidden") == 0) until = kForbidden;
    if (argc == 7 && strcmp(argv[6], "until-both") == 0) until = kBoth;
    return Race(argv[2], argv[3], argv[4], atol(argv[5]), until);
  }
  fprintf(stderr,
          "usage: %s get IP PORT PATH | race ALLOWED_IP FORBIDDEN_IP PORT ATTEMPTS "
          "[until-forbidden|until-both]\n",
          argv[0]);
  return 2;
}
