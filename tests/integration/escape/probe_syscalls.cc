// gander_probe's attempts with syscalls a sandbox denies (see probe.cc for the exit status and
// the report lines): mounts, chroot, bpf, io_uring, keyctl, perf, handles, TIOCSTI, other ABIs.
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <pty.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <string>

#include "probe.h"

namespace gander::probe {

// --- syscalls a sandbox denies -------------------------------------------------------------

int DoMount(const char* dir) {
  bool any = false;
  if (Check(Fmt("mount tmpfs on %s", dir).c_str(), mount("none", dir, "tmpfs", 0, "size=1m"))) {
    any = true;
    Check(Fmt("umount2 %s", dir).c_str(), umount2(dir, MNT_DETACH));
  }
  long fs = syscall(SYS_fsopen, "tmpfs", 0);
  if (Check("fsopen(tmpfs)", fs)) {
    any = true;
    close(static_cast<int>(fs));
  }
  long tree = syscall(SYS_open_tree, AT_FDCWD, "/", kOpenTreeClone);
  if (Check("open_tree(/, OPEN_TREE_CLONE)", tree)) {
    any = true;
    close(static_cast<int>(tree));
  }
  return Result(any);
}

int DoUmount(const char* dir) {
  return Result(Check(Fmt("umount2 %s", dir).c_str(), umount2(dir, MNT_DETACH)));
}

int DoChroot(const char* dir) {
  return Result(
      InChild("chroot", [dir] { return Check(Fmt("chroot %s", dir).c_str(), chroot(dir)); }));
}

int DoBpf() {
  bool any = false;
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (Check("bpf(BPF_MAP_CREATE)", fd)) {
    any = true;
    close(static_cast<int>(fd));
  }
  struct bpf_insn prog[2] = {};
  prog[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
  prog[0].dst_reg = BPF_REG_0;
  prog[1].code = BPF_JMP | BPF_EXIT;
  static const char kLicense[] = "GPL";
  memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = 2;
  attr.insns = reinterpret_cast<uint64_t>(prog);
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
  if (Check("bpf(BPF_PROG_LOAD socket filter)", fd)) {
    any = true;
    close(static_cast<int>(fd));
  }
  return Result(any);
}

int DoIoUring() {
  io_uring_params params{};
  long fd = syscall(SYS_io_uring_setup, 4, &params);
  bool ok = Check("io_uring_setup", fd);
  if (ok) close(static_cast<int>(fd));
  return Result(ok);
}

int DoKeyctl() {
  bool any = false;
  static const char kPayload[] = "x";
  long key = syscall(SYS_add_key, "user", "gander-probe", kPayload, 1, KEY_SPEC_PROCESS_KEYRING);
  any |= Check("add_key(user, process keyring)", key);
  long id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1);
  any |= Check("keyctl(KEYCTL_GET_KEYRING_ID, user keyring)", id);
  return Result(any);
}

int DoPerf() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  bool ok = Check("perf_event_open(self, task clock)", fd);
  if (ok) close(static_cast<int>(fd));
  return Result(ok);
}

// name_to_handle_at + open_by_handle_at on FILE; when the first is refused, a forged handle
// for the file system's root inode (the "shocker" attack).
int DoOpenByHandle(const char* path) {
  int mount_fd = open(path, O_RDONLY | O_CLOEXEC);
  if (mount_fd < 0) mount_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (!Check("open a mount fd", mount_fd)) return kFailed;
  union {
    file_handle fh;
    char storage[sizeof(file_handle) + MAX_HANDLE_SZ];
  } h{};
  h.fh.handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (!Check(Fmt("name_to_handle_at %s", path).c_str(),
             name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))) {
    h.fh.handle_bytes = 8;  // FILEID_INO32_GEN: {inode 2 (root), generation 0}
    h.fh.handle_type = 1;
    uint32_t ino_gen[2] = {2, 0};
    memcpy(h.fh.f_handle, ino_gen, sizeof ino_gen);
  }
  int fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY);
  bool ok = Check("open_by_handle_at", fd);
  if (ok) close(fd);
  close(mount_fd);
  return Result(ok);
}

// Pushes a character into a terminal's input queue: on inherited fds 0-2 when they are ttys,
// on /dev/tty, and on a fresh pty made our controlling terminal.
int DoTiocsti() {
  bool any = false;
  char c = '#';
  for (int fd = 0; fd <= 2; ++fd) {
    if (isatty(fd)) {
      any |= Check(Fmt("ioctl(%d, TIOCSTI) (inherited tty)", fd).c_str(), ioctl(fd, TIOCSTI, &c));
    } else {
      fprintf(stderr, "probe: fd %d is not a tty\n", fd);
    }
  }
  int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (Check("open /dev/tty", tty)) {
    any |= Check("ioctl(/dev/tty, TIOCSTI)", ioctl(tty, TIOCSTI, &c));
    close(tty);
  }
  any |= InChild("TIOCSTI on own pty", [&c] {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (!Check("posix_openpt", master)) return false;
    if (grantpt(master) != 0 || unlockpt(master) != 0) return Check("grantpt/unlockpt", -1);
    const char* name = ptsname(master);
    if (!name) return Check("ptsname", -1);
    if (!Check("setsid", setsid())) return false;
    int slave = open(name, O_RDWR);  // becomes our controlling terminal
    if (!Check(Fmt("open %s", name).c_str(), slave)) return false;
    return Check(Fmt("ioctl(%s, TIOCSTI)", name).c_str(), ioctl(slave, TIOCSTI, &c));
  });
  return Result(any);
}

// A syscall through the x32 ABI (the x32 bit on a 64-bit syscall number). Success means the
// kernel returned to us at all (even with ENOSYS); a sandbox should kill us with SIGSYS.
int DoX32() {
  long rc = syscall(kX32SyscallBit | SYS_getpid);
  fprintf(stderr, "probe: x32 getpid returned %ld (errno %d: %s)\n", rc, rc < 0 ? errno : 0,
          rc < 0 ? strerror(errno) : "none");
  return kSucceeded;
}

// A syscall through the i386 ABI (int $0x80), same success rule as DoX32.
int DoInt80() {
  long rc;
  asm volatile("int $0x80" : "=a"(rc) : "a"(kI386Getpid) : "memory", "r8", "r9", "r10", "r11");
  fprintf(stderr, "probe: int $0x80 getpid returned %ld\n", rc);
  return kSucceeded;
}

}  // namespace gander::probe
