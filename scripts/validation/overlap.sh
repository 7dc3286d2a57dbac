#!/usr/bin/env bash
# docs/validation.md, "Overlap models": the paper's job (Mixtral 8x22B, TP 8 PP 8 EP 8, 128
# servers, 400G, paper-measurement calibration) on the fat-tree and on mFabric under paper-sim,
# with each overlap model of `workload.overlap` (docs/workload.md, "Overlap").
#
# Usage: scripts/validation/overlap.sh [MFABRIC_BINARY]   (12 runs, about a minute and a half)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
work="$(mktemp -d -t mfabric-overlap.XXXXXX)"
trap 'rm -rf "$work"' EXIT
run() {  # FABRIC OVERLAP -> iteration seconds
  printf 'cluster: {servers: 128, link: 400G}\nfabric: %s\nworkload: {model: mixtral-8x22b, convention: paper, tp: 8, pp: 8, ep: 8, overlap: %s}\ncalibration: paper-measurement\n' \
    "$1" "$2" >"$work/e.yaml"
  "$bin" simulate "$work/e.yaml" --json | python3 -c 'import json, sys; print("%.3f" % json.load(sys.stdin)["iteration_time_s"])'
}
echo "| overlap | fat-tree (s) | mFabric paper-sim (s) |"
echo "|---|---|---|"
while IFS='|' read -r name overlap; do
  a="$(run fat-tree "$overlap")"
  b="$(run '{kind: mfabric, region: 8, policy: paper-sim}' "$overlap")"
  echo "| $name | $a | $b |"
done <<'LIST'
none|{}
grad_reduce|{grad_reduce: true}
ep_comm|{ep_comm: true}
tp_comm|{tp_comm: true}
grad_reduce + ep_comm|{grad_reduce: true, ep_comm: true}
all three|{grad_reduce: true, ep_comm: true, tp_comm: true}
LIST
