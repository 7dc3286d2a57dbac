#!/usr/bin/env bash
# moe-bench asking the region controller for its circuits (docs/runtime.md, "moe-bench with the
# controller"): an OCS emulator, a controller in front of it (bearer token) and 8 MPI ranks in 2
# servers of 4. Under both policies every token is verified, the received bytes equal
# MPI_Alltoallv's and the circuits change (reconfigurations > 0); a wrong token is one line. Then
# over TLS with client certificates (made here with openssl): every token verified with a
# certificate the controller's CA signed, one line for one it did not.
# Everything runs under a timeout and stops by itself (--max-time).
# Arguments: the mfabric binary, mpiexec.
set -euo pipefail
mfabric=$1
mpiexec=$2
dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# start NAME COMMAND...: runs it in the background and sets `address` from its first line,
# "listening on HOST:PORT", waiting at most 60 s for it (a loaded CI machine starts slowly).
start() {
  local name=$1
  shift
  # The files exist before the background job opens them: the loop below may read first.
  : > "$dir/$name.out"
  : > "$dir/$name.err"
  "$@" > "$dir/$name.out" 2> "$dir/$name.err" &
  pids+=($!)
  address=
  for _ in $(seq 600); do
    address=$(sed -n 's/^listening on //p' "$dir/$name.out")
    [ -n "$address" ] && return 0
    sleep 0.1
  done
  echo "$name did not start: $(cat "$dir/$name.err")"
  exit 1
}

# 2 servers of 4 GPUs, each GPU one NIC, the last 2 of a server on the OCS (moe-bench's default
# --alpha for 4 ranks a server): OCS ports 1-4.
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
# fresh_ocs NAME [AUTH...]: an emulator on an empty switch and a controller in front of it (the
# previous ones stopped), authenticating callers with AUTH (default: the token file), so that a
# run's first circuits are a reconfiguration of the OCS: between 2 servers every plan is the same
# pair, and circuits left by a previous run would stay.
fresh_ocs() {
  local name=$1
  shift
  [ $# -gt 0 ] || set -- --token-file "$dir/token"
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
  pids=()
  start emulator "$mfabric" ocs-emulator --ports 16 --switching 5ms --state "$dir/$name.state" \
    --max-time 240s -q
  ocs=$address
  start controller "$mfabric" controller --ocs "$ocs" --regions "$dir/regions.yaml" "$@" \
    --max-time 240s
  controller=$address
}

run() {
  timeout 120 "$mpiexec" --oversubscribe -n 8 "$mfabric" moe-bench --servers 2 --layers 4 \
    --tokens 256 --top-k 2 --hidden 256B --seed 5 --controller "$controller" "$@"
}
expected=$((4 * 8 * 256 * 2 * 2))
field() { grep -o "\"$1\": [^,}]*" "$2" | tail -1 | sed 's/.*: //'; }

for policy in block reuse-previous; do
  fresh_ocs "$policy"
  run --token-file "$dir/token" --policy "$policy" --json > "$dir/$policy.json"
  test "$(field tokens_verified "$dir/$policy.json")" -eq "$expected"
  test "$(field equal_to_alltoallv "$dir/$policy.json")" = true
  test "$(field reconfigurations "$dir/$policy.json")" -gt 0
  test "$(field bytes_circuit "$dir/$policy.json")" -gt 0
  echo "$policy: $(field tokens_verified "$dir/$policy.json") token checks," \
    "$(field reconfigurations "$dir/$policy.json") reconfigurations"
done
grep -q '"waits": [1-9]' "$dir/block.json"
grep -q '"waits": 0' "$dir/reuse-previous.json"

# A wrong token: one line naming the controller and UNAUTHENTICATED, a non-zero exit, no hang.
printf 'not-the-token-0123456789\n' > "$dir/wrong"
if run --token-file "$dir/wrong" --controller-timeout 10s > "$dir/wrong.out" 2> "$dir/wrong.err"; then
  echo "moe-bench with a wrong token should fail"
  exit 1
fi
test "$(grep -c "UNAUTHENTICATED" "$dir/wrong.err")" -eq 1
# No credentials: one line.
if run > "$dir/none.out" 2> "$dir/none.err"; then
  echo "moe-bench --controller without credentials should fail"
  exit 1
fi
test "$(grep -c -- "--token-file" "$dir/none.err")" -eq 1

# TLS end to end: a controller that requires client certificates signed by its CA (no token);
# moe-bench with a certificate the CA signed verifies every token, one signed by another CA is
# one line and a non-zero exit.
(
  cd "$dir"
  exec > openssl.log 2>&1
  for ca in ca other-ca; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $ca.key \
      -out $ca.pem -days 1 -subj "/CN=$ca"
  done
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > server.ext
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key \
    -out server.csr -subj /CN=localhost
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
    -extfile server.ext -out server.pem
  for client in trainer:ca stranger:other-ca; do
    name=${client%:*} signer=${client#*:}
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $name.key \
      -out $name.csr -subj "/CN=$name"
    openssl x509 -req -in $name.csr -CA $signer.pem -CAkey $signer.key -CAcreateserial -days 1 \
      -out $name.pem
  done
) || {
  echo "could not make the test certificates: $(cat "$dir/openssl.log")"
  exit 1
}
fresh_ocs tls --tls-cert "$dir/server.pem" --tls-key "$dir/server.key" --tls-ca "$dir/ca.pem"
run --tls-cert "$dir/trainer.pem" --tls-key "$dir/trainer.key" --tls-ca "$dir/ca.pem" \
  --policy block --json > "$dir/tls.json"
test "$(field tokens_verified "$dir/tls.json")" -eq "$expected"
test "$(field equal_to_alltoallv "$dir/tls.json")" = true
echo "TLS: $(field tokens_verified "$dir/tls.json") token checks with a client certificate"
if run --tls-cert "$dir/stranger.pem" --tls-key "$dir/stranger.key" --tls-ca "$dir/ca.pem" \
  --controller-timeout 5s > "$dir/stranger.out" 2> "$dir/stranger.err"; then
  echo "moe-bench with a certificate the controller's CA did not sign should fail"
  exit 1
fi
test "$(grep -c "error" "$dir/stranger.err")" -eq 1
grep -q "controller $controller.*TLS handshake" "$dir/stranger.err"
echo "TLS: a certificate from another CA: $(grep -m1 error "$dir/stranger.err")"
echo "moe-bench with the controller: every token verified, equal to MPI_Alltoallv, both policies"
