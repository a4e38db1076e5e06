#!/usr/bin/env python3
"""overhead.py: every row of issue 20's table, each interleaved round by round.

    python3 bench/overhead.py PREFIXES [--rows true,mcp,steady,memory,notify] [--rounds N]

PREFIXES holds NUL-terminated fields, as bench/startup.sh writes them: for each column its
label, its argument count, then the arguments of its prefix (empty for bare). Each round runs
every column once, in a shuffled order; a column's overhead in a round is its figure minus the
bare column's of the same round, and the table gives the median of those paired overheads
(load that comes and goes hits every column alike). Rows:

  true    /bin/true start -> exit: wall time, and CPU (user + system) twice: from wait4's
          rusage of the column's command, which counts every descendant its processes waited
          for; and of the whole tree, with the runner a child subreaper, so that a process the
          command left behind to exit on its own (bwrap's pid 1, which bwrap does not wait for:
          its set-up and the payload's CPU are not in bwrap's rusage) is waited for and counted;
  mcp     server-filesystem start -> initialize -> tools/list -> stdin EOF -> exit, driven by
          bench/mcp_roundtrip.mjs (wall time);
  steady  server-everything, one session: after initialize, STEADY_WARMUP `echo` tools/call
          one at a time that are not timed (node's JIT makes the first few hundred calls 2-6x
          slower in every column), then STEADY_CALLS more; p50 of their per-call latency
          (client write -> answer line read);
  memory  in the same session, once tools/list is answered and the server idle: the sum of
          VmHWM over the column's own processes (every process of the tree whose name is not
          the server's `node`); bare is 0;
  notify  round trip of one watched syscall: `monitor_bench openat` of a workspace file, p50
          per call (columns whose label starts with "gander" only, plus bare).

Prints markdown. A benchmark: no figure decides the exit status. A failed mcp or steady
measurement is run once more (the column's command and the tail of its stderr go to stderr);
a second failure stops the table with that message. Environment: REPO (the
repository root, default: this file's parent's parent), E2E_DIR (REPO/tests/e2e),
MONITOR_BENCH (a built monitor_bench; without one the notify row is skipped), STEADY_WARMUP
(200), STEADY_CALLS (400), NOTIFY_ITERS (20000).
"""
import ctypes
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.environ.get("REPO") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E2E = os.environ.get("E2E_DIR") or os.path.join(REPO, "tests", "e2e")
FS_SERVER = os.path.join(E2E, "node_modules", "@modelcontextprotocol", "server-filesystem",
                         "dist", "index.js")
EVERYTHING = os.path.join(E2E, "node_modules", "@modelcontextprotocol", "server-everything",
                          "dist", "index.js")
STEADY_WARMUP = int(os.environ.get("STEADY_WARMUP", "200"))
STEADY_CALLS = int(os.environ.get("STEADY_CALLS", "400"))
NOTIFY_ITERS = int(os.environ.get("NOTIFY_ITERS", "20000"))


def read_prefixes(path):
    fields = open(path, "rb").read().decode().split("\0")
    cols, i = [], 0
    while i + 1 < len(fields):
        label, argc = fields[i], int(fields[i + 1])
        cols.append((label, fields[i + 2:i + 2 + argc]))
        i += 2 + argc
    return cols


