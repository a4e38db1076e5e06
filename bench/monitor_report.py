#!/usr/bin/python3
"""Formats bench/monitor.sh's raw results as markdown (bench/results/monitor.md).

Called by bench/monitor.sh with its state in the environment (TMP, GANDER, ...); reads
$TMP/results.txt ("CONFIG<TAB>RESULT k=v ..."), $TMP/commands.txt, $TMP/loads.txt, hyperfine's
JSON/markdown exports and the strace logs. Prints the report on stdout. Judges nothing beyond
the "met / not met" lines: a benchmark, not a test.
"""
import json
import os
import platform
import re
import statistics
import subprocess
from collections import defaultdict

E = os.environ
TMP = E["TMP"]


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def parse_results():
    runs = defaultdict(list)
    for line in read(f"{TMP}/results.txt").splitlines():
        name, _, rest = line.partition("\t")
        kv = dict(re.findall(r"(\w+)=(\S+)", rest))
        runs[name].append(kv)
    return runs


def commands():
    out = {}
    for line in read(f"{TMP}/commands.txt").splitlines():
        name, _, cmd = line.partition("\t")
        out[name] = cmd
    return out


def loads():
    out = {}
    for line in read(f"{TMP}/loads.txt").splitlines():
        section, before, after = line.split("\t")
        out[section] = (before, after)
    return out


RUNS = parse_results()
CMDS = commands()
LOADS = loads()


def med(name, key):
    vals = [float(r[key]) for r in RUNS.get(name, []) if key in r]
    return statistics.median(vals) if vals else None


def low(name, key):
    vals = [float(r[key]) for r in RUNS.get(name, []) if key in r]
    return min(vals) if vals else None


def us(ns):
    return "–" if ns is None else f"{ns / 1000:.2f}"


def verdict(ok):
    return "**met**" if ok else "**NOT met**"


def load_line(section):
    if section not in LOADS:
        return ""
    before, after = LOADS[section]
    high = max(float(before.split()[0]), float(after.split()[0])) > 1.0
    return (f"Load average before: {before}; after: {after}"
            + (" — **high** (2 CPUs; other work on the machine inflates every column, "
               "the sandboxed ones most)." if high else ".") + "\n")


def command_list(names):
    lines = ["Exact commands (cwd = the workspace, `" + E["WS"] + "`):", ""]
    for n in names:
        if n in CMDS:
            lines.append(f"- {n}: `{CMDS[n]}`")
    return "\n".join(lines) + "\n"


def hyperfine(name):
    """Merges the rounds $TMP/NAME-1.json, NAME-2.json, ...: {command: {"times": [...],
    "rounds": [median of each round]}} in the order hyperfine listed the commands."""
    merged = {}
    r = 1
    while True:
        data = read(f"{TMP}/{name}-{r}.json")
        if not data:
            break
        for res in json.loads(data)["results"]:
            m = merged.setdefault(res["command"], {"times": [], "rounds": [], "user": [], "system": []})
            m["times"] += res["times"]
            m["rounds"].append(statistics.median(res["times"]))
            m["user"].append(res["user"])
            m["system"].append(res["system"])
        r += 1
    return merged or None


def hf_table(results, unit="s"):
    scale = 1000 if unit == "ms" else 1
    lines = [f"| Column | runs | median [{unit}] | mean ± σ [{unit}] | min [{unit}] | max [{unit}] | "
             f"user+sys, mean [{unit}] |",
             "|:---|---:|---:|---:|---:|---:|---:|"]
    for cmd, m in results.items():
        t = [x * scale for x in m["times"]]
        sd = statistics.stdev(t) if len(t) > 1 else 0
        cpu = (statistics.mean(m["user"]) + statistics.mean(m["system"])) * scale
        f = "{:.3f}" if unit == "s" else "{:.1f}"
        lines.append(f"| `{cmd}` | {len(t)} | {f.format(statistics.median(t))} | "
                     f"{f.format(statistics.mean(t))} ± {f.format(sd)} | {f.format(min(t))} | "
                     f"{f.format(max(t))} | {f.format(cpu)} |")
    return "\n".join(lines) + "\n"


def paired(results, a, b):
    """Median over the hyperfine rounds of (round median of b / round median of a - 1)."""
    ra, rb = results[a]["rounds"], results[b]["rounds"]
    return statistics.median(y / x - 1 for x, y in zip(ra, rb))


