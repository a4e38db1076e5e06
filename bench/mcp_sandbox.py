#!/usr/bin/env python3
"""gander mcp: sandbox_create -> first command_run answer, and sandbox_fork -> first answer in
the fork, interleaved round by round with the alternatives a user would reach for here:
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
                           "gander run round trip", "bwrap by hand", "runsc do")}
bwrap = ["bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink",
         "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
         "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent", "--new-session", "/bin/true"]
runsc = ["runsc", "--rootless", "--network=none", "--ignore-cgroups", "do", "/bin/true"]
have_runsc = shutil.which("runsc") is not None

def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t) * 1000

for r in range(rounds):
    t = time.perf_counter()
    created = tool("sandbox_create", name=f"b{r}")
    tool("command_run", sandbox=f"b{r}", cmd="true")
    results["gander create+run"].append((time.perf_counter() - t) * 1000)
    results["gander create (own)"].append(created["timing_ms"]["total"])
    t = time.perf_counter()
    tool("command_run", sandbox=f"b{r}", cmd="true")
    results["gander run round trip"].append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    tool("sandbox_fork", sandbox=f"b{r}", name=f"f{r}")
    tool("command_run", sandbox=f"f{r}", cmd="true")
    results["gander fork+run"].append((time.perf_counter() - t) * 1000)
    tool("sandbox_kill", sandbox=f"f{r}")
    tool("sandbox_kill", sandbox=f"b{r}")
    results["bwrap by hand"].append(timed(bwrap))
    if have_runsc:
        results["runsc do"].append(timed(runsc))

server.stdin.close()
server.wait()
shutil.rmtree(work, ignore_errors=True)
print(f"rounds: {rounds}, load average: {os.getloadavg()[0]:.2f}")
for name, xs in results.items():
    if xs:
        xs.sort()
        print(f"{name:24s} p50 {statistics.median(xs):8.1f} ms   p90 {xs[int(len(xs) * 0.9) - 1 if len(xs) > 1 else 0]:8.1f} ms")
