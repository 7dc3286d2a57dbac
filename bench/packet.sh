#!/usr/bin/env bash
# The packet backend's scenarios (docs/performance.md, "Packet backend"): all-to-alls among
# hosts of one GPU and one 400G NIC on a fat-tree, as htsim connection matrices, on the flow and
# the packet backend. Prints a Markdown table: simulated completion, events, wall time, events
# per second and peak memory (GNU time).
# Usage: bench/packet.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/src/cli/mfabric}
if [ ! -x /usr/bin/time ]; then
  echo "bench/packet.sh needs GNU time (/usr/bin/time, Debian package 'time')" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# hosts, bytes per host, fabric, backend, extra simulation settings
cases=(
  "64 16000000 fat-tree flow"
  "64 16000000 fat-tree packet"
  "64 16000000 fat-tree:oversubscription=3 flow"
  "64 16000000 fat-tree:oversubscription=3 packet"
  "64 16000000 fat-tree:oversubscription=3 packet buffer: 4MiB"
  "64 64000000 fat-tree:oversubscription=3 flow"
  "64 64000000 fat-tree:oversubscription=3 packet"
  "128 129000000 fat-tree flow"
  "128 129000000 fat-tree packet"
  "128 129000000 fat-tree packet transport: roce-dcqcn"
  "128 129000000 fat-tree packet transport: roce-dcqcn, dcqcn: {variant: ns3-rdma}"
  "128 129000000 fat-tree packet transport: irn"
)
echo "| hosts | per host | fabric | backend | completion | events | wall | events/s | peak memory |"
echo "|---:|---:|---|---|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
  read -r hosts bytes fabric backend extra <<< "$c"
  cm="$tmp/a2a-$hosts-$bytes.cm"
  [ -f "$cm" ] || python3 bench/all_to_all_cm.py "$hosts" "$bytes" "$cm"
  settings="backend: $backend"
  [ -n "${extra:-}" ] && settings="$settings, $extra"
  cat > "$tmp/e.yaml" <<YAML
cluster: {servers: $hosts, gpus_per_server: 1, nics_per_server: 1, link: 400G}
fabric: $fabric
workload: {connection_matrix: $cm}
simulation: {$settings}
YAML
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" simulate "$tmp/e.yaml" --json > "$tmp/out.json"
  read -r wall rss < "$tmp/time"
  python3 - "$hosts" "$bytes" "$fabric" "$settings" "$tmp/out.json" "$wall" "$rss" <<'PY'
import json, sys
hosts, per_host, fabric, settings, path, wall, rss = sys.argv[1:8]
r = json.load(open(path))
print(f"| {hosts} | {int(per_host) / 1e6:g} MB | {fabric} | {settings} "
      f"| {r['iteration_time_s'] * 1e6:,.1f} us | {r['events']:,} | {float(wall):.2f} s "
      f"| {r['events'] / max(r['wall_time_s'], 1e-9):,.0f} | {int(rss) / 1024:.0f} MB |")
PY
done
