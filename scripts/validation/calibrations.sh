#!/usr/bin/env bash
# docs/validation.md, "The verdict under measured compute": the paper's full evaluation
# (`mfabric compare --full`: five models, four link speeds, 1024 H800) under the measured kernels
# (`h800-measured`, every fabric), and the fat-tree and mFabric under `roofline` and
# `paper-measurement` beside it. Per model and link: the fat-tree's iteration time and mFabric's
# over it under each calibration; then, under h800-measured, the figure ratios of
# compare-default.sh (mFabric / fat-tree, TopoOpt / mFabric, fat-tree 3:1 / mFabric, perf/$).
#
# Usage: scripts/validation/calibrations.sh [MFABRIC_BINARY] [OUT_DIR]
#   (defaults build/release/src/cli/mfabric and build/validation; each comparison is made in
#   OUT_DIR/full-CALIBRATION, and one already there is only read). About 21 minutes on
#   2 cores for h800-measured, 9 for each of the other two.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
out="${2:-$root/build/validation}"
mkdir -p "$out"
# A comparison whose results.json is there is read, not run again (delete it to rerun; an
# unfinished one resumes from its journal).
[ -s "$out/full-h800-measured/results.json" ] ||
  "$bin" compare --full --calibration h800-measured -q -o "$out/full-h800-measured" >/dev/null
for cal in roofline paper-measurement; do
  [ -s "$out/full-$cal/results.json" ] ||
    "$bin" compare --full --calibration "$cal" --fabrics fat-tree,mfabric -q -o "$out/full-$cal" \
      >/dev/null
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
cals = ["roofline", "paper-measurement", "h800-measured"]
runs = {}
for cal in cals:
    for r in json.load(open(f"{out}/full-{cal}/results.json"))["runs"]:
        if not r.get("error"):
            runs[(cal, r["model"], r["link_gbps"], r["fabric"])] = r
models = []
for (cal, m, l, f) in runs:
    if m not in models:
        models.append(m)
links = sorted({l for (_, _, l, _) in runs})

def time(cal, m, l, f):
    r = runs.get((cal, m, l, f))
    return r["iteration_time_s"] if r else None

def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"

print("Per model and link: the fat-tree's iteration time (s) and mFabric / fat-tree, under each "
      "calibration (> 1: mFabric slower):\n")
print("| model | link | " + " | ".join(f"{c}: fat-tree, mFabric / fat-tree" for c in cals) + " |")
print("|---|---|" + "---|" * len(cals))
for m in models:
    for l in links:
        cells = []
        for c in cals:
            ft, mf = time(c, m, l, "fat-tree"), time(c, m, l, "mfabric")
            cells.append(f"{ft:.2f}, {ratio(mf, ft)}" if ft else "-")
        print(f"| {m} | {l:g}G | " + " | ".join(cells) + " |")
print()
print("Under h800-measured, per model at " + " / ".join(f"{l:g}G" for l in links) +
      " (iteration time ratios; > 1 favours mFabric in the middle two columns):\n")
print("| model | mFabric / fat-tree | TopoOpt / mFabric | fat-tree 3:1 / mFabric | perf/$ vs fat-tree |")
print("|---|---|---|---|---|")
cal = "h800-measured"
for m in models:
    def cells(value):
        return " / ".join(value(l) for l in links)
    def ppd(l):
        r = runs.get((cal, m, l, "mfabric"))
        v = r.get("perf_per_dollar_vs_fat_tree") if r else None
        return f"{v:.2f}" if v else "-"
    print(f"| {m} | {cells(lambda l: ratio(time(cal, m, l, 'mfabric'), time(cal, m, l, 'fat-tree')))} | "
          f"{cells(lambda l: ratio(time(cal, m, l, 'topoopt'), time(cal, m, l, 'mfabric')))} | "
          f"{cells(lambda l: ratio(time(cal, m, l, 'fat-tree-3to1'), time(cal, m, l, 'mfabric')))} | "
          f"{cells(ppd)} |")
PY
