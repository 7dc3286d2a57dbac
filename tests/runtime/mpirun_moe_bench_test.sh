#!/usr/bin/env bash
# mfabric moe-bench on 8 MPI ranks in 2 servers of 4 (docs/runtime.md, "moe-bench"): every token
# verified at its expert and back, the received bytes equal MPI_Alltoallv's, for both circuit
# policies and without circuits; the same counts for the same seed; bad input is one line.
# Arguments: the mfabric binary, mpiexec.
set -euo pipefail
mfabric=$1
mpiexec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# OpenMPI refuses to run as root unless told (CI containers run as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --servers as the first arguments replaces the 2 servers.
run() {
  local servers=2
  if [ "${1:-}" = --servers ]; then servers=$2; shift 2; fi
  timeout 120 "$mpiexec" --oversubscribe -n 8 "$mfabric" moe-bench --servers "$servers" \
    --layers 3 --tokens 256 --top-k 2 --hidden 256B --seed 3 "$@"
}
# Tokens routed per layer: 8 ranks x 256 tokens x top-2; each checked twice (expert, source).
expected=$((3 * 8 * 256 * 2 * 2))
field() { grep -o "\"$1\": [^,}]*" "$2" | tail -1 | sed 's/.*: //'; }

for policy in block reuse-previous; do
  run --policy "$policy" --json > "$dir/$policy.json"
  test "$(field tokens_verified "$dir/$policy.json")" -eq "$expected"
  test "$(field equal_to_alltoallv "$dir/$policy.json")" = true
done
# block plans each layer's circuits before it: bytes go over circuits from the first layer;
# reuse-previous runs its first layer on the EPS alone.
test "$(field bytes_circuit "$dir/block.json")" -gt 0
grep -q '"waits": [1-9]' "$dir/block.json"
grep -q '"waits": 0' "$dir/reuse-previous.json"
test "$(grep -o '"bytes_eps": [0-9]*' "$dir/reuse-previous.json" | head -1 | sed 's/.*: //')" -gt 0

# Without circuits everything between servers goes over the EPS.
run --circuits none --json > "$dir/none.json"
test "$(field bytes_circuit "$dir/none.json")" -eq 0
test "$(field tokens_verified "$dir/none.json")" -eq "$expected"

# Deterministic for a seed: the same bytes over each path.
run --policy block --json > "$dir/again.json"
without_times() { grep -v -E 'second' "$1"; }
cmp <(without_times "$dir/block.json") <(without_times "$dir/again.json")

# The text output says so too.
run > "$dir/text.txt"
grep -q "^tokens verified: $expected " "$dir/text.txt"

# Bad input: one clear line from rank 0, a non-zero exit.
if run --servers 3 > "$dir/bad.out" 2> "$dir/bad.err"; then
  echo "moe-bench --servers 3 on 8 ranks should fail"; exit 1
fi
test "$(grep -c -- "--servers" "$dir/bad.err")" -eq 1
# Outside mpirun: told how to start it.
if "$mfabric" moe-bench > "$dir/alone.out" 2> "$dir/alone.err"; then
  echo "moe-bench without mpirun should fail"; exit 1
fi
grep -q "mpirun" "$dir/alone.err"
echo "mpirun moe-bench: $expected token checks per run, equal to MPI_Alltoallv, both policies"
