#!/usr/bin/env bash
# docs/validation.md, "Traffic mix" and "Expert compute": `mfabric workload --json` on the
# paper's jobs. Traffic: bytes per iteration by parallelism (all-reduce buffers once per member
# GPU, all-to-all bytes that leave each member, p2p bytes; seq 4096, micro-batch 8, global batch
# 128, synthetic routing with seed 1). Expert compute: the busiest GPU's forward expert compute
# per MoE layer and micro-batch, under the roofline, paper-measurement and h800-measured
# calibrations.
#
# Usage: scripts/validation/workload.sh [MFABRIC_BINARY] [traffic|experts]   (a few seconds;
#        default both)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
part="${2:-both}"
share() {  # MODEL TP PP EP -> "TP x%, EP y%, PP z%, DP w%"
  "$bin" workload --model "$1" --gpus 128 --tp "$2" --pp "$3" --ep "$4" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["bytes_share"]
print(", ".join(f"{k.upper()} {100 * s[k]:.1f}%" for k in ("tp", "ep", "pp", "dp")))'
}
if [ "$part" != experts ]; then
mix_8x7b="$(share mixtral-8x7b 4 4 8)"
mix_llama="$(share llama-moe-6.7b 1 4 16)"
mix_qwen="$(share qwen-moe 1 4 16)"
echo "| model, parallelism | paper | mfabric | command |"
echo "|---|---|---|---|"
echo "| Mixtral 8x7B, TP 4 PP 4 EP 8 | about 60% TP, 30% EP, PP + DP under 6% | $mix_8x7b | \`mfabric workload --model mixtral-8x7b --gpus 128 --tp 4 --pp 4 --ep 8\` |"
echo "| LLaMA-MoE 6.7B, TP 1 PP 4 EP 16 | over 80% EP | $mix_llama | \`mfabric workload --model llama-moe-6.7b --gpus 128 --tp 1 --pp 4 --ep 16\` |"
echo "| Qwen-MoE, TP 1 PP 4 EP 16 | over 80% EP | $mix_qwen | \`mfabric workload --model qwen-moe --gpus 128 --tp 1 --pp 4 --ep 16\` |"
fi
[ "$part" = traffic ] && exit 0
experts() {  # MODEL GPUS TP PP EP GLOBAL_BATCH CALIBRATION -> ms
  "$bin" workload --model "$1" --gpus "$2" --tp "$3" --pp "$4" --ep "$5" --global-batch "$6" \
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
