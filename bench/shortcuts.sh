#!/usr/bin/env bash
# The shortcuts' errors against the exact runs (docs/shortcuts.md, docs/performance.md
# "Shortcuts"). Prints Markdown tables for docs/performance.md.
#
# Usage:
#   bench/shortcuts.sh jobs [BINARY]
#       small pipelines and the recipes' production jobs, each simulated three ways: exact (no
#       shortcut), extrapolated with the exact solver (simulation.extrapolate: true), and the
#       default; iteration-time errors against exact, wall times and peak memory (GNU time)
#   bench/shortcuts.sh compare EXACT.json SHORTCUT.json
#       two `mfabric compare --json` results of the same runs (say `--exact` and `--solver fast`):
#       per-run iteration-time errors, the worst, and whether each verdict's ratio stays on the
#       same side of 1
set -euo pipefail
cd "$(dirname "$0")/.."

jobs() {
  local bin=${1:-build/release/src/cli/mfabric}
  if [ ! -x /usr/bin/time ]; then
    echo "bench/shortcuts.sh needs GNU time (/usr/bin/time, Debian package 'time')" >&2
    exit 1
  fi
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # name|cluster|workload
  local rows=(
    "Mixtral 8x7B layers, 512 GPUs, paper, TP 4 PP 4 EP 8, 64 micro-batches|{servers: 64, link: 400G, gpu: h800}|{model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, ep: 8, micro_batch: 8, global_batch: 2048}"
    "the same, interleaved VP 2|{servers: 64, link: 400G, gpu: h800}|{model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, vp: 2, schedule: interleaved, ep: 8, micro_batch: 8, global_batch: 2048}"
    "Mixtral 8x7B layers, 256 GPUs, TP 2 PP 4 EP 8, 128 micro-batches|{servers: 32, link: 400G, gpu: h800}|{model: mixtral-8x7b, tp: 2, pp: 4, ep: 8, micro_batch: 1, global_batch: 4096, recipe: false, distributed_optimizer: true}"
    "the same with the EP overlap|{servers: 32, link: 400G, gpu: h800}|{model: mixtral-8x7b, tp: 2, pp: 4, ep: 8, micro_batch: 1, global_batch: 4096, recipe: false, distributed_optimizer: true, overlap: {ep_comm: true}}"
    "Mixtral 8x22B recipe, 128 H100 (folding)|{servers: 16, link: 400G, gpu: h100, nvswitch: 450GB/s}|{model: mixtral-8x22b}"
    "Qwen3-235B recipe without the EP overlap, 256 H100|{servers: 32, link: 400G, gpu: h100, nvswitch: 450GB/s}|{model: qwen3-235b-a22b}"
    "Qwen3-235B recipe, 256 H100 (EP overlap)|{servers: 32, link: 400G, gpu: h100, nvswitch: 450GB/s}|{model: qwen3-235b-a22b, overlap: {ep_comm: true}}"
    "DeepSeek-V3 recipe's job as 1F1B, 2,048 H800|{servers: 256, link: 400G, gpu: h800, nvswitch: 200GB/s}|{model: deepseek-v3, tp: 1, pp: 16, ep: 64, micro_batch: 1, global_batch: 15360, precision: fp8, recompute: selective, distributed_optimizer: true, routing: {synthetic: {balance: forced}, max_nodes: 4}}"
    "DeepSeek-V3 recipe (DualPipe), 2,048 H800|{servers: 256, link: 400G, gpu: h800, nvswitch: 200GB/s}|{model: deepseek-v3, routing: {synthetic: {balance: forced}, max_nodes: 4}}"
  )
  echo "| job | micro-batches | exact: iteration, wall, memory | extrapolated: error, wall, memory, bound | default: error, wall, memory, shortcuts |"
  echo "|---|---:|---|---|---|"
  local row name cluster workload mode simulation
  for row in "${rows[@]}"; do
    IFS='|' read -r name cluster workload <<<"$row"
    for mode in exact forced default; do
      case $mode in
        exact) simulation="simulation: {extrapolate: false, solver: exact}" ;;
        forced) simulation="simulation: {extrapolate: true, solver: exact}" ;;
        default) simulation="" ;;
      esac
      printf 'seed: 1\ncluster: %s\nfabric: fat-tree\nworkload: %s\n%s\n' "$cluster" "$workload" \
        "$simulation" >"$tmp/$mode.yaml"
      /usr/bin/time -f "%e %M" -o "$tmp/$mode.time" "$bin" simulate "$tmp/$mode.yaml" --json \
        --quiet >"$tmp/$mode.json"
    done
    python3 - "$name" "$tmp" <<'PY'
import json, sys
name, tmp = sys.argv[1], sys.argv[2]
def load(mode):
    wall, rss = open(f"{tmp}/{mode}.time").read().split()
    return json.load(open(f"{tmp}/{mode}.json")), float(wall), int(rss) // 1024
(e, ew, em), (f, fw, fm), (d, dw, dm) = load("exact"), load("forced"), load("default")
def err(r):
    return f"{100 * (r['iteration_time_s'] / e['iteration_time_s'] - 1):+.3f}%"
def used(r):
    out = []
    for s in r.get("shortcuts", []):
        out.append(f"{s['name']} (bound {100 * s['bound']:.2f}%)" if s["used"] else f"no {s['name']}")
    return ", ".join(out) or "none"
forced = (f"{err(f)}, {fw:.1f} s, {fm} MB, {100 * f['shortcuts'][0]['bound']:.2f}%"
          if f.get("shortcuts") and f["shortcuts"][0]["used"] else "refused (runs in full)")
print(f"| {name} | {e['gpu_busy']['micro_batches']} | {e['iteration_time_s']:.3f} s, {ew:.1f} s, {em} MB "
      f"| {forced} | {err(d)}, {dw:.1f} s, {dm} MB, {used(d)} |")
PY
  done
}

compare() {
  python3 - "$1" "$2" <<'PY'
import json, sys
exact, fast = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: (r["model"], r["link_gbps"], r["fabric"])
base = {key(r): r for r in exact["runs"]}
worst, flips, by_fabric = (0.0, None), 0, {}
for r in fast["runs"]:
    b = base[key(r)]
    e = r["iteration_time_s"] / b["iteration_time_s"] - 1
    by_fabric.setdefault(r["fabric"], []).append(abs(e))
    if abs(e) > abs(worst[0]): worst = (e, key(r))
    rel_b, rel_f = b.get("relative_iteration_time"), r.get("relative_iteration_time")
    if rel_b and rel_f and (rel_b < 1) != (rel_f < 1): flips += 1
print("| fabric | runs | largest error | mean error |")
print("|---|---:|---:|---:|")
for f, errs in by_fabric.items():
    print(f"| {f} | {len(errs)} | {100 * max(errs):.3f}% | {100 * sum(errs) / len(errs):.4f}% |")
print(f"\nworst: {100 * worst[0]:+.3f}% ({worst[1][0]}, {worst[1][1]:g}G, {worst[1][2]}); "
      f"verdicts (faster or slower than the fat-tree) that change side: {flips}")
PY
}

case "${1:-}" in
  jobs) shift; jobs "$@" ;;
  compare) shift; compare "$@" ;;
  *) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
