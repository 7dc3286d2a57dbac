#!/usr/bin/env bash
# The runtime's three pieces under faults (docs/runtime.md, "Faults"): an OCS emulator, the
# region controller in front of it, and moe-bench on 8 MPI ranks asking it for each layer's
# circuits. Each case starts moe-bench, injects one fault while it runs, and prints how moe-bench
# ended (every token verified, or its one error line) and what the controller saw:
#   emulator-kill:    kill -9 the emulator during a reconfiguration, restart it on its state file
#   controller-kill:  kill -9 the controller, restart it on the same address
#   port-fail:        fail an OCS port over TL1 (OPR-PORT-FAIL), repair it after the run
#                     (moe-bench --policy reuse-previous; the other cases --policy block)
#   emulator-gone:    kill -9 the emulator and leave it down: moe-bench stops with one line
# Usage: scripts/runtime-soak.sh [--check] [MFABRIC [MPIEXEC]] (defaults:
# build/release/src/cli/mfabric, mpirun). With --check (the CTest mfabric_runtime_faults) it exits
# 1 unless every case ends as it should: the first three with every token verified, the last with
# exactly one error line naming the OCS, none left running. SOAK_LAYERS (default 24) and
# SOAK_SWITCHING (default 300ms) size the runs. Every wait is bounded; every process started here
# stops by itself (--max-time) or is stopped on exit.
set -uo pipefail
check=false
if [ "${1:-}" = --check ]; then
  check=true
  shift
fi
mfabric=${1:-build/release/src/cli/mfabric}
mpiexec=${2:-mpirun}
layers=${SOAK_LAYERS:-24}
switching=${SOAK_SWITCHING:-300ms}
failures=0
# expect CONDITION-RESULT MESSAGE: in --check mode, counts a case that did not end as it should.
expect() {
  if [ "$1" -ne 0 ]; then
    echo "  FAILED: $2"
    failures=$((failures + 1))
  fi
}
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

