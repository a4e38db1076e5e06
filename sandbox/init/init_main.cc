// gander-init: the sandbox init's image once the extension runs. The init is a clone of gander
// (its binary, heap, Goose's environment, the secrets' values: ~2.3 MiB resident); it execs
// this instead, a few KiB with no libc, and runs the same loop (init_loop.cc). Built
// freestanding (-nostdlib -static) and embedded in gander (init_image.cc).
//
//   gander-init EXTENSION_PID NAMESPACES(1|0) DEATH_SIGNAL CGROUP_PROCS|- REPORT_FD|- -- COMMAND...
//
// (COMMAND, the extension's, is only there for ps.)
#include <linux/prctl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "sandbox/init/init_loop.h"

namespace gander::init {

long Sys(long nr, long a, long b, long c, long d) {
  long r;
#if defined(__x86_64__)
  register long r10 asm("r10") = d;
  asm volatile("syscall"
               : "=a"(r)
               : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
               : "rcx", "r11", "memory");
#elif defined(__aarch64__)
  register long x8 asm("x8") = nr;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  r = x0;
#else
#error "gander-init: no system call sequence for this architecture"
#endif
  return r;
}

namespace {

long Number(const char* s) {
  long n = 0;
  bool negative = *s == '-';
  if (negative) ++s;
  for (; *s >= '0' && *s <= '9'; ++s) n = n * 10 + (*s - '0');
  return negative ? -n : n;
}

void Noop(int) {}

#if defined(__x86_64__)
extern "C" void gander_init_restorer();
asm(".text\n.globl gander_init_restorer\ngander_init_restorer:\n"
    "  mov $15, %eax\n  syscall\n  hlt\n");
#endif

// The kernel's struct sigaction (x86-64 and arm64 alike).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  unsigned long mask;
};

}  // namespace

extern "C" [[noreturn]] void gander_init_start(long* stack) {
  const long argc = stack[0];
  char** argv = reinterpret_cast<char**>(stack + 1);
  // Never dumpable: nothing of the sandbox may read this process's memory or ptrace it.
  Sys(SYS_prctl, PR_SET_DUMPABLE, 0);
  Sys(SYS_prctl, PR_SET_NAME, reinterpret_cast<long>("gander-init"));
  if (argc < 6) Sys(SYS_exit_group, 125);
  InitArgs args;
  args.extension = static_cast<int>(Number(argv[1]));
  args.namespaces = argv[2][0] == '1';
  args.death_signal = static_cast<int>(Number(argv[3]));
  args.cgroup_procs = argv[4][0] == '-' ? nullptr : argv[4];
  args.report_fd = argv[5][0] == '-' ? -1 : static_cast<int>(Number(argv[5]));
  // execve reset the handlers. A pid namespace's init drops signals from outside that have
  // none; they stay blocked (the mask survives execve) and are taken by sigtimedwait.
  KernelSigaction action{};
  action.handler = Noop;
#if defined(__x86_64__)
  action.flags = 0x04000000;  // SA_RESTORER
  action.restorer = gander_init_restorer;
#endif
  const int handled[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD};
  for (int sig : handled) {
    Sys(SYS_rt_sigaction, sig, reinterpret_cast<long>(&action), 0, sizeof(action.mask));
  }
  RunInit(args);
}

}  // namespace gander::init

// What a compiler may call even in freestanding code.
extern "C" void* memset(void* dst, int c, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  while (n--) *d++ = static_cast<unsigned char>(c);
  return dst;
}
extern "C" void* memcpy(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  while (n--) *d++ = *s++;
  return dst;
}

#if defined(__x86_64__)
asm(".text\n.globl _start\n_start:\n  xor %ebp, %ebp\n  mov %rsp, %rdi\n  and $-16, %rsp\n"
    "  call gander_init_start\n  hlt\n");
#elif defined(__aarch64__)
asm(".text\n.globl _start\n_start:\n  mov x29, #0\n  mov x30, #0\n  mov x0, sp\n"
    "  bl gander_init_start\n  brk #0\n");
#endif
