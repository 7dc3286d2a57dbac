#!/usr/bin/env bash
# docs/validation.md, "Holds on the critical path": the paper's job (Mixtral 8x22B, TP 8 PP 8 EP 8,
# 128 servers, 400G, paper-measurement calibration) on the fat-tree and on mFabric with no delay
# (oracle), block at 1 ms and 25 ms, and paper-sim at 25 ms: the held all-to-alls and those on the
# critical path, from `mfabric compare --json`.
#
# Usage: scripts/validation/holds.sh [MFABRIC_BINARY]   (about half a minute on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/release/src/cli/mfabric}"
"$bin" compare --models mixtral-8x22b --links 400G --calibration paper-measurement \
  --fabrics fat-tree,mfabric:policy=oracle,mfabric:reconfiguration=1ms,mfabric,mfabric:policy=paper-sim \
  --json | python3 -c "$(cat <<'PY'
import json, sys
d = json.load(sys.stdin)
runs = {r["fabric"]: r for r in d["runs"]}
ft = runs["fat-tree"]["iteration_time_s"]
label = {"mfabric:policy=oracle": "oracle (no delay)", "mfabric:reconfiguration=1ms": "block, 1 ms",
         "mfabric": "block, 25 ms", "mfabric:policy=paper-sim": "paper-sim, 25 ms"}
print(f"| mFabric | iteration (s) | vs fat-tree ({ft:.3f} s) | reconfigurations | "
      "held all-to-alls, summed (s) | holds on the critical path | their wait (s) |")
print("|---|---|---|---|---|---|---|")
for key, name in label.items():
    r = runs[key]
    c = r["reconfiguration"]
    t = r["iteration_time_s"]
    print(f"| {name} | {t:.3f} | {t / ft:.3f} | {c['count']:,} | {c['held_time_s']:.1f} | "
          f"{c['critical_holds']} | {c['critical_held_s']:.3f} |")
PY
)"