# listening NAME: the HOST:PORT on NAME's first line, waiting at most 60 s (a loaded machine
# starts slowly).
listening() {
  local address=
  for _ in $(seq 600); do
    address=$(sed -n 's/^listening on //p' "$dir/$1.out" 2> /dev/null)
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
  "$mfabric" ocs-emulator --ports 16 --switching "$switching" --state "$dir/ocs.state" \
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
    servers: 4
    nics: 2
    alpha: 1
    numa: 1
    first_port: 1
YAML
head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$dir/token"
start_emulator
start_controller
echo "emulator on $ocs ($switching a switch), controller on $controller; $layers layers a run"

# 8 ranks in 4 servers of 2 GPUs, one OCS NIC each (ports 1-4): the circuits of a layer are a
# matching of the 4 servers, which changes with the demand, so a run has reconfigurations to
# land a fault in.
expected=$((layers * 8 * 256 * 2 * 2))
# bench SEED [TIMEOUT [POLICY]]: one run of moe-bench, each call to the controller bounded by
# TIMEOUT (60s), circuits asked for by POLICY (block).
bench() {
  timeout 300 "$mpiexec" --oversubscribe -n 8 "$mfabric" moe-bench --servers 4 \
    --layers "$layers" --tokens 256 --top-k 2 --hidden 256B --seed "$1" --policy "${3:-block}" \
    --controller "$controller" --token-file "$dir/token" --controller-timeout "${2:-60s}" \
    > "$dir/bench.out" 2> "$dir/bench.err"
}
# in_reconfiguration: returns once the emulator journaled a change made after this call (a
# cross-connect accepted, its mirrors moving for 300 ms, more of the plan to come), at most 60 s.
in_reconfiguration() {
  local before
  before=$(wc -l < "$dir/ocs.state")
  for _ in $(seq 3000); do
    [ "$(wc -l < "$dir/ocs.state")" -gt "$before" ] && return 0
    sleep 0.02
  done
  echo "  (no reconfiguration within 60 s)"
  return 1
}
running() { kill -0 "$1" 2> /dev/null && echo "moe-bench running" || echo "moe-bench already done"; }
# report EXIT CASE: how moe-bench ended; returns 0 when it finished with every token verified.
report() {
  local rc=$1 case=$2
  if [ "$rc" -eq 0 ] && grep -q "^tokens verified: $expected " "$dir/bench.out"; then
    echo "$case: moe-bench finished, $(grep '^tokens verified' "$dir/bench.out" | cut -d'(' -f1)," \
      "$(grep '^reconfigurations' "$dir/bench.out")"
    return 0
  fi
  echo "$case: moe-bench stopped (exit $rc): $(grep -m1 'error' "$dir/bench.err")"
  return 1
}

# start_case CASE BENCH-ARGS...: starts moe-bench (bench BENCH-ARGS) in the background and returns
# once a reconfiguration is under way while it runs, the moment a fault is injected; counts a
# case where that does not happen.
start_case() {
  local case=$1
  shift
  bench "$@" &
  bench_pid=$!
  sleep 2
  in_reconfiguration
  expect $? "$case: no reconfiguration to land the fault in"
  kill -0 "$bench_pid" 2> /dev/null
  expect $? "$case: moe-bench had finished before the fault"
}

# 1. kill -9 the emulator in the middle of a reconfiguration, restart it on the same state.
start_case emulator-kill 11
kill -9 "$emulator_pid"
wait "$emulator_pid" 2> /dev/null
echo "emulator-kill: killed the emulator (kill -9) during a reconfiguration ($(running $bench_pid));" \
  "restarting it on its state in 1 s"
sleep 1
start_emulator
wait "$bench_pid"
report $? emulator-kill
expect $? "emulator-kill: expected every token verified"

# 2. kill -9 the controller mid-run; restart it on the same address.
start_case controller-kill 12
kill -9 "$controller_pid"
wait "$controller_pid" 2> /dev/null
echo "controller-kill: killed the controller (kill -9) during a reconfiguration" \
  "($(running $bench_pid)); restarting it in 1 s"
sleep 1
start_controller
wait "$bench_pid"
report $? controller-kill
expect $? "controller-kill: expected every token verified"

# 3. fail OCS port 2 (server 1's OCS NIC, local NIC 1) mid-run; repair it afterwards. Under
# reuse-previous: each layer runs on the circuits submitted after the one before.
start_case port-fail 13 60s reuse-previous
echo "port-fail: OPR-PORT-FAIL::2 -> $(tl1 'OPR-PORT-FAIL::2:2;' | tail -1) ($(running $bench_pid))"
wait "$bench_pid"
report $? port-fail
expect $? "port-fail: expected every token verified"
on_port_2=$(tl1 'RTRV-PATCH:::3;' | grep -cE '"2,|,2"' || true)
echo "  patches on port 2 after the run: $on_port_2 (the controller removed it and planned around it)"
test "$on_port_2" -eq 0
expect $? "port-fail: a patch on the failed port 2 is still in force"
tl1 'RLS-PORT-FAIL::2:4;' > /dev/null

# 4. kill -9 the emulator and leave it down: the controller answers UNAVAILABLE, moe-bench retries
# within --controller-timeout (5 s) and then stops, every rank, with one line.
start_case emulator-gone 14 5s
kill -9 "$emulator_pid"
wait "$emulator_pid" 2> /dev/null
emulator_pid=
echo "emulator-gone: killed the emulator (kill -9) during a reconfiguration" \
  "($(running $bench_pid)); not restarted"
wait "$bench_pid"
report $? emulator-gone
test $? -ne 0
expect $? "emulator-gone: moe-bench finished without an OCS"
lines=$(grep -c 'error' "$dir/bench.err")
echo "  error lines: $lines"
test "$lines" -eq 1
expect $? "emulator-gone: expected one error line, got $lines"
grep -q "OCS $ocs" "$dir/bench.err"
expect $? "emulator-gone: the error does not name the OCS $ocs"

if $check; then
  if [ "$failures" -gt 0 ]; then
    echo "runtime faults: $failures checks FAILED"
    exit 1
  fi
  echo "runtime faults: every case ended as it should"
fi
