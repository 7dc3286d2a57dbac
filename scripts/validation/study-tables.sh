#!/usr/bin/env bash
# docs/validation.md's detailed tables of the paper's studies under the default assumptions, from
# the sweeps' results.json (each sweep runs, or resumes from its journal, in OUT_DIR/STUDY):
#   when-faster  examples/sweeps/reconfiguration-delay-when-faster.yaml against the delay sweep
#   batch        examples/sweeps/batch-vs-topoopt.yaml
#   alpha        examples/sweeps/alpha-equal-cost.yaml
#   nvl72        examples/sweeps/nvl72-outlook.yaml
#   scale        examples/sweeps/scale.yaml (its 4096-server points take minutes and ~2 GB each)
#
# Usage: scripts/validation/study-tables.sh [MFABRIC_BINARY] TABLE [OUT_DIR]
#   (defaults build/release/src/cli/mfabric and build/sweeps)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
table="${2:?which table: when-faster, batch, alpha, nvl72 or scale}"
out="${3:-$root/build/sweeps}"
sweep() { "$bin" sweep "$root/examples/sweeps/$1.yaml" --out "$out/$1" >/dev/null; }
case "$table" in
  when-faster) sweep reconfiguration-delay; sweep reconfiguration-delay-when-faster ;;
  batch) sweep batch-vs-topoopt ;;
  alpha) sweep alpha-equal-cost ;;
  nvl72) sweep nvl72-outlook ;;
  scale) sweep scale ;;
  *) echo "study-tables.sh: unknown table '$table'" >&2; exit 2 ;;
esac
python3 - "$out" "$table" <<'PY'
import json, sys
out, table = sys.argv[1:3]

def points(name):
    return [p for p in json.load(open(f"{out}/{name}/results.json"))["points"] if not p.get("error")]

def first(ps, **want):
    for p in ps:
        if all(p["fields"].get(k) == v for k, v in want.items()):
            return p
    return None

if table == "when-faster":
    always, faster = points("reconfiguration-delay"), points("reconfiguration-delay-when-faster")
    ft = first(always, fabric="fat-tree")["iteration_time_s"]
    print("| delay | iteration (s) | vs fat-tree | reconfigurations | `always` (the delay sweep) |")
    print("|---|---|---|---|---|")
    for p in faster:
        d = p["fields"].get("fabric.reconfiguration")
        a = first(always, **{"fabric.reconfiguration": d})
        if d is None or a is None:
            continue
        t = p["iteration_time_s"]
        print(f"| {d} | {t:.3f} | {t / ft:.2f} | {p['reconfiguration']['count']:,} | "
              f"{a['iteration_time_s']:.3f} |")
elif table == "batch":
    ps = points("batch-vs-topoopt")
    print("| micro-batch | TopoOpt / mFabric at 100G (seconds) | at 400G (seconds) | mean |")
    print("|---|---|---|---|")
    for mb in ("8", "32", "64"):
        cells, ratios = [], []
        for link in ("100G", "400G"):
            topo = mf = None
            for p in ps:
                f = p["fields"]
                if f.get("cluster.link") == link and f.get("workload.micro_batch") == mb:
                    if f["fabric"].startswith("topoopt"):
                        topo = p["iteration_time_s"]
                    else:
                        mf = p["iteration_time_s"]
            ratios.append(topo / mf)
            cells.append(f"{topo / mf:.2f} ({topo:.2f} / {mf:.2f})")
        print(f"| {mb} | {cells[0]} | {cells[1]} | {sum(ratios) / 2:.2f} |")
elif table == "alpha":
    ps = points("alpha-equal-cost")
    print("| alpha | NICs per server | eps_link | iteration (s) | reconfigurations |")
    print("|---|---|---|---|---|")
    for p in ps:
        f = p["fields"]
        if "fabric.alpha" in f:
            print(f"| {f['fabric.alpha']} | {f['cluster.nics_per_server']} | {f['fabric.eps_link']} | "
                  f"{p['iteration_time_s']:.2f} | {p['reconfiguration']['count']} |")
    ft = first(ps, fabric="fat-tree")
    print(f"| fat-tree (100G, 8 NICs) | | | {ft['iteration_time_s']:.2f} | |")
elif table == "nvl72":
    ps = points("nvl72-outlook")
    print("| fabric | GPUs | iteration (s) | scale-out network (paper convention) |")
    print("|---|---|---|---|")
    for p in ps:
        print(f"| `{p['fabric_spec']}` | {p['gpus']:,} | {p['iteration_time_s']:.1f} | "
              f"${p['cost_usd']['paper'] / 1e6:.1f}M |")
elif table == "scale":
    ps = points("scale")
    servers = []
    for p in ps:
        if p["fields"]["cluster.servers"] not in servers:
            servers.append(p["fields"]["cluster.servers"])
    print("| servers (GPUs) | iteration (s): fat-tree / rail / mFabric | tokens/s (M): fat-tree / "
          "rail / mFabric | network (paper): fat-tree / mFabric | tokens/s per $M: fat-tree / "
          "rail / mFabric | mFabric / fat-tree per $ | the same, built convention |")
    print("|---|---|---|---|---|---|---|")
    for s in servers:
        by = {}
        for p in ps:
            if p["fields"]["cluster.servers"] == s:
                f = p["fields"]["fabric"]
                by["mfabric" if "mfabric" in f else f] = p
        ft, rail, mf = by["fat-tree"], by["rail-optimized"], by["mfabric"]
        built = lambda p: p["tokens_per_s"] / p["cost_usd"]["built"]
        print(f"| {s} ({ft['gpus']:,}) | {ft['iteration_time_s']:.3f} / {rail['iteration_time_s']:.3f} / "
              f"{mf['iteration_time_s']:.3f} | {ft['tokens_per_s'] / 1e6:.2f} / "
              f"{rail['tokens_per_s'] / 1e6:.2f} / {mf['tokens_per_s'] / 1e6:.2f} | "
              f"${ft['cost_usd']['paper'] / 1e6:.1f}M / ${mf['cost_usd']['paper'] / 1e6:.1f}M | "
              f"{ft['tokens_per_s_per_musd']:,.0f} / {rail['tokens_per_s_per_musd']:,.0f} / "
              f"{mf['tokens_per_s_per_musd']:,.0f} | "
              f"{mf['tokens_per_s_per_musd'] / ft['tokens_per_s_per_musd']:.2f} | "
              f"{built(mf) / built(ft):.2f} |")
PY
