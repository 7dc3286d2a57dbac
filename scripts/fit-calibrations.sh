#!/usr/bin/env bash
# Fits the shipped measured calibration data/calibrations/h200-measured.yaml to the measurement
# files in data/measurements/ (`mfabric kernel fit`; docs/calibration.md, "Measured kernels").
#
#   scripts/fit-calibrations.sh MFABRIC          rewrite the file (make calibrations)
#   scripts/fit-calibrations.sh --check MFABRIC  print "ok" if the file is what the fit gives, a
#                                                diff and exit 1 if not (a CTest)
set -euo pipefail
check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
(($# == 1)) || { echo "usage: $0 [--check] MFABRIC" >&2; exit 2; }
mfabric=$(realpath "$1")
cd "$(dirname "$0")/.."

description="Fitted to kernel times measured on one NVIDIA H200 SXM (PyTorch 2.11.0, CUDA 13.0, bf16
and e4m3 FP8, CUDA events; 2026-11-27; data/measurements/README.md): per op kind a launch
overhead and a table of efficiencies by rows (tokens) and shape, forward and backward, and the
optimizer step's fraction of HBM bandwidth (fused Adam). Rows: expert FFN loops (Mixtral 8x7B and
8x22B, also under expert TP 4 and 8; DeepSeek-V3; Qwen1.5-MoE), dense projections and the router,
causal flash attention (GQA and MLA), the MoE permutation, bf16 and FP8 GEMMs. The model's error on
each row and on shapes left out of the fit: docs/validation.md, \"Compute as measured\". Collectives
stay at line rate (not measured here)."

files=(data/measurements/h200-fp8-optimizer-mla.csv data/measurements/h200-moe-kernels.csv
  data/measurements/h200-permute.csv)
target=data/calibrations/h200-measured.yaml
fit() {
  "$mfabric" kernel fit "${files[@]}" --gpu H200 --name h200-measured --description "$description"
}
if ((check)); then
  diff -u "$target" <(fit) && echo ok
else
  fit >"$target.tmp" && mv "$target.tmp" "$target"
  echo "wrote $target"
fi
