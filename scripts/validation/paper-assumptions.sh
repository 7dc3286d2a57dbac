#!/usr/bin/env bash
# docs/validation.md, "The paper's evaluation under its own assumptions": `mfabric compare` on
# the paper's evaluation (5 models x 100/200/400/800G on 128 servers of 8 H800) under both sets
# of assumptions (docs/compare.md), as markdown tables: per model and link mFabric / fat-tree,
# TopoOpt / mFabric, 3:1 / mFabric, the hierarchical-all-to-all fat-tree / mFabric and perf/$,
# each against the paper's stated figure; and the holds on the critical path.
#
# Usage: scripts/validation/paper-assumptions.sh [MFABRIC_BINARY] [OUT_DIR]
#   (defaults build/release/src/cli/mfabric and a temporary directory, printed first)
#   PAPER_ASSUMPTIONS_ARGS="--models mixtral-8x22b --links 400G" narrows the runs.
# About 40 minutes on 2 cores for both comparisons (docs/performance.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
out="${2:-$(mktemp -d -t mfabric-paper-assumptions.XXXXXX)}"
mkdir -p "$out"
echo "outputs in $out; commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+changes')"
echo
# A comparison already in OUT_DIR (paper.json, default.json) is not run again.
if [ ! -s "$out/paper.json" ]; then
  # shellcheck disable=SC2086
  "$bin" compare --assumptions paper ${PAPER_ASSUMPTIONS_ARGS:-} --json >"$out/paper.json.tmp"
  mv "$out/paper.json.tmp" "$out/paper.json"
fi
if [ ! -s "$out/default.json" ]; then
  # shellcheck disable=SC2086
  "$bin" compare ${PAPER_ASSUMPTIONS_ARGS:-} --json >"$out/default.json.tmp"
  mv "$out/default.json.tmp" "$out/default.json"
fi
python3 - "$out/paper.json" "$out/default.json" <<'PY'
import json, sys
paper, default = (json.load(open(p)) for p in sys.argv[1:3])

def runs(d):
    out = {}
    for r in d["runs"]:
        if r.get("error"):
            continue
        out[(r["model"], r["link_gbps"], r["fabric"])] = r
    return out

P, D = runs(paper), runs(default)
keys = sorted({(m, l) for (m, l, f) in P}, key=lambda k: (k[0], k[1]))
stated = {100: "1.2-1.5", 200: "1.4-1.8", 400: "1.9-2.3", 800: "2.0-2.4"}

def t(R, m, l, f):
    r = R.get((m, l, f))
    return r["iteration_time_s"] if r else None

def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"

print("| model | link | mFabric / fat-tree (paper: ~1) | default | perf/$ (paper) | default | "
      "TopoOpt / mFabric (paper 1.3-1.5) | default | 3:1 / mFabric (paper: up to 1.6, 8x22B) | "
      "default | fat-tree+hier. / mFabric | crit. holds (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for m, l in keys:
    mp, md = t(P, m, l, "mfabric"), t(D, m, l, "mfabric")
    fp, fd = t(P, m, l, "fat-tree"), t(D, m, l, "fat-tree")
    pp = P.get((m, l, "mfabric"), {}).get("perf_per_dollar_vs_fat_tree")
    pd = D.get((m, l, "mfabric"), {}).get("perf_per_dollar_vs_fat_tree")
    rec = (P.get((m, l, "mfabric")) or {}).get("reconfiguration") or {}
    print(f"| {m} | {l:g}G | {ratio(mp, fp)} | {ratio(md, fd)} | "
          f"{pp:.2f} ({stated.get(int(l), '-')}) | {pd:.2f} | "
          f"{ratio(t(P, m, l, 'topoopt'), mp)} | {ratio(t(D, m, l, 'topoopt'), md)} | "
          f"{ratio(t(P, m, l, 'fat-tree-3to1'), mp)} | {ratio(t(D, m, l, 'fat-tree-3to1'), md)} | "
          f"{ratio(t(P, m, l, 'fat-tree+hierarchical'), mp)} | "
          f"{rec.get('critical_holds', '-')} ({rec.get('critical_held_s', 0):.2f}) |")

def mean_ratio(R, a, b):
    v = [t(R, m, l, a) / t(R, m, l, b) for m, l in keys if t(R, m, l, a) and t(R, m, l, b)]
    return sum(v) / len(v) if v else float("nan")

print()
print(f"Means over the rows: mFabric / fat-tree {mean_ratio(P, 'mfabric', 'fat-tree'):.2f} "
      f"(default {mean_ratio(D, 'mfabric', 'fat-tree'):.2f}); TopoOpt / mFabric "
      f"{mean_ratio(P, 'topoopt', 'mfabric'):.2f} (default {mean_ratio(D, 'topoopt', 'mfabric'):.2f}, "
      "paper 1.4-1.5).")
checks = paper.get("paper_checks", [])
if checks:
    within = sum(1 for c in checks if c["within_10_percent"])
    print(f"Within 10% of the paper's stated figures: {within} of {len(checks)} checks "
          "(`paper_checks` in the JSON).")
PY
