#!/usr/bin/env bash
# Reconfiguration policies (docs/control-plane.md, "Policies"): iteration time of Mixtral 8x22B
# (TP 8, PP 8, EP 8) and Qwen-MoE with 32 experts (TP 1, PP 4, EP 32) on 128 servers of 8 H800
# at 100G and 400G, mFabric (alpha 6, greedy, proxy all-to-all) under every policy, with the
# OCS delay at 25 ms and 1 s; the fat-tree alongside.
#
# Usage: scripts/validation/policies.sh [MFABRIC_BINARY]   (default build/release/src/cli/mfabric)
#        SWITCHING=when-faster scripts/validation/policies.sh   (the regions' switching rule;
#        default always)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
switching="${SWITCHING:-always}"
work="$(mktemp -d -t mfabric-policies.XXXXXX)"
echo "experiments in $work (switching: $switching)" >&2
echo

declare -A workload=(
  [mixtral-8x22b]="{model: mixtral-8x22b, convention: paper, tp: 8, pp: 8, ep: 8, micro_batch: 8, global_batch: 128}"
  [qwen-moe-32]="{model: qwen-moe-32, convention: paper, tp: 1, pp: 4, ep: 32, micro_batch: 8, global_batch: 128}"
)
declare -A region=([mixtral-8x22b]=8 [qwen-moe-32]=4)
policies=(block reuse-previous eps-during-switch predict oracle)

# iteration time in seconds of one run
run() {
  local name="$1" model="$2" link="$3" fabric="$4"
  local f="$work/$name.yaml"
  printf 'seed: 1\ncluster: {servers: 128, link: %s, gpu: h800}\nfabric: %s\nworkload: %s\n' \
    "$link" "$fabric" "${workload[$model]}" >"$f"
  "$bin" simulate "$f" --json |
    python3 -c 'import json, sys; print("%.3f" % json.load(sys.stdin)["iteration_time_s"])'
}

header="| model | link | delay | fat-tree |"
rule="|---|---|---|---|"
for p in "${policies[@]}"; do header+=" $p |"; rule+="---|"; done
echo "$header"
echo "$rule"
for model in mixtral-8x22b qwen-moe-32; do
  for link in 100G 400G; do
    base=$(run "$model-$link-fat-tree" "$model" "$link" fat-tree)
    for delay in 25ms 1s; do
      row="| $model | $link | $delay | $base s |"
      for p in "${policies[@]}"; do
        t=$(run "$model-$link-$delay-$p" "$model" "$link" \
          "{kind: mfabric, alpha: 6, region: ${region[$model]}, reconfiguration: $delay, policy: $p, switching: $switching}")
        row+=" $t s ($(python3 -c "print(f'{$t/$base:.2f}')")) |"
      done
      echo "$row"
    done
  done
done
