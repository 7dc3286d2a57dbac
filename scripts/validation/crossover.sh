#!/usr/bin/env bash
# docs/validation.md, "The crossover map": examples/sweeps/crossover.yaml (mFabric over the
# hierarchical-all-to-all fat-tree, by OCS delay and expert compute per layer; Mixtral 8x22B and
# DeepSeek-R1 at 100G and 400G; paper-sim and reuse-previous), as markdown: one table per model,
# link and policy (rows: expert compute per layer, the busiest GPU's forward, from `mfabric
# workload`; columns: the OCS delay), then the crossover: the least expert compute per layer at
# which mFabric stays within 5% of the fat-tree, per delay.
#
# Usage: scripts/validation/crossover.sh [MFABRIC_BINARY] [OUT_DIR]
#   (defaults build/release/src/cli/mfabric and build/sweeps/crossover; the sweep resumes from
#   OUT_DIR's journal, so a finished sweep is only read). 220 points, about 35 minutes on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
out="${2:-$root/build/sweeps/crossover}"
"$bin" sweep "$root/examples/sweeps/crossover.yaml" --out "$out" >/dev/null
# Expert compute per layer (the busiest GPU's forward, averaged over layers and micro-batches) of
# each model at each efficiency the sweep uses.
work="$(mktemp -d -t mfabric-crossover.XXXXXX)"
trap 'rm -rf "$work"' EXIT
declare -A shape=([mixtral-8x22b]="--convention paper --tp 8 --pp 8 --ep 8" [deepseek-r1]="--convention paper --tp 1 --pp 16 --ep 64")
for model in mixtral-8x22b deepseek-r1; do
  for gemm in 1.0 0.5 0.25 0.175 0.0645; do
    printf 'name: x\ncompute: {expert_gemm: %s}\n' "$gemm" >"$work/c.yaml"
    # shellcheck disable=SC2086
    "$bin" workload --model "$model" --gpus 1024 ${shape[$model]} --calibration "$work/c.yaml" \
      --json | python3 -c "import json,sys; print('$model', '$gemm', json.load(sys.stdin)['moe_layer_forward_s']['experts'])"
  done
done >"$work/compute.txt"
python3 - "$out/results.json" "$work/compute.txt" <<'PY'
import json, re, sys
results = json.load(open(sys.argv[1]))
compute = {}
for line in open(sys.argv[2]):
    model, gemm, seconds = line.split()
    compute[(model, gemm)] = float(seconds) * 1e3
cells = results["heatmap"]["cells"]
delays = ["10us", "1ms", "10ms", "25ms", "100ms"]
panels = []
for c in cells:
    if c["panel"] not in panels:
        panels.append(c["panel"])

def model_of(panel):
    return re.search(r"model: ([\w.-]+)", panel).group(1)

crossover = {}
for panel in panels:
    model = model_of(panel)
    link = re.search(r"cluster.link=(\w+)", panel).group(1)
    policy = re.search(r"fabric.policy=([\w-]+)", panel).group(1)
    grid = {(c["y"], c["x"]): c["ratio"] for c in cells if c["panel"] == panel}
    gemms = sorted({y for (y, x) in grid}, key=lambda g: compute[(model, g)])
    print(f"**{model}, {link}, {policy}**: mFabric / fat-tree (hierarchical all-to-all)\n")
    print("| expert compute per layer (efficiency) | " + " | ".join(delays) + " |")
    print("|---|" + "---|" * len(delays))
    for g in gemms:
        row = [f"{grid[(g, d)]:.3f}" if (g, d) in grid else "-" for d in delays]
        print(f"| {compute[(model, g)]:.1f} ms ({g}) | " + " | ".join(row) + " |")
    # Per delay: the least compute from which on (every larger one too) mFabric is within 5%.
    for d in delays:
        least = None
        for g in reversed(gemms):
            if (g, d) not in grid or grid[(g, d)] > 1.05:
                break
            least = compute[(model, g)]
        if least is not None:
            crossover[(model, link, policy, d)] = least
    print()
print("The crossover: the least expert compute per layer (the busiest GPU's forward) from which "
      "on mFabric stays within 5% of the fat-tree, per OCS delay (\"-\": not within 5% even at "
      "the most compute of the grid):\n")
print("| model | link | policy | " + " | ".join(delays) + " |")
print("|---|---|---|" + "---|" * len(delays))
for panel in panels:
    model = model_of(panel)
    link = re.search(r"cluster.link=(\w+)", panel).group(1)
    policy = re.search(r"fabric.policy=([\w-]+)", panel).group(1)
    row = []
    for d in delays:
        v = crossover.get((model, link, policy, d))
        row.append(f"{v:.0f} ms" if v is not None else "-")
    print(f"| {model} | {link} | {policy} | " + " | ".join(row) + " |")
PY
