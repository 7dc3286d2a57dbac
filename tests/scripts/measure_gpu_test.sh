#!/usr/bin/env bash
# scripts/measure-gpu.py's logic on the CPU with tiny shapes: it measures every op kind, writes a
# calibration mfabric loads, and mfabric's fit of it gives back a measured row. Needs PyTorch
# (Debian: python3-torch, which `make test` does not install: it is large): without it the test
# says so and is skipped (exit 77).
set -euo pipefail
mfabric=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
py=""
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import torch, yaml' 2>/dev/null; then
    py=$candidate
    break
  fi
done
if [[ -z $py ]]; then
  echo "skipped: PyTorch is not installed (apt-get install python3-torch to run this test)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/tiny.yaml" <<'YAML'
name: tiny
layers: 4
hidden: 64
attention: {kind: gqa, heads: 4, kv_heads: 2, head_dim: 16}
ffn_expert: 96
experts: 4
top_k: 2
vocab: 1000
YAML
fail() { echo "FAIL: $*"; exit 1; }
run() {
  "$py" "$root/scripts/measure-gpu.py" --model "$dir/tiny.yaml" --micro-batch 2 --seq 32 --gpu H100 \
    --device cpu --dtype fp32 --warmup 1 --repeat 5 --optimizer-params 10000 --copy-bytes 100000 "$@"
}
run --tp 1 --ep 2 --out "$dir/cal.yaml" 2>"$dir/log" || fail "measure-gpu.py: $(cat "$dir/log")"
for op in expert dense attention permute optimizer elementwise; do
  grep -q "op: $op\$" "$dir/cal.yaml" || fail "no $op measurement in the calibration"
done
grep -q '^# measured by scripts/measure-gpu.py on .*PyTorch' "$dir/cal.yaml" || fail "no provenance"
# 2 sources x 64 tokens x top-2 over 4 experts: 64 tokens per expert on average, measured at 8,
# 32, 64 and 128; mfabric's fit must give the 64-token row back (in-sample).
measured=$("$py" -c '
import sys, yaml
rows = yaml.safe_load(open(sys.argv[1]))["kernels"]["measurements"]
r = [r for r in rows if r["op"] == "expert" and r["tokens"] == 64][0]
print(float(r["forward"][:-2]) * 1e-6)' "$dir/cal.yaml")
model=$("$mfabric" kernel expert --gpu h100 --hidden 64 --ffn 96 --local-experts 2 \
  --tokens-per-expert 64 --calibration "$dir/cal.yaml" --json |
  "$py" -c 'import json, sys; j = json.load(sys.stdin); assert j["measured"]; print(j["forward_s"])')
"$py" -c "import sys; m, p = $measured, $model; sys.exit(0 if abs(p / m - 1) < 0.2 else 1)" ||
  fail "the fitted expert forward $model s is not within 20% of the measured $measured s"
# A job the script cannot measure: one line, non-zero exit, no file.
if run --tp 1 --ep 3 --out "$dir/bad.yaml" 2>"$dir/err"; then fail "--ep 3 over 4 experts ran"; fi
grep -q -- "--ep: 4 experts do not split over EP 3" "$dir/err" || fail "bad --ep: $(cat "$dir/err")"
[[ ! -e $dir/bad.yaml ]] || fail "a refused run wrote its file"
echo ok
