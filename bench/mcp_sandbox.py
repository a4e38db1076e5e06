#!/usr/bin/env python3
"""gander mcp: sandbox_create -> first command_run answer, and sandbox_fork -> first answer in
the fork (unnamed: the warm spare started ahead under the next name; named: a cold start),
interleaved round by round with the alternatives a user would reach for here:
bubblewrap by hand (a fresh sandbox per command) and `runsc do`. Wall-clock ms, p50 and p90.

  bench/mcp_sandbox.py build/launcher/gander [rounds]
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

gander = os.path.abspath(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
work = tempfile.mkdtemp(prefix="gander-bench-mcp-")
env = dict(os.environ, TMPDIR=work)
server = subprocess.Popen([gander, "mcp", "--collector", "off"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, env=env, cwd=work, text=True, bufsize=1)
ids = iter(range(1, 1 << 30))

def rpc(method, params):
    i = next(ids)
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    server.stdin.flush()
    while True:
        msg = json.loads(server.stdout.readline())
        if msg.get("id") == i:
            return msg

def tool(tool_name, **args):
    r = rpc("tools/call", {"name": tool_name, "arguments": args})["result"]
    assert not r.get("isError"), r
    return r.get("structuredContent", {})

rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}})
results = {k: [] for k in ("gander create+run", "gander create (own)", "gander fork+run",
                           "gander fork (own)", "gander run round trip",
                           "gander cold create+run", "gander cold fork+run", "bwrap by hand",
                           "runsc do")}
bwrap = ["bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink",
         "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
         "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent", "--new-session", "/bin/true"]
runsc = ["runsc", "--rootless", "--network=none", "--ignore-cgroups", "do", "/bin/true"]
have_runsc = shutil.which("runsc") is not None

def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t) * 1000

# A model thinks for seconds between calls; the spare started behind the last answer has that
# long to come up. THINK seconds stand in for it before each measured call (0: back to back).
think = float(os.environ.get("THINK", "0.3"))

def create_run(**args):
    time.sleep(think)
    t = time.perf_counter()
    created = tool("sandbox_create", **args)
    tool("command_run", sandbox=created["sandbox"], cmd="true")
    return created, (time.perf_counter() - t) * 1000

def fork_run(parent, **args):
    time.sleep(think)
    t = time.perf_counter()
    forked = tool("sandbox_fork", sandbox=parent, **args)
    tool("command_run", sandbox=forked["sandbox"], cmd="true")
    return forked, (time.perf_counter() - t) * 1000

for r in range(rounds):
    created, ms = create_run()
    assert created["warm"] or r == 0, created  # the first may race the spare's start
    results["gander create+run"].append(ms)
    results["gander create (own)"].append(created["timing_ms"]["total"])
    name = created["sandbox"]
    t = time.perf_counter()
    tool("command_run", sandbox=name, cmd="true")
    results["gander run round trip"].append((time.perf_counter() - t) * 1000)
    forked, ms = fork_run(name)
    assert forked["warm"], forked
    results["gander fork+run"].append(ms)
    results["gander fork (own)"].append(forked["timing_ms"]["total"])
    tool("sandbox_kill", sandbox=forked["sandbox"])
    cold, ms = create_run(name=f"cold{r}")
    assert not cold["warm"], cold
    results["gander cold create+run"].append(ms)
    cold_fork, ms = fork_run(cold["sandbox"], name=f"coldfork{r}")
    results["gander cold fork+run"].append(ms)
    for n in (cold_fork["sandbox"], cold["sandbox"], name):
        tool("sandbox_kill", sandbox=n)
    results["bwrap by hand"].append(timed(bwrap))
    if have_runsc:
        results["runsc do"].append(timed(runsc))

server.stdin.close()
server.wait()
shutil.rmtree(work, ignore_errors=True)
print(f"rounds: {rounds}, think: {think} s, load average: {os.getloadavg()[0]:.2f}")
for name, xs in results.items():
    if xs:
        xs.sort()
        print(f"{name:24s} p50 {statistics.median(xs):8.1f} ms   p90 {xs[int(len(xs) * 0.9) - 1 if len(xs) > 1 else 0]:8.1f} ms")
