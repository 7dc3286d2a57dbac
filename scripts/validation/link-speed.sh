#!/usr/bin/env bash
# Iteration time vs link speed on the non-blocking fat-tree (docs/validation.md, "Iteration time
# vs link speed"): Mixtral 8x22B (TP 8 PP 8 EP 8, 1024 H800) and Mixtral 8x7B (TP 4 PP 4 EP 8)
# at 100G..800G and an effectively free network (100T), with the default compute (the measured
# kernels; the A100 on the roofline) and with routed-expert compute scaled up to the paper's
# "over 100 ms per layer" (model-file copies with ffn_expert x k) or all compute slowed by an
# A100. Each run is `mfabric simulate FILE --json --out DIR --trace`; critical_path.py (next to
# this script) splits the iteration's critical path into compute and communication by class (TP,
# EP, PP, DP).
#
# Usage (from the repo root): scripts/validation/link-speed.sh [MFABRIC_BINARY] [WORK_DIR]
#   (defaults build/release/src/cli/mfabric and a fresh temporary directory). 18 runs, about
#   4 minutes on one core; prints a markdown table. WORK_DIR keeps the experiments, results and
#   collectives.csv / links.csv of every run (trace.json is deleted after the analysis).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:-build/release/src/cli/mfabric}"
work="${2:-$(mktemp -d -t mfabric-linkspeed.XXXXXX)}"
mkdir -p "$work"
echo "experiments in $work" >&2
echo

# scaled copies of the zoo models: ffn_expert x k (expert FLOPs and expert gradients x k)
scaled() {  # MODEL K -> writes $work/MODEL-expertsKx.yaml
  python3 - "$root/data/models/$1.yaml" "$work/$1-experts$2x.yaml" "$1" "$2" <<'PY'
import re, sys
src, dst, name, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t = open(src).read()
t = t.replace(f"name: {name}\n", f"name: {name}-experts{k}x\n", 1)
t = re.sub(r"^ffn_expert: (\d+)$", lambda m: f"ffn_expert: {int(m.group(1)) * k}", t, count=1,
           flags=re.M)
open(dst, "w").write(t)
PY
}
scaled mixtral-8x22b 5
scaled mixtral-8x22b 10
scaled mixtral-8x7b 4

# run NAME MODEL TP PP SERVERS LINK GPU -> one table row (a MODEL file is relative to $work)
run() {
  local name="$1" model="$2" tp="$3" pp="$4" servers="$5" link="$6" gpu="$7"
  local f="$work/$name.yaml"
  printf 'seed: 1\ncluster: {servers: %s, link: %s, gpu: %s}\nfabric: fat-tree\n' \
    "$servers" "$link" "$gpu" >"$f"
  printf 'workload: {model: %s, convention: paper, tp: %s, pp: %s, ep: 8, micro_batch: 8, global_batch: 128}\n' \
    "$model" "$tp" "$pp" >>"$f"
  "$bin" simulate "$f" --json --out "$work/$name" --trace >"$work/$name.json"
  python3 "$here/critical_path.py" "$work/$name" >"$work/$name.cp.json"
  rm -f "$work/$name/trace.json"
  python3 - "$work/$name.json" "$work/$name.cp.json" "$model" "$servers" "$link" "$gpu" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); cp = json.load(open(sys.argv[2]))["critical_path_s"]
model, servers, link, gpu = sys.argv[3:7]
model = model.removesuffix(".yaml")
g = lambda k: f'{cp.get(k, 0.0):.2f}'
print(f'| {model} | {int(servers) * 8} | {gpu} | {link} | {d["iteration_time_s"]:.3f} | {g("compute")} '
      f'| {g("ep")} | {g("tp")} | {g("pp")} | {g("dp")} | {d["exposed_comm_s"]:.2f} |')
PY
}

echo "| model | GPUs | GPU | link | iteration (s) | path: compute | EP | TP | PP | DP | exposed comm (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for link in 100G 200G 400G 800G 100T; do
  run "x22b-$link" mixtral-8x22b 8 8 128 "$link" h800
done
for link in 100G 400G; do run "x22b-a100-$link" mixtral-8x22b 8 8 128 "$link" a100; done
for k in 5 10; do
  for link in 100G 400G; do
    run "x22b-experts${k}x-$link" "mixtral-8x22b-experts${k}x.yaml" 8 8 128 "$link" h800
  done
done
for link in 100G 400G 100T; do run "x7b-$link" mixtral-8x7b 4 4 128 "$link" h800; done
for link in 100G 400G; do run "x7b-128gpu-$link" mixtral-8x7b 4 4 16 "$link" h800; done
for link in 100G 400G; do
  run "x7b-experts4x-$link" "mixtral-8x7b-experts4x.yaml" 4 4 128 "$link" h800
done
