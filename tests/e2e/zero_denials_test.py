#!/usr/bin/env python3
"""An extension that does nothing wrong has zero denials (issue 18): a real node MCP server
(server-memory from tests/e2e/node_modules) started through `gander run`, driven through
initialize -> tools/list -> stdin EOF -> exit, in every mode (namespaces, --no-namespaces,
--backend gvisor), as the current user and, when root, as uid 65534. Its audit log must hold no
denial of any domain: no file or network event with result denied or would_deny, no syscall
denial. The cgroup memory limits node reads at start are the usual cause (sandbox/cgroup_view.h).
The same for server-filesystem given the workspace, with a read_text_file call in it: the call
makes node's thread pool read /sys/devices/system/cpu/online (sandbox/filesystem_plan.h).
  zero_denials_test.py GANDER NODE_MODULES SCRATCH
Exit 77 (skip) without the server; a mode whose sandbox cannot start here (no runsc) is skipped
with the reason, except under CI=true."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

GANDER, MODULES, SCRATCH = sys.argv[1:4]
SERVER = os.path.join(MODULES, "@modelcontextprotocol", "server-memory", "dist", "index.js")
FS_SERVER = os.path.join(MODULES, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
CI = os.environ.get("CI") == "true"
MODES = {"namespaces": [], "no-namespaces": ["--no-namespaces"], "gvisor": ["--backend", "gvisor"]}


def drive(argv, cwd, env, calls=()):
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def reply(want):
        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("id") == want:
                return msg
        raise RuntimeError("no answer to request %d: %s" % (want, proc.stderr.read().decode()))

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "zero-denials", "version": "1"}}})
    reply(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = reply(2)["result"]["tools"]
    for n, (tool, arguments) in enumerate(calls, start=3):
        send({"jsonrpc": "2.0", "id": n, "method": "tools/call",
              "params": {"name": tool, "arguments": arguments}})
        result = reply(n).get("result") or {}
        if result.get("isError") or not result:
            raise RuntimeError("%s failed: %s" % (tool, json.dumps(result)[:300]))
    proc.stdin.close()
    err = proc.stderr.read().decode()
    proc.wait()
    return [t["name"] for t in tools], err


def denials(log):
    found = []
    with open(log, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            body = e.get(e["kind"]) or {}
            if body.get("action") == "denied" or body.get("result") in ("denied", "would_deny"):
                found.append(line.strip())
    return found


def main():
    if not os.path.isfile(SERVER):
        print("SKIP: %s missing: run tests/e2e/install.sh" % SERVER)
        return 77
    who = "uid %d" % os.getuid()
    world = tempfile.mkdtemp(prefix="zero-denials.", dir=SCRATCH)
    os.chmod(world, 0o755)
    failed = 0
    try:
        ws = os.path.join(world, "ws")
        home = os.path.join(world, "home")
        os.makedirs(ws)
        os.makedirs(home)
        env = dict(os.environ, HOME=home)
        note = os.path.join(ws, "note.txt")
        with open(note, "w", encoding="utf-8") as f:
            f.write("zero denials\n")
        os.chmod(note, 0o644)
        servers = [("memory", [SERVER], [], "create_entities")]
        if os.path.isfile(FS_SERVER):
            servers.append(("filesystem", [FS_SERVER, ws],
                            [("read_text_file", {"path": note})], "read_text_file"))
        elif CI:
            print("FAIL: %s missing" % FS_SERVER)
            failed += 1
        runs = [(mode, flags, *server) for mode, flags in MODES.items() for server in servers]
        for mode, flags, name, server_argv, calls, want in runs:
            log = os.path.join(world, "%s-%s.jsonl" % (name, mode))
            argv = [GANDER, "run", *flags, "--collector", "off", "--name", name,
                    "--audit-log", log, "--", "node", *server_argv]
            try:
                names, err = drive(argv, ws, env, calls)
            except (RuntimeError, json.JSONDecodeError, BrokenPipeError) as e:
                text = str(e)
                if mode == "gvisor" and not CI and ("runsc" in text or "gvisor" in text.lower()):
                    print("SKIP (%s, %s): %s" % (mode, who, text.strip().splitlines()[-1]))
                    continue
                print("FAIL (%s %s, %s): %s" % (name, mode, who, text))
                failed += 1
                continue
            if want not in names:
                print("FAIL (%s %s, %s): tools/list: %s" % (name, mode, who, names))
                failed += 1
                continue
            found = denials(log)
            if found:
                print("FAIL (%s %s, %s): %d denials:\n  %s" % (name, mode, who, len(found),
                                                        "\n  ".join(x[:400] for x in found)))
                failed += 1
            else:
                print("PASS (%s %s, %s): zero denials" % (name, mode, who))
        # What glibc's get_nprocs (node's thread pool on this path) reads, read outright: the
        # file is there, read-only, and reading it is no denial.
        for mode, flags in MODES.items():
            log = os.path.join(world, "cpu-%s.jsonl" % mode)
            argv = [GANDER, "run", *flags, "--collector", "off", "--name", "cpu", "--audit-log", log,
                    "--", "node", "-e", "process.stdout.write(require('fs').readFileSync("
                    "'/sys/devices/system/cpu/online', 'utf8'))"]
            run = subprocess.run(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True)
            found = denials(log) if os.path.exists(log) else ["no audit log"]
            if run.returncode != 0 or not run.stdout.strip() or found:
                print("FAIL (cpu online %s, %s): exit %d, read %r, stderr %s, denials %s"
                      % (mode, who, run.returncode, run.stdout, run.stderr[-300:], found[:3]))
                failed += 1
            else:
                print("PASS (cpu online %s, %s): read %r, zero denials" % (mode, who,
                                                                          run.stdout.strip()))
    finally:
        shutil.rmtree(world, ignore_errors=True)
    if failed:
        return 1
    if os.getuid() == 0 and not os.environ.get("GANDER_AS_NOBODY") and shutil.which("setpriv"):
        nobody = tempfile.mkdtemp(prefix="zero-denials-nobody.", dir=SCRATCH)
        os.chmod(nobody, 0o777)
        try:
            status = subprocess.call(
                ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 sys.executable, os.path.abspath(__file__), GANDER, MODULES, nobody],
                cwd="/", env=dict(os.environ, GANDER_AS_NOBODY="1"))
        finally:
            shutil.rmtree(nobody, ignore_errors=True)
        return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
