#!/usr/bin/env bash
# docs/validation.md, "Network cost": the fat-tree's network cost over mFabric's at 128 servers,
# 100/200/400/800G, in the paper's convention (Table 4's formulas), as built, and in the authors'
# public calculator's (docs/cost-model.md), from `mfabric cost --json`.
#
# Usage: scripts/validation/cost.sh [MFABRIC_BINARY]   (under a second)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
work="$(mktemp -d -t mfabric-cost.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for convention in paper built calculator; do
  for link in 100G 200G 400G 800G; do
    "$bin" cost --convention "$convention" --link "$link" --fabric fat-tree --fabric mfabric \
      --json >"$work/$convention-$link.json"
  done
done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print("| link | fat-tree / mFabric, paper convention | as built | calculator |")
print("|---|---|---|---|")
means = []
for link in ("100G", "200G", "400G", "800G"):
    row = []
    for convention in ("paper", "built", "calculator"):
        runs = {r["kind"]: r["cost_usd"]["total"] for r in json.load(open(f"{work}/{convention}-{link}.json"))}
        ratio = runs["fat-tree"] / runs["mfabric"]
        row.append(f"{ratio:.2f}x")
        if convention == "paper":
            means.append(ratio)
    print(f"| {link} | " + " | ".join(row) + " |")
print(f"\nMean over the four link speeds, paper convention: {sum(means) / len(means):.2f}x "
      "(the paper: about 2.0x).")
PY
