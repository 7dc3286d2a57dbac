#!/usr/bin/env python3
"""Critical path of one simulated iteration, from an `mfabric simulate --out DIR` trace.json.

Walks back from the last event to time 0: each event's predecessor is an event that ends
exactly when it starts (the previous compute on the GPU, or a collective / p2p the GPU takes
part in; for a collective, an event on any of its members). Sums the path's time by category
(compute, tp, ep, pp, dp); the sum equals the iteration time. Any stretch the walk cannot
explain is reported as 'gap'.

usage: critical_path.py DIR [DIR ...]   (prints one JSON line per DIR)
"""
import bisect
import collections
import json
import sys

EPS = 0.0015  # microseconds; trace times are rounded to the nanosecond


def load(path):
    ev = []  # (start, end, cat, name, pid)
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(',')
            if not line.startswith('{"cat"'):
                continue
            e = json.loads(line)
            ev.append((e['ts'], e['ts'] + e['dur'], e['cat'], e['name'], e['pid']))
    return ev


def analyse(d):
    ev = load(d + '/trace.json')
    by_gpu_end = collections.defaultdict(list)  # pid -> sorted [(end, idx)]
    members = collections.defaultdict(list)     # (name, start) of a comm -> pids
    for i, (s, e, cat, name, pid) in enumerate(ev):
        by_gpu_end[pid].append((e, i))
        if cat != 'compute':
            members[(name, round(s, 3))].append(pid)
    for v in by_gpu_end.values():
        v.sort()

    def ending_at(pid, t):
        v = by_gpu_end[pid]
        j = bisect.bisect_left(v, (t - EPS, -1))
        out = []
        while j < len(v) and v[j][0] <= t + EPS:
            out.append(v[j][1])
            j += 1
        return out

    def latest_before(pid, t):
        v = by_gpu_end[pid]
        j = bisect.bisect_right(v, (t + EPS, 1 << 60)) - 1
        return v[j][1] if j >= 0 else None

    last = max(range(len(ev)), key=lambda i: ev[i][1])
    total = ev[last][1]
    acc = collections.Counter()
    cur = last
    steps = 0
    while True:
        s, e, cat, name, pid = ev[cur]
        acc[cat] += e - s
        steps += 1
        if s <= EPS:
            break
        pids = [pid] if cat == 'compute' else members[(name, round(s, 3))]
        # events ending when this one starts (zero-length ones only if they start before it)
        cands = [i for p in pids for i in ending_at(p, s)
                 if i != cur and (ev[i][0] < s - EPS / 2 or (ev[i][1] - ev[i][0] <= EPS and ev[i][0] < s))]
        if cands:
            # prefer communication (a dependency) over the stream's previous compute
            cands.sort(key=lambda i: (ev[i][2] == 'compute', -ev[i][0]))
            cur = cands[0]
            continue
        # nothing ends exactly at s: take the latest event before s on the members, count the gap
        best = None
        for p in pids:
            i = latest_before(p, s - EPS)
            if i is not None and (best is None or ev[i][1] > ev[best][1]):
                best = i
        if best is None:
            acc['gap'] += s
            break
        acc['gap'] += s - ev[best][1]
        cur = best
    return {'dir': d, 'iteration_s': total / 1e6,
            'critical_path_s': {k: round(v / 1e6, 4) for k, v in sorted(acc.items())},
            'steps': steps}


if __name__ == '__main__':
    for d in sys.argv[1:]:
        print(json.dumps(analyse(d)), flush=True)
