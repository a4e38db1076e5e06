#!/usr/bin/env python3
"""What the collector's state costs a start: an interleaved A/B of `gander run -- /bin/true`
(start -> exit) against bare, each column with its own collector (its own HOME and XDG
directories under /tmp/ab/col-LABEL), whose state is first filled by NAMES runs of as many
other extension names. Prints each column's median overhead (column - bare of the same round).
usage: bench/collector_state_ab.py ROUNDS NAMES LABEL=GANDER [LABEL=GANDER ...]
(docs/benchmarks.md, "The collector's state write")"""
import os, random, subprocess, sys, time, statistics, shutil
rounds, names = int(sys.argv[1]), int(sys.argv[2])
cols = [a.split('=', 1) for a in sys.argv[3:]]
envs = {}
for label, g in cols:
    d = f'/tmp/ab/col-{label}'
    shutil.rmtree(d, ignore_errors=True)
    for sub in ('home', 'state', 'run', 'ws'):
        os.makedirs(f'{d}/{sub}', mode=0o700)
    e = dict(os.environ, HOME=f'{d}/home', XDG_STATE_HOME=f'{d}/state', XDG_RUNTIME_DIR=f'{d}/run')
    envs[label] = e
    for n in range(names):
        subprocess.run([g, 'run', '--name', f'pollute-{n}', '--', '/bin/true'], env=e, cwd=f'{d}/ws',
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    st = f'{d}/state/gander/collector-state.json'
    print(label, 'state bytes', os.path.getsize(st) if os.path.exists(st) else
          [p for p in os.popen(f'find {d}/state -name "*.json"').read().split()], flush=True)
def once(argv, env, cwd):
    t = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
res = {l: [] for l, _ in cols}
res['bare'] = []
for r in range(rounds):
    order = ['bare'] + [l for l, _ in cols]
    random.shuffle(order)
    for l in order:
        if l == 'bare':
            res[l].append(once(['/bin/true'], os.environ, '/tmp'))
        else:
            g = dict(cols)[l]
            res[l].append(once([g, 'run', '--name', 'ab', '--', '/bin/true'], envs[l], f'/tmp/ab/col-{l}/ws'))
for l, _ in cols:
    over = [a - b for a, b in zip(res[l], res['bare'])]
    print(f'{l}: median overhead {statistics.median(over):.2f} ms')
print('load', os.getloadavg())
