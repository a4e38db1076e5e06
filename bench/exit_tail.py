#!/usr/bin/env python3
"""Two gander builds, interleaved round by round: `gander run -- /bin/true` in a workspace.

    bench/exit_tail.py BEFORE_GANDER AFTER_GANDER [ROUNDS=40] [WORKSPACE=.]

Per run, each column: wall (fork to reap), CPU (wait4's rusage: gander and its sandbox, not
the shared collector), and in a second pass the exit's tail: from the waitid that reaps the
sandbox's init to gander's exit_group (strace --seccomp-bpf tracing only those two, so the
rest runs untraced). Medians, and the medians of the per-round differences (after - before).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ENV = {"GANDER_BENCH_CLEAN_ENV": "1", "PATH": "/usr/local/bin:/usr/bin:/bin",
       "HOME": os.environ.get("HOME", "/root")}


def timed(argv, cwd):
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.chdir(cwd)
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execve(argv[0], argv, ENV)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]}: status {status}")
    return (time.monotonic() - start) * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def tail(gander, cwd, log):
    subprocess.run(["strace", "-f", "--seccomp-bpf", "-ttt", "-e", "trace=waitid,exit_group",
                    "-o", log, gander, "run", "--", "/bin/true"], cwd=cwd, env=ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lines = open(log).read().splitlines()
    me = [l for l in lines if "+++ exited" in l][-1].split()[0] + " "
    mine = [l for l in lines if l.startswith(me)]
    reaped = [l for l in mine if "waitid" in l and "CLD_EXITED" in l][-1]
    exited = [l for l in mine if "exit_group(" in l][-1]
    return (float(exited.split()[1]) - float(reaped.split()[1])) * 1e3


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    builds = {"before": os.path.abspath(sys.argv[1]), "after": os.path.abspath(sys.argv[2])}
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    cwd = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else os.getcwd()
    log = tempfile.mktemp(prefix="gander-exit-tail.")
    got = {k: {"wall": [], "cpu": [], "tail": []} for k in builds}
    print("load before:", open("/proc/loadavg").read().strip(), "| workspace", cwd)
    for g in builds.values():
        timed([g, "run", "--", "/bin/true"], cwd)  # warm-up (and the collector started)
    for r in range(rounds):
        order = list(builds) if r % 2 == 0 else list(reversed(list(builds)))
        for k in order:
            wall, cpu = timed([builds[k], "run", "--", "/bin/true"], cwd)
            got[k]["wall"].append(wall)
            got[k]["cpu"].append(cpu)
        for k in order:
            got[k]["tail"].append(tail(builds[k], cwd, log))
    os.unlink(log)
    print("load after: ", open("/proc/loadavg").read().strip())
    med = statistics.median
    for k, d in got.items():
        print(f"{k:6s} wall {med(d['wall']):6.2f} ms  CPU {med(d['cpu']):5.2f} ms  "
              f"exit tail {med(d['tail']):5.2f} ms")
    for m in ("wall", "cpu", "tail"):
        diff = [a - b for a, b in zip(got["after"][m], got["before"][m])]
        print(f"after - before, {m}: median {med(diff):+.2f} ms")


if __name__ == "__main__":
    main()
