#!/usr/bin/env bash
# End-to-end figures of docs/validation.md ("mFabric and TopoOpt against the fat-tree"):
# Mixtral 8x22B and 8x7B on 128 servers of 8 H800 at 100G and 400G, on the non-blocking
# fat-tree, mFabric (alpha 6, 25 ms, block, greedy; proxy and direct all-to-all) and TopoOpt,
# then the reconfiguration-delay sweep (Mixtral 8x22B, 400G, 1us..10s) and the authors'
# simulator's assumption (one static token matrix for every layer and iteration).
#
# Usage: scripts/validation/fabrics.sh [MFABRIC_BINARY]   (default build/release/src/cli/mfabric)
# Prints markdown tables; each run is `mfabric simulate FILE --json` on an experiment written to a
# temporary directory (printed first, kept for inspection).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
work="$(mktemp -d -t mfabric-validation.XXXXXX)"
echo "experiments in $work" >&2
echo

# workload lines of the paper's setup (reference section 5); region = EP x TP / 8 servers
declare -A workload=(
  [mixtral-8x22b]="{model: mixtral-8x22b, convention: paper, tp: 8, pp: 8, ep: 8, micro_batch: 8, global_batch: 128}"
  [mixtral-8x7b]="{model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, ep: 8, micro_batch: 8, global_batch: 128}"
)
declare -A region=([mixtral-8x22b]=8 [mixtral-8x7b]=4)

# run NAME MODEL LINK FABRIC [EXTRA-YAML-LINE] -> prints "iteration_s wall_s reconfigs held_s"
run() {
  local name="$1" model="$2" link="$3" fabric="$4" extra="${5:-}"
  local f="$work/$name.yaml"
  printf 'seed: 1\ncluster: {servers: 128, link: %s, gpu: h800}\nfabric: %s\nworkload: %s\n%s\n' \
    "$link" "$fabric" "${workload[$model]}" "$extra" >"$f"
  "$bin" simulate "$f" --json >"$work/$name.json"
  python3 - "$work/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d.get("reconfiguration") or {}
print(f'{d["iteration_time_s"]:.3f} {d["wall_time_s"]:.2f} {r.get("count", "-")} '
      f'{r.get("held_time_s", 0):.1f}')
PY
}

mfabric() {  # MODEL DELAY
  echo "{kind: mfabric, alpha: 6, region: ${region[$1]}, reconfiguration: $2, policy: block, planner: greedy}"
}

echo "| model | link | fabric | iteration (s) | vs fat-tree | reconfigurations | all-to-all hold (s, summed) | wall (s) |"
echo "|---|---|---|---|---|---|---|---|"
for model in mixtral-8x22b mixtral-8x7b; do
  for link in 100G 400G; do
    read -r base wall _ _ < <(run "$model-$link-fat-tree" "$model" "$link" fat-tree)
    echo "| $model | $link | fat-tree | $base | 1.00 | - | - | $wall |"
    for a2a in proxy direct; do
      read -r t wall n held < <(run "$model-$link-mfabric-$a2a" "$model" "$link" \
        "$(mfabric "$model" 25ms)" "simulation: {algorithms: {all_to_all: $a2a}}")
      echo "| $model | $link | mfabric ($a2a) | $t | $(python3 -c "print(f'{$t/$base:.2f}')") | $n | $held | $wall |"
    done
    if read -r t wall _ _ < <(run "$model-$link-topoopt" "$model" "$link" topoopt 2>"$work/topoopt.err"); then
      echo "| $model | $link | topoopt | $t | $(python3 -c "print(f'{$t/$base:.2f}')") | - | - | $wall |"
    else
      echo "| $model | $link | topoopt | failed: $(head -1 "$work/topoopt.err") | | | | |"
    fi
  done
done

echo
echo "Reconfiguration delay, Mixtral 8x22B at 400G, mFabric (proxy, block, greedy):"
echo
echo "| delay | iteration (s) | vs fat-tree | all-to-all hold (s, summed) |"
echo "|---|---|---|---|"
read -r base _ _ _ < <(run "delay-fat-tree" mixtral-8x22b 400G fat-tree)
for delay in 1us 1ms 10ms 25ms 100ms 1s 10s; do
  read -r t _ _ held < <(run "delay-$delay" mixtral-8x22b 400G "$(mfabric mixtral-8x22b "$delay")")
  echo "| $delay | $t | $(python3 -c "print(f'{$t/$base:.2f}')") | $held |"
done

echo
echo "The authors' simulator's assumption: one static token matrix for every layer and iteration"
echo "(the first record of the synthetic trace, seed 1), Mixtral 8x22B at 400G:"
echo
"$bin" trace --model mixtral-8x22b --ep 8 --out "$work/trace.json" >/dev/null
python3 - "$work/trace.json" "$work/static.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
json.dump(t["records"][0]["tokens"], open(sys.argv[2], "w"))
PY
echo "| fabric | iteration (s) | vs fat-tree | reconfigurations |"
echo "|---|---|---|---|"
static="{model: mixtral-8x22b, convention: paper, tp: 8, pp: 8, ep: 8, micro_batch: 8, global_batch: 128, routing: {trace: $work/static.json}}"
workload[static]="$static"
region[static]=8
read -r base _ _ _ < <(run static-fat-tree static 400G fat-tree)
echo "| fat-tree | $base | 1.00 | - |"
read -r t _ n _ < <(run static-mfabric static 400G "$(mfabric static 25ms)")
echo "| mfabric (proxy) | $t | $(python3 -c "print(f'{$t/$base:.2f}')") | $n |"
