#!/usr/bin/env bash
# docs/validation.md, "Against published training throughput": real clusters' MoE training runs
# (../shared/reference/published-throughput.md and their sources), each simulated as published
# (GPU, cluster, parallelism, batch, precision, schedule, routing) under the one default
# calibration of its GPU (the H200's measurements carried by datasheet ratios), on a non-blocking
# fat-tree of 400G NICs, NVLink at the GPU's per-direction datasheet bandwidth; then the
# collective model alone against DeepEP's all-to-all bandwidths. Prints two Markdown tables.
# About 2-3 minutes on 2 cores, most of it DeepSeek-V3's 2,048 GPUs and 120 micro-batches.
#
# Usage: scripts/validation/published.sh [MFABRIC_BINARY] [throughput|deepep|all]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(realpath "${1:-$root/build/release/src/cli/mfabric}")"
what="${2:-all}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name | servers | gpu | nvswitch | workload | published tok/s | published TFLOP/s | source
rows=(
  "Mixtral 8x22B, 128 H100, TP 2 PP 8 EP 8 ETP 1 (folding)|16|h100|450GB/s|{model: mixtral-8x22b}|-|487.7|arXiv 2504.14960, Tables 1-3"
  "Mixtral 8x22B, 128 H100, TP 2 PP 8 EP 4 ETP 2 (no folding)|16|h100|450GB/s|{model: mixtral-8x22b, tp: 2, pp: 8, ep: 4, etp: 2}|-|458.3|arXiv 2504.14960, Tables 1-3"
  "Qwen3-235B-A22B, 256 H100, TP 2 PP 8 VP 4 EP 32, EP overlap|32|h100|450GB/s|{model: qwen3-235b-a22b, overlap: {ep_comm: true}}|2132|320|arXiv 2603.07685, Megatron-MoE model zoo"
  "DeepSeek-V3, 2,048 H800, TP 1 PP 16 EP 64, FP8, GBS 15,360|256|h800|200GB/s|{model: deepseek-v3, routing: {synthetic: {balance: forced}, max_nodes: 4}}|1543|-|arXiv 2412.19437 (GPU-hours)"
)

throughput() {
  echo "| configuration (as published) | published tok/s, TFLOP/s | simulated tok/s, TFLOP/s (MFU) | miss | GPU busy | bubble (estimate) | waiting for communication | waiting for other GPUs | source |"
  echo "|---|---|---|---|---|---|---|---|---|"
  local i=0
  for row in "${rows[@]}"; do
    IFS='|' read -r name servers gpu nvswitch workload pub_tok pub_tf source <<<"$row"
    f="$work/row$i.yaml"
    i=$((i + 1))
    printf 'seed: 1\ncluster: {servers: %s, gpus_per_server: 8, nics_per_server: 8, link: 400G, gpu: %s, nvswitch: %s}\nfabric: fat-tree\nworkload: %s\n' \
      "$servers" "$gpu" "$nvswitch" "$workload" >"$f"
    "$bin" simulate "$f" --json --quiet 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
name, pub_tok, pub_tf, source = sys.argv[1:5]
tok, tf, mfu = d["tokens_per_s_per_gpu"], d["model_tflops_per_gpu"], d["mfu"]
b = d["gpu_busy"]
def miss(sim, pub):
    return f"{(sim / float(pub) - 1) * 100:+.0f}%"
misses = []
if pub_tok != "-": misses.append("tok/s " + miss(tok, pub_tok))
if pub_tf != "-": misses.append("TFLOP/s " + miss(tf, pub_tf))
busy, bubble = b["busy_fraction"], b["bubble_fraction"]
comm, other = b["comm_wait_fraction"], b["other_wait_fraction"]
miss_text = "; ".join(misses)
# A shortcut the run took (docs/shortcuts.md) is named beside its figures.
used = [s["name"] + ", within " + format(s["bound"], ".1%") for s in d.get("shortcuts", [])
        if s["used"]]
simulated = f"{tok:,.0f}, {tf:.1f} ({mfu:.1%})" + (" [" + "; ".join(used) + "]" if used else "")
print(f"| {name} | {pub_tok}, {pub_tf} | {simulated} | {miss_text} | "
      f"{busy:.1%} | {bubble:.1%} | {comm:.1%} | {other:.1%} | {source} |")
' "$name" "$pub_tok" "$pub_tf" "$source"
  done
}

# DeepEP's README (H800, ConnectX-7 400 Gb/s): bandwidth per GPU of the normal kernels. The
# simulated all-to-all moves 256 MiB per GPU over NVLink alone (EP 8, one server) or across
# servers; bandwidth = the bytes crossing the bottleneck (NVLink: every byte off the GPU; RDMA:
# the bytes to other servers) over the time.
deepep() {
  echo "| EP | DeepEP (dispatch / combine, GB/s per GPU) | simulated, NVLink 200 GB/s (H800 datasheet, per direction) | simulated, default NVLink (900 GB/s) |"
  echo "|---|---|---|---|"
  for spec in "8 1 153 / 158 (NVLink)" "16 2 43 / 43 (RDMA)" "32 4 58 / 57 (RDMA)" "64 8 51 / 50 (RDMA)"; do
    read -r ep servers published <<<"$spec"
    local cells=""
    for nv in 200GB/s 900GB/s; do
      f="$work/a2a.yaml"
      printf 'cluster: {servers: %s, gpus_per_server: 8, link: 400G, gpu: h800, nvswitch: %s}\nfabric: fat-tree\nworkload: {collective: all-to-all, bytes: 256MiB, group: all}\n' \
        "$servers" "$nv" >"$f"
      t=$("$bin" simulate "$f" --json --quiet 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["iteration_time_s"])')
      cells+=$(python3 -c '
import sys
ep, t = int(sys.argv[1]), float(sys.argv[2])
total = 256 * 2**20
crossing = total * (ep - 1) / ep if ep == 8 else total * (ep - 8) / ep
print(f" {crossing / t / 1e9:.0f} GB/s |", end="")' "$ep" "$t")
    done
    echo "| $ep | ${published} |${cells}"
  done
}

case "$what" in
  throughput) throughput ;;
  deepep) deepep ;;
  all) throughput; echo; deepep ;;
  *) echo "published.sh: unknown part '$what' (throughput, deepep, all)" >&2; exit 2 ;;
esac