def ratios(results, a, b):
    ta, tb = results[a]["times"], results[b]["times"]
    return {"median": statistics.median(tb) / statistics.median(ta) - 1,
            "mean": statistics.mean(tb) / statistics.mean(ta) - 1,
            "min": min(tb) / min(ta) - 1,
            "paired": paired(results, a, b)}


def versions():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "hyperfine"],
                             capture_output=True, text=True).stdout
    except OSError:
        out = "?"
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip() \
        if subprocess.run(["sh", "-c", "command -v node"], capture_output=True).returncode == 0 \
        else "absent"
    return f"hyperfine {out}; node {node}"


print("# gander monitor benchmarks\n")
print(f"Generated by `bench/monitor.sh` on "
      f"{subprocess.run(['date', '-u', '+%Y-%m-%d %H:%M UTC'], capture_output=True, text=True).stdout.strip()}; "
      f"{platform.system()} {platform.release()}; {os.cpu_count()} CPUs; uid {os.getuid()}; "
      f"{versions()}.  ")
stale = E.get("GANDER_STALE", "").strip()
print(f"gander: `{E['GANDER']}`, built {E.get('GANDER_BUILT', '?')}; repository at commit "
      f"{E['GANDER_COMMIT']} when the report was written"
      + (f" — **the binary is older than these sources: {stale} (rebuild to measure the "
         f"current code)**. " if stale else " (no gander source is newer than the binary). "))
print("What each section measures and how: bench/MONITOR.md. Medians throughout: the machine is "
      "shared and noisy.\n")

# ---- SYNC_WAKE_UP ----------------------------------------------------------------------------
sync_line = E.get("SYNC_LINE", "")
in_force = bool(re.search(r"= 0\s*$", sync_line))
print("## SYNC_WAKE_UP\n")
print("`strace -e trace=ioctl` on gander (`gander run --files opens` around 1000 openat calls) "
      "shows the flag being set on the listener:\n")
print(f"```\n{sync_line or '(no SECCOMP_IOCTL_NOTIF_SET_FLAGS call seen)'}\n```\n")
print(f"(`_IOC(_IOC_WRITE, 0x21, 0x4, 0x8)` is SECCOMP_IOCTL_NOTIF_SET_FLAGS, which this strace "
      f"does not name; `0x1` = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP.) "
      f"**SYNC_WAKE_UP in force: {'yes' if in_force else 'no'}.**\n")
print(f"In the same run gander received {E.get('RECV_OK', '?')} notifications "
      f"(SECCOMP_IOCTL_NOTIF_RECV = 0) and made {E.get('RECV_ENOENT', '?')} more "
      f"SECCOMP_IOCTL_NOTIF_RECV calls that failed with ENOENT (many would mean the loop kept "
      f"polling the listener after its hang-up, when no process uses the filter any more).\n")

# ---- 1. round trip ---------------------------------------------------------------------------
RT = ["bare", "gander --files off", "gander --files opens",
      "gander --files opens, path outside the policy (logged)",
      "gander --files opens, same core", "gander --files opens, different cores"]
FL = ["floor", "floor, no SYNC_WAKE_UP", "floor, same core", "floor, different cores",
      "floor, blocking in NOTIF_RECV (no poll)", "floor + poll of 8 fds",
      "floor + read /proc/PID/status (only /proc/<pid> paths now)", "floor + process_vm_readv",
      "floor + readlink /proc/PID/root", "floor + readlink /proc/PID/root/PATH",
      "floor + NOTIF_ID_VALID", "floor + gander's four, polling 8 fds"]


def latency_table(names, ref, ref_label):
    base = med(ref, "p50")
    print(f"| Column | p50 [µs] | p90 [µs] | p99 [µs] | mean [µs] | best run's p50 [µs] | "
          f"p50 − {ref_label} [µs] | CPU at end |")
    print("|:---|---:|---:|---:|---:|---:|---:|---:|")
    for n in names:
        if n not in RUNS:
            continue
        p50 = med(n, "p50")
        cpus = ",".join(sorted({r.get("cpu", "?") for r in RUNS[n]}))
        print(f"| `{n}` | {us(p50)} | {us(med(n, 'p90'))} | {us(med(n, 'p99'))} | "
              f"{us(med(n, 'mean'))} | {us(low(n, 'p50'))} | "
              f"{us(p50 - base) if p50 is not None and base is not None else '–'} | {cpus} |")
    print()


