#!/usr/bin/env bash
# Whole-scenario timings: each experiment simulated once by the Release binary, with wall time,
# events per second and peak memory (GNU time). Prints a Markdown table for docs/performance.md.
# Usage: bench/scenarios.sh [BINARY] [EXPERIMENT...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/src/cli/mfabric}
shift || true
experiments=("$@")
if [ ${#experiments[@]} -eq 0 ]; then
  experiments=(examples/micro/all-reduce-ring.yaml examples/micro/all-to-all-3to1.yaml
               examples/mixtral-8x7b.yaml examples/mixtral-8x22b.yaml)
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench/scenarios.sh needs GNU time (/usr/bin/time, Debian package 'time')" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| experiment | GPUs | tasks | simulated iteration | events | wall | events/s | peak memory |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for e in "${experiments[@]}"; do
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" simulate "$e" --json > "$tmp/out.json"
  read -r wall rss < "$tmp/time"
  python3 - "$e" "$tmp/out.json" "$wall" "$rss" <<'PY'
import json, sys
name, path, wall, rss = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
r = json.load(open(path))
print(f"| {name} | {r['gpus']} | {r['tasks']:,} | {r['iteration_time_s']:.4g} s | {r['events']:,} "
      f"| {wall:.2f} s | {r['events'] / max(r['wall_time_s'], 1e-9):,.0f} | {rss / 1024:.0f} MB |")
PY
done
