#!/usr/bin/env bash
# docs/validation.md, "The paper's evaluation: mfabric compare": `mfabric compare` on its default
# (the paper's evaluation under the project's default assumptions), per model the four link
# speeds of each figure: mFabric / fat-tree, TopoOpt / mFabric, fat-tree 3:1 / mFabric, perf/$.
#
# Usage: scripts/validation/compare-default.sh [MFABRIC_BINARY] [OUT_DIR]
#   (defaults build/release/src/cli/mfabric and build/validation/paper-assumptions, whose
#   default.json paper-assumptions.sh shares; a comparison already there is not run again).
#   About 21 minutes on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
out="${2:-$root/build/validation/paper-assumptions}"
mkdir -p "$out"
if [ ! -s "$out/default.json" ]; then
  "$bin" compare --full --json >"$out/default.json.tmp"
  mv "$out/default.json.tmp" "$out/default.json"
fi
python3 - "$out/default.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
R = {(r["model"], r["link_gbps"], r["fabric"]): r for r in d["runs"] if not r.get("error")}
models = []
for r in d["runs"]:
    if r["model"] not in models:
        models.append(r["model"])
links = sorted({r["link_gbps"] for r in d["runs"]})

def t(m, l, f):
    r = R.get((m, l, f))
    return r["iteration_time_s"] if r else None

def cells(m, value):
    return " / ".join(value(m, l) for l in links)

def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"

print(f"Per model, at {' / '.join(f'{l:g}G' for l in links)} (iteration time ratios; > 1 favours "
      "mFabric in the middle two columns):\n")
print("| model | mFabric / fat-tree | TopoOpt / mFabric | fat-tree 3:1 / mFabric | perf/$ vs fat-tree |")
print("|---|---|---|---|---|")
for m in models:
    ppd = lambda m, l: (f"{R[(m, l, 'mfabric')]['perf_per_dollar_vs_fat_tree']:.2f}"
                        if (m, l, "mfabric") in R and R[(m, l, "mfabric")].get(
                            "perf_per_dollar_vs_fat_tree") else "-")
    print(f"| {m} | {cells(m, lambda m, l: ratio(t(m, l, 'mfabric'), t(m, l, 'fat-tree')))} | "
          f"{cells(m, lambda m, l: ratio(t(m, l, 'topoopt'), t(m, l, 'mfabric')))} | "
          f"{cells(m, lambda m, l: ratio(t(m, l, 'fat-tree-3to1'), t(m, l, 'mfabric')))} | "
          f"{cells(m, ppd)} |")
PY