if any(n in RUNS for n in RT + FL):
    rounds = max(len(RUNS.get(n, [])) for n in RT + FL)
    print("## 1. Round trip of one watched syscall\n")
    print(f"`openat(AT_FDCWD, \"{E['FILE']}\", O_RDONLY|O_CLOEXEC)` in a loop, "
          f"{int(E['ITERS']):,} timed calls per run (after 2,000 untimed), each call timed on its "
          f"own with clock_gettime (vDSO, ~{us(med('bare', 'timer'))} µs per reading pair, included "
          f"in every row); `close` is not timed. {rounds} rounds, all columns of both tables "
          f"interleaved round-robin; each cell is the median over the rounds of that run's "
          f"statistic. \"CPU at end\": where the timed process ran when it finished.\n")
    print(load_line("roundtrip"))
    latency_table(RT, "bare", "bare")
    print("The floor: `monitor_bench floor`, a minimal supervisor (poll on the listener, "
          "NOTIF_RECV, NOTIF_SEND CONTINUE, SYNC_WAKE_UP set unless said otherwise) around a "
          "one-rule filter (openat → USER_NOTIF), no sandbox. The `+` rows add, per "
          "notification, one of the syscalls gander's supervisor makes for a watched openat of "
          "a workspace file (what they emulate: bench/monitor_bench.cc, `GanderLikeWork`); "
          "\"gander's four\" adds process_vm_readv, both readlinks and NOTIF_ID_VALID and polls "
          "8 descriptors, as gander's loop does per watched openat of a workspace file. The "
          "/proc/PID/status row is for reference: gander reads it only for /proc/<pid>/... "
          "paths since commit 25c16eb.\n")
    latency_table(FL, "floor", "floor")
    off50, opens50, bare50 = (med("gander --files off", "p50"), med("gander --files opens", "p50"),
                              med("bare", "p50"))
    if off50 is not None and opens50 is not None:
        rt = opens50 - off50
        print(f"- Round trip of the notification = p50(`--files opens`) − p50(`--files off`) = "
              f"**{rt / 1000:.2f} µs** (goal ≤ 5 µs median): {verdict(rt <= 5000)}. The watched "
              f"openat as the extension sees it: {opens50 / 1000:.2f} µs vs "
              f"{bare50 / 1000:.2f} µs bare.")
        same = med("gander --files opens, same core", "p50")
        diff = med("gander --files opens, different cores", "p50")
        if same is not None and diff is not None:
            print(f"- Placement: gander and the target on one core {(same - off50) / 1000:.2f} µs, "
                  f"on different cores {(diff - off50) / 1000:.2f} µs (round trip, over "
                  f"`--files off`).")
        logged = med("gander --files opens, path outside the policy (logged)", "p50")
        if logged is not None:
            print(f"- A notification that becomes an audit-log event (openat of "
                  f"`{E['OUTSIDE']}`, outside the policy: ENOENT, class \"outside\") costs "
                  f"{(logged - opens50) / 1000:+.2f} µs more than one that is only classified.")
        floor = med("floor", "p50")
        if floor is not None and bare50 is not None:
            print(f"- Kernel floor (minimal supervisor): {(floor - bare50) / 1000:.2f} µs over "
                  f"bare, so the goal is "
                  f"{'within' if floor - bare50 <= 5000 else 'below'} what a CONTINUE round trip "
                  f"costs on this machine; gander spends **{(rt - (floor - bare50)) / 1000:.2f} µs** "
                  f"more per notification than the floor.")
        allfive = med("floor + gander's four, polling 8 fds", "p50")
        if allfive is not None and floor is not None:
            print(f"- gander's per-notification syscalls account for "
                  f"{(allfive - floor) / 1000:.2f} µs of that (floor + gander's four); the remaining "
                  f"{(rt - (allfive - bare50)) / 1000:.2f} µs is gander's own code and cache "
                  f"effects.")
        nosync = med("floor, no SYNC_WAKE_UP", "p50")
        if nosync is not None and floor is not None:
            print(f"- SYNC_WAKE_UP in the floor, unpinned: {floor / 1000:.2f} µs with, "
                  f"{nosync / 1000:.2f} µs without.")
    print()
    print(command_list(RT + FL))

