#!/usr/bin/env bash
# The same sweep without and under `mpirun --oversubscribe -n 2` gives the same results.json
# (docs/sweep.md, "MPI"). Arguments: the mfabric binary, mpiexec, the sweep file.
set -euo pipefail
mfabric=$1
mpiexec=$2
sweep=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# OpenMPI refuses to run as root unless told (CI containers run as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$mfabric" sweep "$sweep" --out "$dir/threads" --jobs 2 > "$dir/threads.txt"
"$mpiexec" --oversubscribe -n 2 "$mfabric" sweep "$sweep" --out "$dir/mpi" --jobs 1 > "$dir/mpi.txt"
# Without the provenance (the command lines name different directories).
without_provenance() { sed '/^  "provenance": {$/,/^  },\{0,1\}$/d; 1{/^# mfabric /d}' "$1"; }
cmp <(without_provenance "$dir/threads/results.json") <(without_provenance "$dir/mpi/results.json")
cmp <(without_provenance "$dir/threads/results.csv") <(without_provenance "$dir/mpi/results.csv")
grep -q '"provenance"' "$dir/mpi/results.json"
# The tables are the same (the last line names the output directory).
cmp <(grep -v "^wrote " "$dir/threads.txt") <(grep -v "^wrote " "$dir/mpi.txt")
# Every point reached the journal.
test "$(wc -l < "$dir/mpi/points.jsonl")" -eq 7
echo "mpirun sweep: results.json identical with 1 process of 2 threads and 2 MPI ranks"