def become_subreaper():
    """This process inherits the orphans of what it runs (PR_SET_CHILD_SUBREAPER)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except OSError:
        return False


SUBREAPER = become_subreaper()


def children():
    kids = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                kids.update(int(x) for x in f.read().split())
        except OSError:
            pass
    return kids


def reap_orphans(before, budget_s=2.0):
    """CPU ms of the children that appeared since `before` (orphans of the run just ended,
    reparented to this subreaper), each waited for up to `budget_s` in all."""
    cpu = 0.0
    deadline = time.monotonic() + budget_s
    for pid in children() - before:
        while True:
            got, _, ru = os.wait4(pid, os.WNOHANG)
            if got == pid:
                cpu += (ru.ru_utime + ru.ru_stime) * 1e3
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.0002)
    return cpu


def run_rusage(argv):
    """Wall ms, CPU ms of what the command waited for, and CPU ms of the whole tree
    (reap_orphans added) of one run; raises on failure."""
    before = children() if SUBREAPER else set()
    t0 = time.perf_counter_ns()
    err = tempfile.TemporaryFile()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter_ns() - t0) / 1e6
    p.returncode = 0
    cpu = (ru.ru_utime + ru.ru_stime) * 1e3
    tree = cpu + (reap_orphans(before) if SUBREAPER else 0.0)
    if os.waitstatus_to_exitcode(status) != 0:
        err.seek(0)
        tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}: "
                           + " / ".join(tail))
    return wall, cpu, tree


def retried(measure):
    """measure(prefix), run once more when it fails (a run that fails twice stops the table);
    the failure goes to stderr."""
    def once_more(prefix):
        try:
            return measure(prefix)
        except (RuntimeError, OSError) as e:
            print(f"overhead.py: {measure.__name__} failed, run again: {e}", file=sys.stderr)
            return measure(prefix)
    once_more.__name__ = measure.__name__
    return once_more


class Session:
    """A newline-delimited JSON-RPC client over a child's stdio."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=REPO)
        self.next_id = 1

    def call(self, method, params):
        rid = self.next_id
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        t0 = time.perf_counter_ns()
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        while True:
            got = self.p.stdout.readline()
            if not got:
                raise RuntimeError(f"{method}: the server closed its stdout")
            try:
                msg = json.loads(got)
            except ValueError:
                continue
            if msg.get("id") == rid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return (time.perf_counter_ns() - t0) / 1e3, msg

    def notify(self, method):
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.p.stdin.flush()

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def tree(pid):
    """pid and all its descendants (from /proc/*/stat)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = open(f"/proc/{name}/stat").read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def wrapper_hwm_kib(pid):
    total = 0
    for p in tree(pid):
        try:
            status = dict(line.split(":", 1) for line in open(f"/proc/{p}/status")
                          if ":" in line)
        except OSError:
            continue
        if status.get("Name", "").strip() == "node" or "VmHWM" not in status:
            continue
        total += int(status["VmHWM"].split()[0])
    return total


def steady_and_memory(prefix):
    s = Session(prefix + ["node", EVERYTHING, "stdio"])
    try:
        s.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "gander-bench", "version": "1"}})
        s.notify("notifications/initialized")
        s.call("tools/list", {})
        time.sleep(0.3)  # idle: whatever the server does after its start has settled
        memory = wrapper_hwm_kib(s.p.pid) / 1024
        lat = []
        for i in range(STEADY_WARMUP + STEADY_CALLS):
            us, _ = s.call("tools/call", {"name": "echo", "arguments": {"message": f"m{i}"}})
            lat.append(us)
        return statistics.median(lat[STEADY_WARMUP:]), memory
    finally:
        s.close()


def notify_p50(prefix, bench):
    # `monitor_bench hold` keeps the command's stdin open (gander stops an extension whose
    # client closed its stdin).
    argv = [bench, "hold"] + prefix + [bench, "openat", "--file", os.path.join(REPO, "CMakeLists.txt"),
                     "--iters", str(NOTIFY_ITERS)]
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO,
                       check=True)
    line = next(l for l in p.stdout.splitlines() if l.startswith("RESULT "))
    kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
    return float(kv["p50"]) / 1000  # ns -> us


def interleave(cols, rounds, measure, keys):
    """{label: {key: [per round]}}; measure(prefix) -> tuple of figures named by keys."""
    out = {label: {k: [] for k in keys} for label, _ in cols}
    for r in range(rounds):
        order = list(cols)
        random.shuffle(order)
        for label, prefix in order:
            for k, v in zip(keys, measure(prefix)):
                out[label][k].append(v)
        print(f"overhead.py: {measure.__name__} round {r + 1}/{rounds}", file=sys.stderr)
    return out


def table(title, cols, data, key, unit, fmt="{:.2f}", ratio_of_bare=False):
    bare = data[cols[0][0]][key]
    print(f"### {title}\n")
    extra = " | column / bare (median of per-round ratios)" if ratio_of_bare else ""
    print(f"| column | median [{unit}] | median paired overhead [{unit}]{extra} |")
    print("|:---|---:|---:|" + ("---:|" if ratio_of_bare else ""))
    for label, _ in cols:
        v = data[label][key]
        over = statistics.median([a - b for a, b in zip(v, bare)])
        row = f"| `{label}` | {fmt.format(statistics.median(v))} | {fmt.format(over)} |"
        if ratio_of_bare:
            row += " {:.3f} |".format(statistics.median([a / b for a, b in zip(v, bare)]))
        print(row)
    print()


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    cols = read_prefixes(args[0])
    rows = "true,mcp,steady,memory,notify".split(",")
    rounds = {"true": 40, "mcp": 10, "steady": 6, "notify": 5}
    i = 1
    while i < len(args):
        if args[i] == "--rows":
            rows = args[i + 1].split(",")
        elif args[i] == "--rounds":
            rounds = {k: int(args[i + 1]) for k in rounds}
        i += 2
    assert cols and cols[0][0] == "bare", "the first column must be bare"
    print(f"Rounds: {rounds}; columns shuffled in every round. Each column's prefix (the "
          "payload follows it):\n")
    for label, prefix in cols:
        print(f"- `{label}`: `{' '.join(prefix) or '(none)'}`")
    print()

    if "true" in rows:
        cols_true = cols
        for label, prefix in cols:
            run_rusage(prefix + ["/bin/true"])  # warm-up, and a check that it works

        def bin_true(prefix):
            return run_rusage(prefix + ["/bin/true"])
        d = interleave(cols_true, rounds["true"], bin_true, ["wall", "cpu", "tree"])
        table("`/bin/true` start -> exit, wall", cols_true, d, "wall", "ms")
        table("`/bin/true`, CPU per start (user + system of what the command waited for)",
              cols_true, d, "cpu", "ms")
        if SUBREAPER:
            table("`/bin/true`, CPU per start (user + system of every process of the tree, "
                  "those the command left to exit on their own included)", cols_true, d,
                  "tree", "ms")
    if "mcp" in rows:
        client = ["node", os.path.join(REPO, "bench", "mcp_roundtrip.mjs"), "--"]

        def mcp_tools_list(prefix):
            return run_rusage(client + prefix + ["node", FS_SERVER, REPO])[:1]
        d = interleave(cols, rounds["mcp"], retried(mcp_tools_list), ["wall"])
        table("MCP server-filesystem start -> initialize -> tools/list -> exit", cols, d,
              "wall", "ms")
    if "steady" in rows or "memory" in rows:
        d = interleave(cols, rounds["steady"], retried(steady_and_memory), ["p50", "mem"])
        if "steady" in rows:
            table(f"steady `tools/call` (server-everything echo, {STEADY_CALLS} calls after {STEADY_WARMUP} untimed per "
                  "session), p50 per session", cols, d, "p50", "us", "{:.1f}",
                  ratio_of_bare=True)
        if "memory" in rows:
            table("wrapper memory: sum of VmHWM of the column's own processes, idle server",
                  cols, d, "mem", "MiB")
    bench = os.environ.get("MONITOR_BENCH")
    if "notify" in rows and bench:
        ncols = [c for c in cols if c[0] == "bare" or c[0].startswith("gander")]
        d = interleave(ncols, rounds["notify"], lambda p: (notify_p50(p, bench),), ["p50"])
        table(f"watched syscall round trip (`openat` of a workspace file, {NOTIFY_ITERS} "
              "calls, the default `--files opens`), p50 per call", ncols, d, "p50", "us")


if __name__ == "__main__":
    main()