# ---- 2. allowed syscalls ---------------------------------------------------------------------
AL = [f"{c}: {col}" for c in ("getppid", "ioctl")
      for col in ("bare", "gander --files off", "gander --files opens")]
if any(n in RUNS for n in AL):
    rounds = max(len(RUNS.get(n, [])) for n in AL)
    print("## 2. The filter's cost on an allowed syscall\n")
    print(f"Batches of 1,000 calls timed together ({E['BATCHES']} batches per run, after 10 "
          f"untimed), per-call cost = batch time / 1,000; per run the median batch; the cell is "
          f"the median over {rounds} interleaved rounds. `getppid` is allowed unconditionally by "
          f"gander's filter, so Linux ≥ 5.11 caches the verdict and skips the BPF; "
          f"`ioctl(pipe, FIONREAD)` is allowed too but the filter has argument rules for ioctl "
          f"(TIOCSTI/TIOCLINUX), so the BPF runs on every call.\n")
    print(load_line("allowed"))
    print("| Column | ns/call (median) | best run [ns] | − bare [ns] |")
    print("|:---|---:|---:|---:|")
    for call in ("getppid", "ioctl"):
        base = med(f"{call}: bare", "median")
        for col in ("bare", "gander --files off", "gander --files opens"):
            n = f"{call}: {col}"
            if n not in RUNS:
                continue
            m = med(n, "median")
            print(f"| `{n}` | {m:.1f} | {low(n, 'median'):.1f} | "
                  f"{m - base:+.1f} |")
    print()
    g_base, g = med("getppid: bare", "median"), med("getppid: gander --files opens", "median")
    if g_base is not None and g is not None:
        print(f"- Filter cost on an allowed syscall (getppid, gander `--files opens` − bare) = "
              f"**{g - g_base:+.1f} ns** (goal ≤ 50 ns): {verdict(g - g_base <= 50)}.")
    i_base, i = med("ioctl: bare", "median"), med("ioctl: gander --files opens", "median")
    if i_base is not None and i is not None:
        print(f"- On a syscall the filter must evaluate (ioctl): **{i - i_base:+.1f} ns** "
              f"(information; the same goal would be {'met' if i - i_base <= 50 else 'NOT met'}).")
    print()
    print(command_list(AL))

# ---- 3. compute-bound ------------------------------------------------------------------------
spin = hyperfine("spin")
if spin:
    n_rounds = len(next(iter(spin.values()))["rounds"])
    print("## 3. A compute-bound program\n")
    print(f"`monitor_bench spin`: a dependent xorshift loop, {int(E['SPIN_ITERS']):,} iterations "
          f"(calibrated to ~{E['SPIN_SECONDS']} s of CPU bare, best of 3), no syscalls. hyperfine -N, "
          f"{E['RUNS_SPIN']} runs per column split over {n_rounds} hyperfine invocations (every "
          f"column in each), no warm-up. The wall time includes gander's start-up and tear-down. "
          f"The program also reports its own loop time (\"inside\": wall, and the process's CPU "
          f"time, which other load on the machine barely moves) to isolate the steady state.\n")
    print(load_line("compute"))
    print(hf_table(spin))

    def inside(key, field):
        lines = read(f"{TMP}/spin/{key}").splitlines()
        vals = [int(m.group(1)) for m in (re.search(field + r"=(\d+)", l) for l in lines) if m]
        return vals

    keys = {"bare": "bare", "gander --files off": "off", "gander --files opens": "opens"}
    print("| Column | inside: wall median [s] | inside: wall min [s] | inside: CPU median [s] | inside: CPU min [s] |")
    print("|:---|---:|---:|---:|---:|")
    ins = {}
    for cmd in spin:
        w, c = inside(keys.get(cmd, ""), "wall"), inside(keys.get(cmd, ""), "cputime")
        ins[cmd] = (w, c)
        if w and c:
            print(f"| `{cmd}` | {statistics.median(w) / 1e9:.3f} | {min(w) / 1e9:.3f} | "
                  f"{statistics.median(c) / 1e9:.3f} | {min(c) / 1e9:.3f} |")
    print()
    if "bare" in spin and "gander --files opens" in spin:
        r = ratios(spin, "bare", "gander --files opens")
        print(f"- Overhead, wall time (gander `--files opens` / bare − 1), median: "
              f"**{r['median'] * 100:+.2f} %** (goal ≤ 1 %): {verdict(r['median'] <= 0.01)}. "
              f"Mean {r['mean'] * 100:+.2f} %, min {r['min'] * 100:+.2f} %, median of the "
              f"per-round ratios {r['paired'] * 100:+.2f} %. gander's start-up and tear-down "
              f"are in it: ~{(statistics.median(spin['gander --files opens']['times']) - statistics.median(spin['bare']['times'])) * 1000:.0f} ms "
              f"(median difference) of fixed cost.")
        (bw, bc), (ow, oc) = ins.get("bare", ([], [])), ins.get("gander --files opens", ([], []))
        if bc and oc:
            rc = statistics.median(oc) / statistics.median(bc) - 1
            rw = statistics.median(ow) / statistics.median(bw) - 1
            print(f"- Steady state, inside the program: CPU time median **{rc * 100:+.2f} %** "
                  f"({'met' if rc <= 0.01 else 'NOT met'} against the 1 % goal), CPU min "
                  f"{(min(oc) / min(bc) - 1) * 100:+.2f} %; its own wall time median "
                  f"{rw * 100:+.2f} % (moved by the load).")
    print()
    print(command_list([f"spin: {k}" for k in spin]))

