// Seccomp user-notification values newer than Debian 12's kernel headers (Linux 6.6), defined
// once for the supervisor (monitor/seccomp_notify.cc) and the benchmark that measures it
// (bench/monitor_bench.cc). Values from uapi/linux/seccomp.h.
#pragma once

#include <linux/seccomp.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
