#!/usr/bin/env bash
# The runtime's three pieces under faults (docs/runtime.md, "Faults"): an OCS emulator, the
# region controller in front of it, and moe-bench on 8 MPI ranks asking it for each layer's
# circuits. Each case starts moe-bench, injects one fault while it runs, and prints how moe-bench
# ended (every token verified, or its one error line) and what the controller saw:
#   emulator-kill:    kill -9 the emulator during a reconfiguration, restart it on its state file
#   controller-kill:  kill -9 the controller, restart it on the same address
#   port-fail:        fail an OCS port over TL1 (OPR-PORT-FAIL), repair it after the run
# Usage: scripts/runtime-soak.sh [MFABRIC [MPIEXEC]] (defaults: build/release/src/cli/mfabric,
# mpirun). Every wait is bounded; every process started here stops by itself (--max-time) or is
# stopped on exit.
set -uo pipefail
mfabric=${1:-build/release/src/cli/mfabric}
mpiexec=${2:-mpirun}
dir=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
emulator_pid=
controller_pid=
cleanup() {
  for pid in $emulator_pid $controller_pid; do kill "$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# listening NAME: the HOST:PORT on NAME's first line, waiting at most 20 s.
listening() {
  local address=
  for _ in $(seq 200); do
    address=$(sed -n 's/^listening on //p' "$dir/$1.out")
    if [ -n "$address" ]; then
      echo "$address"
      return 0
    fi
    sleep 0.1
  done
  echo "$1 did not start: $(cat "$dir/$1.err")" >&2
  exit 1
}
# A slow switch (300 ms a command), so that a fault lands in a reconfiguration.
start_emulator() {
  "$mfabric" ocs-emulator --ports 16 --switching 300ms --state "$dir/ocs.state" \
    --listen "${ocs:-127.0.0.1:0}" --max-time 600s > "$dir/emulator.out" 2>> "$dir/emulator.err" &
  emulator_pid=$!
  ocs=$(listening emulator)
}
start_controller() {
  "$mfabric" controller --ocs "$ocs" --regions "$dir/regions.yaml" --token-file "$dir/token" \
    --listen "${controller:-127.0.0.1:0}" --max-time 600s > "$dir/controller.out" \
    2>> "$dir/controller.err" &
  controller_pid=$!
  controller=$(listening controller)
}
# tl1 COMMAND...: sends the commands to the emulator after logging in; prints the answers.
tl1() {
  local host=${ocs%:*} port=${ocs##*:}
  exec 3<> "/dev/tcp/$host/$port" || return 1
  printf 'ACT-USER::admin:1::admin;' >&3
  for command in "$@"; do printf '%s' "$command" >&3; done
  timeout 2 cat <&3 | tr -d '\r' | grep -E 'COMPLD|DENY' || true
  exec 3>&-
}
cat > "$dir/regions.yaml" << 'YAML'
regions:
  - name: rack0
    servers: 2
    nics: 4
    alpha: 2
    numa: 1
    first_port: 1
YAML
head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$dir/token"
start_emulator
start_controller
echo "emulator on $ocs (300 ms a switch), controller on $controller"

layers=12
expected=$((layers * 8 * 256 * 2 * 2))
bench() {
  timeout 300 "$mpiexec" --oversubscribe -n 8 "$mfabric" moe-bench --servers 2 \
    --layers "$layers" --tokens 256 --top-k 2 --hidden 256B --seed "$1" --policy block \
    --controller "$controller" --token-file "$dir/token" --controller-timeout 60s \
    > "$dir/bench.out" 2> "$dir/bench.err"
}
report() {
  local rc=$1 case=$2
  if [ "$rc" -eq 0 ] && grep -q "^tokens verified: $expected " "$dir/bench.out"; then
    echo "$case: moe-bench finished, $(grep '^tokens verified' "$dir/bench.out" | cut -d'(' -f1)," \
      "$(grep '^reconfigurations' "$dir/bench.out")"
  else
    echo "$case: moe-bench stopped (exit $rc): $(grep -m1 'error' "$dir/bench.err")"
  fi
}

# 1. kill -9 the emulator in the middle of a reconfiguration, restart it on the same state.
bench 11 &
bench_pid=$!
sleep 4
kill -9 "$emulator_pid"
echo "emulator-kill: killed the emulator (kill -9) during a reconfiguration; restarting it in 1 s"
sleep 1
start_emulator
wait "$bench_pid"
report $? emulator-kill

# 2. kill -9 the controller mid-run; restart it on the same address.
bench 12 &
bench_pid=$!
sleep 4
kill -9 "$controller_pid"
echo "controller-kill: killed the controller (kill -9); restarting it in 1 s"
sleep 1
start_controller
wait "$bench_pid"
report $? controller-kill

# 3. fail OCS port 2 (server 0's second OCS NIC, local NIC 3) mid-run; repair it afterwards.
bench 13 &
bench_pid=$!
sleep 4
echo "port-fail: OPR-PORT-FAIL::2 -> $(tl1 'OPR-PORT-FAIL::2:2;' | tail -1)"
wait "$bench_pid"
report $? port-fail
echo "  circuits on port 2 in force after the run: $(tl1 'RTRV-PATCH:::3;' | grep -c '"2,' || true)"
tl1 'RLS-PORT-FAIL::2:4;' > /dev/null