# ---- 4. MCP --------------------------------------------------------------------------------
mcp = hyperfine("mcp")
if E.get("MCP_SKIPPED"):
    print(f"## 4. MCP server start → tools/list\n\nSkipped: {E['MCP_SKIPPED']}\n")
elif mcp:
    n_rounds = len(next(iter(mcp.values()))["rounds"])
    print("## 4. A real MCP server: start → tools/list → exit\n")
    print(f"`@modelcontextprotocol/server-filesystem` (tests/e2e/node_modules) driven by "
          f"bench/mcp_roundtrip.mjs (initialize, tools/list, stdin EOF, wait for exit). "
          f"hyperfine -N, {E['RUNS_MCP']} runs per column split over {n_rounds} hyperfine "
          f"invocations (every column in each, {E['WARMUP_MCP']} warm-up run per column and "
          f"invocation).\n")
    print(load_line("mcp"))
    print(hf_table(mcp, "ms"))
    counts = {}
    for level in ("off", "opens", "all"):
        text = read(f"{TMP}/strace-mcp-{level}.txt")
        ok = re.findall(r"SECCOMP_IOCTL_NOTIF_RECV, \{.*?nr=__NR_(\w+)", text)
        enoent = len(re.findall(r"SECCOMP_IOCTL_NOTIF_RECV.*ENOENT", text))
        counts[level] = (ok, enoent)
    rt = None
    off50, opens50 = med("gander --files off", "p50"), med("gander --files opens", "p50")
    if off50 is not None and opens50 is not None:
        rt = (opens50 - off50) / 1e9
    if "gander --files off" in mcp and "gander --files opens" in mcp:
        r = ratios(mcp, "gander --files off", "gander --files opens")
        print(f"- `--files opens` vs `--files off`, median: **{r['median'] * 100:+.1f} %** "
              f"(goal ≤ 5 %): {verdict(r['median'] <= 0.05)}. Mean {r['mean'] * 100:+.1f} %, "
              f"min {r['min'] * 100:+.1f} %, median of the per-round ratios "
              f"{r['paired'] * 100:+.1f} %.")
        if "gander --files all" in mcp:
            ra = ratios(mcp, "gander --files off", "gander --files all")
            print(f"- `--files all` vs `--files off` (information): median {ra['median'] * 100:+.1f} %, "
                  f"per-round {ra['paired'] * 100:+.1f} %.")
        def cpu(name):
            return (statistics.mean(mcp[name]["user"]) + statistics.mean(mcp[name]["system"])) * 1000

        base = "floor supervisor, nothing watched"
        if base in mcp:
            for name in ("floor supervisor, opens set", "floor supervisor, opens set, no SYNC_WAKE_UP",
                         "floor supervisor, all set"):
                if name in mcp:
                    rf = ratios(mcp, base, name)
                    print(f"- Notification alone, minimal supervisor (`{name}` vs `{base}`, no "
                          f"sandbox): median {rf['median'] * 100:+.1f} %, per-round "
                          f"{rf['paired'] * 100:+.1f} %, min {rf['min'] * 100:+.1f} %; CPU "
                          f"(user+sys) {cpu(name) - cpu(base):+.0f} ms.")
            for level in ("opens", "all"):
                name = f"gander --files {level}"
                if name in mcp:
                    print(f"- gander `--files {level}` over `--files off`: CPU (user+sys) "
                          f"{cpu(name) - cpu('gander --files off'):+.0f} ms.")
        if "bare" in mcp:
            rb = ratios(mcp, "bare", "gander --files off")
            print(f"- `--files off` vs bare (gander's own start-up, information): median "
                  f"{rb['median'] * 100:+.1f} %.")
        if rt is not None:
            base = statistics.median(mcp["gander --files off"]["times"])
            for level in ("opens", "all"):
                n = len(counts[level][0])
                print(f"- Expected from section 1: {n} notifications × {rt * 1e6:.1f} µs = "
                      f"{n * rt * 1000:.1f} ms = {n * rt / base * 100:.1f} % of a `--files off` "
                      f"start (`--files {level}`), if every notification cost what the openat "
                      f"loop measured.")
    print()
    sup = defaultdict(list)
    for line in read(f"{TMP}/supervisor-cpu.txt").splitlines():
        label, _, ns = line.partition("\t")
        if int(ns) > 0:
            sup[label].append(int(ns) / 1e6)
    if sup:
        nots = {"gander --files off": 0, "gander --files opens": len(counts["opens"][0]),
                "gander --files all": len(counts["all"][0]),
                "floor supervisor, opens set": len(counts["opens"][0]),
                "floor supervisor, all set": len(counts["all"][0])}
        off_cpu = statistics.median(sup["gander --files off"]) if sup.get("gander --files off") else None
        print(f"The supervisor's own CPU time per start (gander's parent process, or the minimal "
              f"supervisor of `monitor_bench floor-exec`), read from `/proc/PID/schedstat` until it "
              f"exits; {E['SUP_RUNS']} interleaved runs per column. This is what the notifications "
              f"cost the machine, without node's run-to-run noise:\n")
        print("| Supervisor | runs | CPU median [ms] | min [ms] | max [ms] | notifications | "
              "per notification [µs] |")
        print("|:---|---:|---:|---:|---:|---:|---:|")
        for label, vals in sup.items():
            m = statistics.median(vals)
            n = nots.get(label, 0)
            extra = m - off_cpu if label.startswith("gander") and off_cpu is not None else m
            per = f"{extra * 1000 / n:.0f}" if n else "–"
            print(f"| `{label}` | {len(vals)} | {m:.1f} | {min(vals):.1f} | {max(vals):.1f} | "
                  f"{n} | {per} |")
        print()
        print("(gander's per-notification figure is over `--files off`, whose supervisor relays "
              "stdio and sets up the sandbox; the floor's is its whole CPU time.)\n")
        if off_cpu is not None and sup.get("gander --files opens") and "gander --files off" in mcp:
            extra = statistics.median(sup["gander --files opens"]) - off_cpu
            wall = statistics.median(mcp["gander --files off"]["times"]) * 1000
            print(f"- `--files opens` costs gander's supervisor **{extra:+.1f} ms** of CPU per "
                  f"start = {extra / wall * 100:.1f} % of a `--files off` start's median wall time "
                  f"({wall:.0f} ms): what the notifications put on the server's critical path "
                  f"when its thread waits for each answer, against the 5 % budget.\n")
    print("Notifications per start (one extra run per level with "
          "`strace -e trace=ioctl` on gander; SECCOMP_IOCTL_NOTIF_RECV calls that returned a "
          "notification, and those that failed with ENOENT):\n")
    print("| `--files` | notifications | openat | statx/newfstatat | execve | RECV → ENOENT |")
    print("|:---|---:|---:|---:|---:|---:|")
    for level, (ok, enoent) in counts.items():
        stats = sum(1 for n in ok if n in ("statx", "newfstatat", "stat", "lstat"))
        print(f"| {level} | {len(ok)} | {ok.count('openat')} | {stats} | {ok.count('execve')} | {enoent} |")
    print()
    print(command_list([f"mcp: {k}" for k in mcp] + ["mcp: notification count, --files LEVEL"]))
