#!/usr/bin/env bash
# docs/validation.md, "The paper's studies under both sets of assumptions": the delay, alpha at
# equal cost, batch-vs-TopoOpt, NVL72 and scale sweeps of examples/sweeps/, each under the default
# assumptions and under the paper's (`mfabric sweep --assumptions paper`: the paper-measurement
# calibration and mFabric under paper-sim; docs/sweep.md), side by side with the paper's figure.
#
# Usage: scripts/validation/studies.sh [MFABRIC_BINARY] [OUT_DIR]
#   (defaults build/release/src/cli/mfabric and build/sweeps: each sweep writes OUT_DIR/STUDY and
#   OUT_DIR/paper-STUDY and resumes from its journal, so finished sweeps are only read).
#   About 2 minutes on 2 cores for the first eight sweeps, and 40 more for the two scale sweeps
#   (their 4096-server points take minutes and about 2 GB each).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
out="${2:-$root/build/sweeps}"
studies="reconfiguration-delay alpha-equal-cost batch-vs-topoopt nvl72-outlook scale"
for s in $studies; do
  "$bin" sweep "$root/examples/sweeps/$s.yaml" --out "$out/$s" >/dev/null
  "$bin" sweep "$root/examples/sweeps/$s.yaml" --assumptions paper --out "$out/paper-$s" >/dev/null
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]

def load(name):
    points = json.load(open(f"{out}/{name}/results.json"))["points"]
    return [(p["fields"], p.get("iteration_time_s") or None, p.get("error")) for p in points]

def time_of(points, **want):
    for fields, t, err in points:
        if all(fields.get(k) == v for k, v in want.items()) and not err:
            return t
    return None

def r(a, b):
    return f"{a / b:.2f}" if a and b else "-"

# Reconfiguration delay: mFabric / fat-tree per delay.
d, p = load("reconfiguration-delay"), load("paper-reconfiguration-delay")
print("**Reconfiguration delay** (Mixtral 8x22B, 128 servers, 400G; paper: flat up to 25 ms, "
      "clearly worse above 1 s): mFabric / fat-tree\n")
print("| delay | default (block, h800-measured) | paper's assumptions (paper-sim, paper-measurement) |")
print("|---|---|---|")
ft_d, ft_p = time_of(d, fabric="fat-tree"), time_of(p, fabric="fat-tree")
for fields, t, err in d:
    if "fabric.reconfiguration" not in fields:
        continue
    delay = fields["fabric.reconfiguration"]
    print(f"| {delay} | {r(t, ft_d)} | {r(time_of(p, **{'fabric.reconfiguration': delay}), ft_p)} |")
print()

# Alpha at equal cost: iteration time per alpha, and whether it falls as alpha grows.
d, p = load("alpha-equal-cost"), load("paper-alpha-equal-cost")
print("**Optical degree at equal cost** (Mixtral 8x22B, 100G; paper: iteration time falls as "
      "alpha grows): iteration time (s)\n")
print("| alpha | default | paper's assumptions |")
print("|---|---|---|")
seq_d, seq_p = [], []
for fields, t, err in d:
    if "fabric.alpha" not in fields:
        continue
    a = fields["fabric.alpha"]
    tp = time_of(p, **{"fabric.alpha": a})
    seq_d.append(t)
    seq_p.append(tp)
    print(f"| {a} | {t:.3f} | {tp:.3f} |" if t and tp else f"| {a} | - | - |")
falls = lambda s: all(b is not None and a is not None and b <= a for a, b in zip(s, s[1:]))
print(f"\nFalls at every step as alpha grows: default {'yes' if falls(seq_d) else 'no'}, "
      f"paper's assumptions {'yes' if falls(seq_p) else 'no'}.\n")

# Batch against TopoOpt: TopoOpt / mFabric per link and micro-batch.
d, p = load("batch-vs-topoopt"), load("paper-batch-vs-topoopt")
print("**Bigger batches against TopoOpt** (Mixtral 8x7B, 128 servers; paper: mFabric 1.8x and "
      "2.0x faster at batch 32 and 64): TopoOpt / mFabric\n")
print("| link | micro-batch | default | paper's assumptions |")
print("|---|---|---|---|")

def pair(points, link, mb):
    topo = mf = None
    for fields, t, err in points:
        if fields.get("cluster.link") != link or fields.get("workload.micro_batch") != mb or err:
            continue
        if fields["fabric"].startswith("topoopt"):
            topo = t
        else:
            mf = t
    return topo, mf

for link in ("100G", "400G"):
    for mb in ("8", "32", "64"):
        print(f"| {link} | {mb} | {r(*pair(d, link, mb))} | {r(*pair(p, link, mb))} |")
print()

# NVL72 outlook: NVL72 / mFabric.
d, p = load("nvl72-outlook"), load("paper-nvl72-outlook")
def nvl(points):
    nv = next((t for f, t, e in points if f.get("fabric") == "nvl72" and not e), None)
    mf = next((t for f, t, e in points if f.get("fabric") != "nvl72" and not e), None)
    return r(nv, mf)
print("**Outlook: NVL72 against mFabric with co-packaged optics** (DeepSeek-V3 on 2048 B200; "
      f"paper: mFabric 1.3x lower iteration time): NVL72 / mFabric: default {nvl(d)}, paper's "
      f"assumptions {nvl(p)}.")
print()

# Scale: tokens/s of each fabric, and mFabric's tokens/s per $M over the fat-tree's.
d, p = load("scale"), load("paper-scale")
full = {name: json.load(open(f"{out}/{name}/results.json"))["points"] for name in ("scale", "paper-scale")}

def by_fabric(points, servers):
    out = {}
    for q in points:
        if q["fields"].get("cluster.servers") != servers or q.get("error"):
            continue
        f = q["fields"]["fabric"]
        kind = "mfabric" if "mfabric" in f else f
        out[kind] = q
    return out

print("**Scale** (Mixtral 8x7B at 400G, 128 to 4096 servers, 8 micro-batches per pipeline; paper: "
      "comparable tokens/s, about 2x the performance per dollar): mFabric's tokens/s over the "
      "fat-tree's, and its tokens/s per $M over the fat-tree's\n")
print("| servers | default: tokens/s | default: per $M | paper's assumptions: tokens/s | per $M |")
print("|---|---|---|---|---|")
servers = []
for q in full["scale"]:
    s_ = q["fields"].get("cluster.servers")
    if s_ not in servers:
        servers.append(s_)
for s_ in servers:
    row = [s_]
    for name in ("scale", "paper-scale"):
        f = by_fabric(full[name], s_)
        m, t = f.get("mfabric"), f.get("fat-tree")
        if m and t and t["tokens_per_s"] and t["tokens_per_s_per_musd"]:
            row += [f"{m['tokens_per_s'] / t['tokens_per_s']:.2f}",
                    f"{m['tokens_per_s_per_musd'] / t['tokens_per_s_per_musd']:.2f}"]
        else:
            row += ["-", "-"]
    print("| " + " | ".join(row) + " |")
PY
