#!/usr/bin/env bash
# docs/validation.md, "Traffic mix" and "Expert compute": `mfabric workload --json` on the
# paper's jobs. Traffic: bytes per iteration by parallelism (all-reduce buffers once per member
# GPU, all-to-all bytes that leave each member, p2p bytes; seq 4096, micro-batch 8, global batch
# 128, synthetic routing with seed 1). Expert compute: the busiest GPU's forward expert compute
# per MoE layer and micro-batch, under the roofline, paper-measurement and h800-measured
# calibrations. Measured: the same on the paper's five evaluation jobs, against the expert loop
# measured on an H200 at that job's shape (data/measurements/measure-gpu/), taken at the busiest
# GPU's tokens per expert.
#
# Usage: scripts/validation/workload.sh [MFABRIC_BINARY] [traffic|experts|measured]   (a few
#        seconds; default traffic and experts)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
part="${2:-both}"
share() {  # MODEL TP PP EP -> "TP x%, EP y%, PP z%, DP w%"
  "$bin" workload --model "$1" --gpus 128 --convention paper --tp "$2" --pp "$3" --ep "$4" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["bytes_share"]
print(", ".join(f"{k.upper()} {100 * s[k]:.1f}%" for k in ("tp", "ep", "pp", "dp")))'
}
if [ "$part" = measured ]; then
  # MODEL TP PP EP -> busiest GPU's expert forward (ms) under each calibration, and its
  # token-expert pairs (a calibration of 1 us per pair makes the time in us the pair count).
  pairs_cal="$(mktemp -t mfabric-pairs.XXXXXX.yaml)"
  trap 'rm -f "$pairs_cal"' EXIT
  printf 'name: pairs\ncompute: {expert_per_token: 1us}\n' >"$pairs_cal"
  for job in "mixtral-8x22b 8 8 8" "mixtral-8x7b 4 4 8" "qwen-moe-32 1 4 32" "deepseek-r1 1 16 64" \
    "llama-moe-6.7b 1 4 16"; do
    read -r model tp pp ep <<<"$job"
    printf '%s %s %s %s' "$model" "$tp" "$pp" "$ep"
    for cal in roofline paper-measurement h800-measured "$pairs_cal"; do
      "$bin" workload --model "$model" --gpus 1024 --convention paper --tp "$tp" --pp "$pp" --ep "$ep" \
        --calibration "$cal" --json |
        python3 -c 'import json, sys; print(" %.6g" % json.load(sys.stdin)["moe_layer_forward_s"]["experts"], end="")'
    done
    echo
  done | python3 -c '
import glob, sys, yaml
print("Expert compute forward per MoE layer and micro-batch on the busiest expert GPU of the "
      "paper\x27s evaluation jobs (1024 H800, micro-batch 8, seq 4096, synthetic skew, seed 1) under "
      "each calibration, against the expert loop measured on an H200 at the busiest GPU\x27s tokens "
      "per local expert (data/measurements/measure-gpu/h200-*.yaml; linear in tokens between the "
      "measured counts, and beyond the largest from the last two; the H800 has the H200\x27s "
      "compute):\n")
print("| model, TP PP EP | tokens per local expert: average / busiest GPU | roofline | "
      "paper-measurement | h800-measured | H200 measured |")
print("|---|---|---|---|---|---|")
for line in sys.stdin:
    model, tp, pp, ep, roof, paper, measured, pairs = line.split()
    pairs = float(pairs) * 1e6
    [path] = glob.glob(f"data/measurements/measure-gpu/h200-{model}-tp{tp}-ep{ep}.yaml")
    rows = [r for r in yaml.safe_load(open(path))["kernels"]["measurements"] if r["op"] == "expert"]
    local = rows[0]["local_experts"]
    points = sorted((r["tokens"], float(r["forward"].rstrip("us")) * 1e-6) for r in rows)
    busiest = pairs / local
    (t0, y0), (t1, y1) = next(((a, b) for a, b in zip(points, points[1:]) if busiest <= b[0]),
                              (points[-2], points[-1]))
    at = y0 + (y1 - y0) * (busiest - t0) / (t1 - t0)
    average = points[2][0]  # the script measures 1/8, 1/2, 1 and 2x the job\x27s average
    ms = lambda s: f"{1e3 * float(s):.1f} ms"
    print(f"| {model}, {tp} {pp} {ep} | {average:,} / {busiest:,.0f} | {ms(roof)} | {ms(paper)} | "
          f"{ms(measured)} | {ms(at)} |")
'
  exit 0
fi
if [ "$part" != experts ]; then
mix_8x7b="$(share mixtral-8x7b 4 4 8)"
mix_llama="$(share llama-moe-6.7b 1 4 16)"
mix_qwen="$(share qwen-moe 1 4 16)"
echo "| model, parallelism | paper | mfabric | command |"
echo "|---|---|---|---|"
echo "| Mixtral 8x7B, TP 4 PP 4 EP 8 | about 60% TP, 30% EP, PP + DP under 6% | $mix_8x7b | \`mfabric workload --model mixtral-8x7b --gpus 128 --convention paper --tp 4 --pp 4 --ep 8\` |"
echo "| LLaMA-MoE 6.7B, TP 1 PP 4 EP 16 | over 80% EP | $mix_llama | \`mfabric workload --model llama-moe-6.7b --gpus 128 --convention paper --tp 1 --pp 4 --ep 16\` |"
echo "| Qwen-MoE, TP 1 PP 4 EP 16 | over 80% EP | $mix_qwen | \`mfabric workload --model qwen-moe --gpus 128 --convention paper --tp 1 --pp 4 --ep 16\` |"
fi
[ "$part" = traffic ] && exit 0
experts() {  # MODEL GPUS TP PP EP GLOBAL_BATCH CALIBRATION -> ms
  "$bin" workload --model "$1" --gpus "$2" --convention paper --tp "$3" --pp "$4" --ep "$5" --global-batch "$6" \
    --calibration "$7" --json |
    python3 -c 'import json, sys; v = json.load(sys.stdin)["moe_layer_forward_s"]["experts"]; print("%.1f ms" % (1e3 * v))'
}
echo "Expert compute forward per MoE layer and micro-batch on the busiest expert GPU (H800,"
echo "synthetic skew, seed 1):"
echo
echo "| model, parallelism (GPUs) | roofline | paper-measurement | h800-measured |"
echo "|---|---|---|---|"
row() {  # LABEL MODEL GPUS TP PP EP GLOBAL_BATCH
  local a b c
  a="$(experts "$2" "$3" "$4" "$5" "$6" "$7" roofline)"
  b="$(experts "$2" "$3" "$4" "$5" "$6" "$7" paper-measurement)"
  c="$(experts "$2" "$3" "$4" "$5" "$6" "$7" h800-measured)"
  echo "| $1 | $a | $b | $c |"
}
row "Mixtral 8x22B, TP 8 PP 8 EP 8 (1024)" mixtral-8x22b 1024 8 8 8 128
row "Mixtral 8x7B, TP 4 PP 4 EP 8 (128: the measured job)" mixtral-8x7b 128 4 4 8 128
row "Mixtral 8x7B, TP 1 PP 4 EP 8 (32)" mixtral-8x7b 32 1 4 8 32
row "DeepSeek-R1, TP 1 PP 16 EP 64 (1024)" deepseek-r1 1024 1 16 64 128
