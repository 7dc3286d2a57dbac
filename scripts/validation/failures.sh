#!/usr/bin/env bash
# The failure figures of docs/validation.md ("Failures"): the paper's 1024-GPU, 400G setup on
# mFabric (alpha 6, 25 ms, block, greedy) with one part failed at start, against the same cluster
# healthy. The cluster has one spare region (136 servers: 128 for the job, dp given) so that a
# failed GPU or server has a spare; the healthy run uses the same cluster.
#
#   DeepSeek-R1 (TP 1, PP 16, EP 64): one EPS NIC, one OCS port, both EPS NICs of a server
#     (relay through a peer), one server (spare server over the EPS). Paper: NIC +3.3%,
#     server +6.5%.
#   Mixtral 8x22B (TP 8, PP 8, EP 8, DP 2): one GPU (spare GPU in the spare region). Paper: +5.1%.
#
# Usage: scripts/validation/failures.sh [MFABRIC_BINARY]   (default build/release/src/cli/mfabric)
#        scripts/validation/failures.sh BINARY paper   (or ASSUMPTIONS=paper: the paper's
#        assumptions, docs/compare.md: the paper-measurement calibration and mFabric under
#        paper-sim)
# Prints a markdown table; each run is `mfabric simulate FILE --json` on an experiment written to
# a temporary directory (printed first, kept for inspection).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
work="$(mktemp -d -t mfabric-failures.XXXXXX)"
echo "experiments in $work" >&2
echo

declare -A workload=(
  [deepseek-r1]="{model: deepseek-r1, convention: paper, tp: 1, pp: 16, ep: 64, dp: 1, micro_batch: 8, global_batch: 128}"
  [mixtral-8x22b]="{model: mixtral-8x22b, convention: paper, tp: 8, pp: 8, ep: 8, dp: 2, micro_batch: 8, global_batch: 128}"
)
policy=block
calibration=""
if [ "${2:-${ASSUMPTIONS:-default}}" = paper ]; then
  policy=paper-sim
  calibration="calibration: paper-measurement"
fi
fabric="{kind: mfabric, alpha: 6, region: 8, reconfiguration: 25ms, policy: $policy, planner: greedy}"

# run NAME MODEL FAILURES -> prints "iteration_s wall_s relays failed_ports spares delivered/sent"
run() {
  local name="$1" model="$2" failures="$3"
  local f="$work/$name.yaml"
  printf 'seed: 1\ncluster: {servers: 136, link: 400G, gpu: h800}\nfabric: %s\nworkload: %s\n' \
    "$fabric" "${workload[$model]}" >"$f"
  [ -n "$failures" ] && printf 'failures: %s\n' "$failures" >>"$f"
  [ -n "$calibration" ] && printf '%s\n' "$calibration" >>"$f"
  "$bin" simulate "$f" --json >"$work/$name.json"
  python3 - "$work/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d.get("failures") or {}
t = d["transfers"]
ok = "yes" if t["bytes_delivered"] == t["bytes_sent"] and t["delivered"] == t["started"] else "NO"
print(f'{d["iteration_time_s"]:.3f} {d["wall_time_s"]:.1f} {f.get("relays", "-")} '
      f'{f.get("failed_ports", "-")} {len(f.get("spares", []))} {ok}')
PY
}

echo "| model | failure | iteration (s) | vs healthy | paper | relays | OCS ports out | ranks on spares | all bytes delivered | wall (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row() {  # MODEL LABEL PAPER FAILURES BASE
  read -r t wall relays ports spares ok < <(run "$1-$2" "$1" "$4")
  local rel
  rel=$(python3 -c "print(f'{($t/$5 - 1)*100:+.1f}%')")
  echo "| $1 | $2 | $t | $rel | $3 | $relays | $ports | $spares | $ok | $wall |"
}
# The failed server: 9 (an early pipeline stage: DeepSeek-R1 stage 1, Mixtral 8x22B stage 0 of
# the second DP replica) and 121 (the last stage, which the LM head makes the slowest).
for model in deepseek-r1 mixtral-8x22b; do
  read -r base wall _ _ _ ok < <(run "$model-healthy" "$model" "")
  echo "| $model | none | $base | - | - | - | - | - | $ok | $wall |"
  for s in 9 121; do
    if [ "$model" = deepseek-r1 ]; then
      row "$model" "one EPS NIC (server $s, NIC 0)" "+3.3% (NIC)" "[{kind: nic, server: $s, index: 0}]" "$base"
      row "$model" "one OCS port (server $s, port 0)" "+3.3% (NIC)" "[{kind: ocs-port, server: $s, index: 0}]" "$base"
      row "$model" "both EPS NICs (server $s): relay" "-" "[{kind: nic, server: $s, index: 0}, {kind: nic, server: $s, index: 1}]" "$base"
      row "$model" "one server ($s): spare over the EPS" "+6.5%" "[{kind: server, server: $s}]" "$base"
    else
      row "$model" "one GPU (server $s, GPU 3): spare" "+5.1%" "[{kind: gpu, server: $s, index: 3}]" "$base"
      row "$model" "one server ($s): spare over the EPS" "-" "[{kind: server, server: $s}]" "$base"
    fi
  done
done
