#!/usr/bin/env bash
# Proves that two mfabric binaries behave the same: runs the same cases (simulate, cost, compare,
# sweep, the validation scripts) with each and compares every output file byte for byte
# (docs/check-identical.md). For refactors that must not change behaviour.
#
# Usage:
#   scripts/check-identical.sh [OPTIONS] BASE NEW      two mfabric executables
#   scripts/check-identical.sh [OPTIONS] --rev REV [NEW]
#       builds REV's mfabric (Release, Ninja) in a git worktree under WORK and uses it as BASE;
#       NEW defaults to build/release/src/cli/mfabric
#
# Options:
#   --tier quick|standard|full   which cases (default quick; each tier holds the one before)
#   --slow                       also the 2-hour packet-level Mixtral 8x22B run
#   --work DIR                   where outputs go (default build/check-identical): DIR/base,
#                                DIR/new, DIR/derived (inputs the script writes), DIR/rev-*
#   --jobs N                     N >= 2 (default 2): the BASE and NEW sides run at the same time,
#                                compare and sweep get N/2 threads each; 1: one side after the
#                                other
#   --only REGEX                 only the cases whose name matches (grep -E)
#   --list                       print the cases of the tier and exit
#
# Exit status: 0 identical; 1 at least one case differs (output files, exit status, or the
# error message of a case that is meant to fail); 2 usage error, or a case failed with both
# binaries (the check proves nothing then), or the --rev build failed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
caller_dir=$PWD  # relative BASE, NEW and --work are relative to it
cd "$root"       # the cases' paths are relative to the repository root

# ---------------------------------------------------------------------------------------------
# The cases: "TIER KIND NAME ARGUMENTS...". KIND is the function case_KIND below. Paths are
# relative to the repository root; @D/ is WORK/derived/, inputs write_derived creates. Names are
# unique: they are the case's directory under WORK/base and WORK/new.
#
# Times (CPU per binary, about the wall time of both sides at once on 2 idle cores; wall time of
# both sides on a busy 2-core machine), measured in docs/check-identical.md:
# quick (22 s; 90 s): the small examples, costs, every mFabric policy and switching rule,
#   spraying, failures, the packet backend's transports, errors, compare and sweep end to end.
# standard (2.3 min; 9 min): + the 1024-GPU Mixtral 8x22B examples on every fabric, three of the
#   paper's sweeps, mFabric on the packet backend with 64 KiB packets.
# full (more than an hour per binary): + the packet example as shipped, the other sweeps, the
#   validation scripts and compare's default grid (the paper's evaluation, ~21 min on 2 cores).
# --slow: + examples/mixtral-8x22b-packet.yaml (about 2h15m per binary).
# ---------------------------------------------------------------------------------------------
CASES=()
for f in examples/micro/*.yaml; do
  CASES+=("quick simulate micro-$(basename "$f" .yaml) $f --flows")
done
CASES+=(
  "quick simulate htsim-permutation        examples/htsim/permutation.yaml --flows"
  "quick simulate mixtral-8x7b             examples/mixtral-8x7b.yaml --flows"
  "quick cost     cost-fat-tree            --fabric fat-tree --prices examples/prices.yaml"
  "quick cost     cost-mfabric             --fabric mfabric --prices examples/prices.yaml"
  "quick cost     cost-topoopt             --fabric topoopt --prices examples/prices.yaml"
  "quick cost     cost-all-paper-1.6T      --convention paper --link 1.6T --prices examples/prices.yaml"
  # The five policies, two iterations so that reuse-previous and predict see a previous one
  "quick simulate policy-block             examples/mixtral-8x7b.yaml --iterations 2 --fabric mfabric:region=4,policy=block"
  "quick simulate policy-reuse-previous    examples/mixtral-8x7b.yaml --iterations 2 --fabric mfabric:region=4,policy=reuse-previous"
  "quick simulate policy-eps-during-switch examples/mixtral-8x7b.yaml --iterations 2 --fabric mfabric:region=4,policy=eps-during-switch"
  "quick simulate policy-predict           examples/mixtral-8x7b.yaml --iterations 2 --fabric mfabric:region=4,policy=predict"
  "quick simulate policy-oracle            examples/mixtral-8x7b.yaml --iterations 2 --fabric mfabric:region=4,policy=oracle"
  "quick simulate switching-when-faster    examples/mixtral-8x7b.yaml --iterations 2 --fabric mfabric:region=4,reconfiguration=1s,switching=when-faster"
  "quick simulate reconfiguration-0s       examples/mixtral-8x7b.yaml --fabric mfabric:region=4,reconfiguration=0s"
  "quick simulate routing-spray            @D/mixtral-8x7b-spray.yaml"
  # Failures on 8 (12 with a spare region) servers of mFabric (tests/sim/failures_test.cpp)
  "quick simulate failure-ocs-port-start   @D/failure-ocs-port-start.yaml --flows"
  "quick simulate failure-ocs-port-30ms    @D/failure-ocs-port-30ms.yaml --flows"
  "quick simulate failure-eps-nics-relay   @D/failure-eps-nics-relay.yaml --flows"
  "quick simulate failure-gpu-spare        @D/failure-gpu-spare.yaml --flows"
  "quick simulate failure-server-spare     @D/failure-server-spare.yaml --flows"
  # Packet backend: a 64-host all-to-all (bench/packet.sh) on a 3:1 fat-tree (drops, ECN, PFC)
  "quick simulate packet-a2a-dctcp         @D/packet-a2a-dctcp.yaml --flows"
  "quick simulate packet-a2a-dctcp-pfc     @D/packet-a2a-dctcp-pfc.yaml --flows"
  "quick simulate packet-a2a-roce-dcqcn    @D/packet-a2a-roce-dcqcn.yaml --flows"
  "quick simulate packet-a2a-irn           @D/packet-a2a-irn.yaml --flows"
  "quick simulate packet-a2a-spray         @D/packet-a2a-spray.yaml --flows"
  # Bad input: the exit status and the error message must match
  "quick simulate-error error-failure-range @D/error-failure-range.yaml"
  "quick simulate-error error-fabric-param examples/mixtral-8x7b.yaml --fabric mfabric:regoin=4"
  "quick compare  compare-mixtral-8x7b-32  --models mixtral-8x7b --links 400G --servers 32"
  "quick sweep    sweep-two-delays         @D/sweep-two-delays.yaml"
)
for f in examples/mixtral-8x22b*.yaml; do
  [[ $f == *-packet.yaml ]] && continue
  CASES+=("standard simulate $(basename "$f" .yaml) $f")
done
CASES+=(
  "standard sweep    sweep-reconfiguration-delay             examples/sweeps/reconfiguration-delay.yaml"
  "standard sweep    sweep-reconfiguration-delay-when-faster examples/sweeps/reconfiguration-delay-when-faster.yaml"
  "standard sweep    sweep-nvl72-outlook                     examples/sweeps/nvl72-outlook.yaml"
  "standard simulate packet-mfabric-64k-block                @D/packet-mfabric-64k-block.yaml"
  "standard simulate packet-mfabric-64k-eps-during-switch    @D/packet-mfabric-64k-eps-during-switch.yaml"
  "full     simulate mixtral-8x7b-mfabric-packet             examples/mixtral-8x7b-mfabric-packet.yaml"
  "full     sweep    sweep-batch-vs-topoopt                  examples/sweeps/batch-vs-topoopt.yaml"
  "full     sweep    sweep-alpha-equal-cost                  examples/sweeps/alpha-equal-cost.yaml"
  "full     sweep    sweep-scale                             examples/sweeps/scale.yaml"
)
# The validation scripts that regenerate a table from scratch on their own. Not the others:
# update.sh rewrites docs/validation.md, study-tables.sh takes a table's name, and the studies
# (compare-default.sh, paper-assumptions.sh, crossover.sh, studies.sh) reuse results left in
# build/validation/ from an earlier run, which both sides would share; the paper's evaluation
# they are made of is the two compare cases below.
for name in cost fabrics failures holds link-speed overlap policies workload; do
  CASES+=("full validation validation-$name scripts/validation/$name.sh")
done
CASES+=(
  "full     compare  compare-default-grid     --full"
  "full     compare  compare-paper-assumptions --assumptions paper"
  "slow     simulate mixtral-8x22b-packet                    examples/mixtral-8x22b-packet.yaml"
)

# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------
usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}
die() {  # MESSAGE: a usage or set-up error, exit 2
  echo "check-identical: $*" >&2
  exit 2
}

tier=quick slow=0 work="$root/build/check-identical" jobs=2 rev="" only="" list=0
positional=()
while (($#)); do
  case "$1" in
    --tier) (($# >= 2)) || die "--tier needs a value"; tier=$2; shift 2 ;;
    --slow) slow=1; shift ;;
    --work) (($# >= 2)) || die "--work needs a value"; work=$2; shift 2 ;;
    --jobs) (($# >= 2)) || die "--jobs needs a value"; jobs=$2; shift 2 ;;
    --rev) (($# >= 2)) || die "--rev needs a value"; rev=$2; shift 2 ;;
    --only) (($# >= 2)) || die "--only needs a value"; only=$2; shift 2 ;;
    --list) list=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; positional+=("$@"); break ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) positional+=("$1"); shift ;;
  esac
done
case "$tier" in
  quick | standard | full) ;;
  *) die "--tier must be quick, standard or full, not '$tier'" ;;
esac
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a whole number of at least 1, not '$jobs'"

# The selected cases, in table order
selected=()
for c in "${CASES[@]}"; do
  read -r t _ name _ <<<"$c"
  case "$t" in
    quick) ;;
    standard) [[ $tier != quick ]] || continue ;;
    full) [[ $tier == full ]] || continue ;;
    slow) ((slow)) || continue ;;
  esac
  if [[ -n $only ]] && ! grep -Eq -- "$only" <<<"$name"; then continue; fi
  selected+=("$c")
done
if ((list)); then
  printf '%s\n' "${selected[@]}" | awk '{ $1 = sprintf("%-8s", $1); print }'
  exit 0
fi
((${#selected[@]})) || die "no case matches --only '$only' in tier $tier"

if [[ -n $rev ]]; then
  ((${#positional[@]} <= 1)) || die "with --rev give at most NEW (see --help)"
  new=${positional[0]:-$root/build/release/src/cli/mfabric}
else
  ((${#positional[@]} == 2)) || die "give BASE and NEW, two mfabric executables, or --rev REV (see --help)"
  base=${positional[0]}
  new=${positional[1]}
fi
abspath() { (cd "$caller_dir" && realpath -m -- "$1"); }
check_binary() {  # LABEL PATH
  [[ -f $2 && -x $2 ]] || die "$1 '$2' is not an executable file"
}
work=$(abspath "$work")
new=$(abspath "$new")
check_binary NEW "$new"
[[ -z ${base:-} ]] || { base=$(abspath "$base"); check_binary BASE "$base"; }

command -v python3 >/dev/null || die "needs python3 (bench/all_to_all_cm.py, wall times out of JSON)"
have_jq=0  # jq shows differing JSON member by member; without it, diff shows the lines
command -v jq >/dev/null && have_jq=1
for c in "${selected[@]}"; do
  read -r _ kind _ <<<"$c"
  if [[ $kind == compare || $kind == sweep ]] && ! command -v gnuplot >/dev/null; then
    die "compare and sweep --out need gnuplot (scripts/install-deps.sh); or narrow with --only"
  fi
done

# ---------------------------------------------------------------------------------------------
# --rev: build REV's mfabric in a worktree (kept under WORK, reused by the next run)
# ---------------------------------------------------------------------------------------------
build_rev() {  # REV -> sets base
  local sha dir
  sha=$(git -C "$root" rev-parse --verify --quiet "$1^{commit}") || die "--rev: '$1' is not a commit"
  dir="$work/rev-${sha:0:12}"
  if [[ ! -e $dir/src/.git ]]; then
    rm -rf "$dir/src"
    git -C "$root" worktree prune
    git -C "$root" worktree add --detach --force "$dir/src" "$sha" >&2 ||
      die "--rev: git worktree add failed"
  fi
  echo "building $1 ($sha) in $dir/build ..." >&2
  if ! { cmake -S "$dir/src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$dir/build" --target mfabric; } >"$dir/build.log" 2>&1; then
    tail -20 "$dir/build.log" >&2
    die "--rev: building $1 failed (log: $dir/build.log)"
  fi
  base="$dir/build/src/cli/mfabric"
  check_binary "BASE (built from $1)" "$base"
}
mkdir -p "$work"
[[ -z $rev ]] || build_rev "$rev"

# ---------------------------------------------------------------------------------------------
# Inputs the script writes (WORK/derived), the same for both sides
# ---------------------------------------------------------------------------------------------
derived="$work/derived"
write_derived() {
  rm -rf "$derived"
  mkdir -p "$derived"
  local d=$derived
  # Spraying on the Mixtral 8x7B job
  { cat examples/mixtral-8x7b.yaml; echo "simulation: {routing: spray}"; } >"$d/mixtral-8x7b-spray.yaml"

  # Failures (tests/sim/failures_test.cpp): 8 servers of mFabric, two regions of 4; 12 servers
  # with the job on the first 8 (dp 1) when a spare is needed. On mFabric NICs 0 and 1 are EPS.
  failure_job() {  # SERVERS DP FAILURES
    printf 'seed: 1\ncluster: {servers: %s, link: 400G}\n' "$1"
    printf 'fabric: {kind: mfabric, region: 4, policy: block}\n'
    printf 'workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 8, micro_batch: 2, seq: 256%s}\n' "$2"
    printf 'failures: %s\n' "$3"
  }
  failure_job 8 "" "[{kind: ocs-port, server: 1, index: 0, at: start}]" >"$d/failure-ocs-port-start.yaml"
  failure_job 8 "" "[{kind: ocs-port, server: 1, index: 0, at: 30ms}]" >"$d/failure-ocs-port-30ms.yaml"
  failure_job 8 "" "[{kind: nic, server: 1, index: 0}, {kind: nic, server: 1, index: 1, at: 20ms}]" \
    >"$d/failure-eps-nics-relay.yaml"
  failure_job 12 ", dp: 1" "[{kind: gpu, server: 1, index: 2}]" >"$d/failure-gpu-spare.yaml"
  failure_job 12 ", dp: 1" "[{kind: server, server: 6}]" >"$d/failure-server-spare.yaml"
  failure_job 8 "" "[{kind: ocs-port, server: 99, index: 0}]" >"$d/error-failure-range.yaml"

  # A 64-host all-to-all, 16 MB per host (bench/packet.sh), on the packet backend
  python3 bench/all_to_all_cm.py 64 16000000 "$d/a2a-64.cm"
  local name settings
  for name in dctcp:"" dctcp-pfc:", pfc: true" roce-dcqcn:", transport: roce-dcqcn" \
    irn:", transport: irn" spray:", routing: spray"; do
    settings=${name#*:}
    cat >"$d/packet-a2a-${name%%:*}.yaml" <<YAML
cluster: {servers: 64, gpus_per_server: 1, nics_per_server: 1, link: 400G}
fabric: {kind: fat-tree, oversubscription: 3}
workload: {connection_matrix: a2a-64.cm}
simulation: {backend: packet$settings}
YAML
  done

  # mFabric on the packet backend with 64 KiB packets, under two policies
  local policy
  for policy in block eps-during-switch; do
    sed -e 's/transport: dctcp}/transport: dctcp, mtu: 64KiB}/' -e "s/policy: block/policy: $policy/" \
      examples/mixtral-8x7b-mfabric-packet.yaml >"$d/packet-mfabric-64k-$policy.yaml"
    if ! grep -q "mtu: 64KiB" "$d/packet-mfabric-64k-$policy.yaml" ||
      ! grep -q "policy: $policy" "$d/packet-mfabric-64k-$policy.yaml"; then
      die "examples/mixtral-8x7b-mfabric-packet.yaml changed: fix write_derived"
    fi
  done

  # A two-point sweep (the shape of examples/sweeps/reconfiguration-delay.yaml) on 128 GPUs
  cat >"$d/sweep-two-delays.yaml" <<'YAML'
name: sweep-two-delays
description: Mixtral 8x7B, 16 servers, 400G; two OCS reconfiguration delays
experiment:
  seed: 1
  cluster: {servers: 16, link: 400G, gpu: h800}
  fabric: {kind: mfabric, alpha: 6, region: 4, reconfiguration: 25ms, policy: block, planner: greedy}
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, ep: 8, micro_batch: 8, global_batch: 128}
grid:
  fabric.reconfiguration: [1ms, 1s]
x: fabric.reconfiguration
YAML
}

# ---------------------------------------------------------------------------------------------
# One function per case kind: case_KIND DIR BINARY ARGS... runs the case into DIR/out (compared,
# byte for byte), with its stdout and stderr in DIR/run.log (not compared: wall times) and
# anything else kept for diagnosis in DIR/raw (not compared). Returns mfabric's exit status.
# ---------------------------------------------------------------------------------------------
inner_jobs=$((jobs >= 2 ? jobs / 2 : 1))

# simulate FILE [OPTIONS]: results.json, links.csv, collectives.csv, utilisation.csv,
# report.html, trace.json (--trace), flows.csv (with --flows)
case_simulate() {
  local dir=$1 bin=$2
  shift 2
  "$bin" simulate "$@" --out "$dir/out" --trace >"$dir/run.log" 2>&1
}

# simulate FILE [OPTIONS] that must fail: its exit status (compared as for every case) and its
# error message (out/stderr.txt)
case_simulate-error() {
  local dir=$1 bin=$2 status=0
  shift 2
  mkdir -p "$dir/out"
  "$bin" simulate "$@" >"$dir/run.log" 2>"$dir/out/stderr.txt" || status=$?
  cat "$dir/out/stderr.txt" >>"$dir/run.log"
  return "$status"
}

# cost OPTIONS: the --json document (stdout; cost measures no time)
case_cost() {
  local dir=$1 bin=$2
  shift 2
  mkdir -p "$dir/out"
  "$bin" cost "$@" --json >"$dir/out/cost.json" 2>"$dir/run.log"
}

# compare [OPTIONS]: results.json (no wall times), results.csv, report.html
case_compare() {
  local dir=$1 bin=$2 status=0
  shift 2
  "$bin" compare "$@" --jobs "$inner_jobs" --out "$dir/out" >"$dir/run.log" 2>&1 || status=$?
  # Its journal (points.jsonl) as a sweep's, and without the runs' fingerprints: a comparison
  # hashes the build's version into them (cli/compare_command.cpp), so two builds never share one.
  if [[ -f $dir/out/points.jsonl ]]; then
    mkdir -p "$dir/raw"
    mv "$dir/out/points.jsonl" "$dir/raw/points.jsonl"
    strip_wall fingerprint <"$dir/raw/points.jsonl" | sort >"$dir/out/points-without-wall-times.jsonl"
  fi
  return "$status"
}

# sweep FILE: results.json, results.csv, report.html, and the journal points.jsonl without its
# wall times, its lines sorted (points finish in any order; the raw journal is kept in raw/)
case_sweep() {
  local dir=$1 bin=$2 status=0
  shift 2
  "$bin" sweep "$@" --jobs "$inner_jobs" --out "$dir/out" >"$dir/run.log" 2>&1 || status=$?
  if [[ -f $dir/out/points.jsonl ]]; then
    mkdir -p "$dir/raw"
    mv "$dir/out/points.jsonl" "$dir/raw/points.jsonl"
    strip_wall <"$dir/raw/points.jsonl" | sort >"$dir/out/points-without-wall-times.jsonl"
  fi
  return "$status"
}

# scripts/validation/X.sh: they take the binary as $1 and write their experiments and results
# into `mktemp -d -t` (TMPDIR here, so WORK/SIDE/CASE/raw/tmp/mfabric-*.XXXXXX). Compared: their
# stdout (out/stdout.md) and every .json, .jsonl and .csv they leave (out/files/), with wall-clock
# figures taken out (JSON members named *wall* and events_per_s; the markdown tables' "wall"
# column) and the temporary directory's name replaced by @WORK@.
case_validation() {
  local dir=$1 bin=$2 script=$3 status=0 tmp f rel
  mkdir -p "$dir/raw/tmp" "$dir/out/files"
  TMPDIR="$dir/raw/tmp" bash "$script" "$bin" >"$dir/raw/stdout.md" 2>"$dir/run.log" || status=$?
  cat "$dir/raw/stdout.md" >>"$dir/run.log"
  tmp=$(find "$dir/raw/tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
  tmp=${tmp:-$dir/raw/tmp}
  sed "s#$tmp#@WORK@#g" "$dir/raw/stdout.md" | strip_wall_column >"$dir/out/stdout.md"
  while IFS= read -r -d '' f; do
    rel=${f#"$tmp"/}
    mkdir -p "$dir/out/files/$(dirname "$rel")"
    if [[ $f == *.json || $f == *.jsonl ]] && grep -Eq '"[^"]*wall[^"]*"|"events_per_s"' "$f"; then
      strip_wall <"$f"
    else
      cat "$f"
    fi | sed "s#$tmp#@WORK@#g" >"$dir/out/files/$rel"
  done < <(find "$tmp" -type f \( -name '*.json' -o -name '*.jsonl' -o -name '*.csv' \) -print0)
  return "$status"
}

# JSON documents on stdin (one per line, or one pretty-printed), one per line on stdout without
# the members that measure the run: names containing "wall" (wall_time_s, planning_wall_time_s)
# and events_per_s. Python keeps every number exact (integers as they are, floats round-trip).
# What produced an output (the build's version and the command line, which names the output
# directory) differs between the two sides by design: the JSON's "provenance" member, a CSV's
# first line "# mfabric ..." and report.html's provenance line are left out of the comparison.
strip_provenance() {  # DIR
  local f
  for f in "$1"/*.json; do
    [[ -f $f && $(basename "$f") != trace.json ]] || continue
    sed -i '/^  "provenance": {$/,/^  },\{0,1\}$/d' "$f"
  done
  for f in "$1"/*.csv; do
    [[ -f $f ]] && sed -i '1{/^# mfabric /d}' "$f"
  done
  for f in "$1"/*.html; do
    [[ -f $f ]] && sed -i '/<p class="provenance">/d' "$f"
  done
  return 0
}

strip_wall() {
  python3 -c '
import json, sys
drop = set(sys.argv[1:]) | {"events_per_s"}
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if "wall" not in k and k not in drop}
    return [strip(x) for x in v] if isinstance(v, list) else v
dec = json.JSONDecoder(); text = sys.stdin.read(); i = 0
while True:
    while i < len(text) and text[i].isspace(): i += 1
    if i == len(text): break
    v, i = dec.raw_decode(text, i)
    print(json.dumps(strip(v), separators=(",", ":")))' "$@"
}

# Markdown tables on stdin with every column whose header names "wall" emptied
strip_wall_column() {
  awk -F'|' -v OFS='|' '
    /^\|/ && !in_table {
      in_table = 1
      split("", wall)
      for (i = 2; i < NF; i++) if (tolower($i) ~ /wall/) wall[i] = 1
      print
      next
    }
    /^\|/ {
      for (i in wall) if ($i !~ /^-+$/) $i = " - "
      print
      next
    }
    { in_table = 0; print }'
}

# ---------------------------------------------------------------------------------------------
# Running one side
# ---------------------------------------------------------------------------------------------
now() { echo "${EPOCHREALTIME/./}"; }  # microseconds

run_side() {  # SIDE BINARY
  local side=$1 bin=$2 i=0 n=${#selected[@]} c kind name args t0 t1 status dir a
  for c in "${selected[@]}"; do
    i=$((i + 1))
    read -r _ kind name rest <<<"$c"
    read -ra args <<<"${rest:-}"
    for a in "${!args[@]}"; do args[a]=${args[a]//@D\//$derived/}; done
    dir="$work/$side/$name"
    rm -rf "$dir"
    mkdir -p "$dir"
    t0=$(now)
    status=0
    "case_$kind" "$dir" "$bin" "${args[@]}" || status=$?
    [[ -d $dir/out ]] && strip_provenance "$dir/out"
    t1=$(now)
    echo "$status" >"$dir/status"
    printf '[%s %d/%d] %s %s ... %d.%02ds%s\n' "$side" "$i" "$n" "$kind" "$name" \
      $(((t1 - t0) / 1000000)) $(((t1 - t0) / 10000 % 100)) \
      "$( ((status == 0)) || echo " (exit $status)")" >&2
  done
}

# ---------------------------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------------------------
cut_lines() { cut -c1-240; }
indent() { sed 's/^/    /'; }

show_difference() {  # A B: the first differing lines
  local a=$1 b=$2 out line
  local size
  size=$(stat -c %s "$a")
  if [[ $a == */trace.json || $a != *.json && $a != *.jsonl && $a != *.csv && $a != *.html &&
    $a != *.md && $a != *.txt ]] || ((size > 16 * 1024 * 1024)); then
    out=$(cmp "$a" "$b" 2>&1 || true)
    echo "    $out"
    line=$(sed -n 's/.*line \([0-9]*\).*/\1/p' <<<"$out")
    if [[ -n $line ]]; then
      echo "    base line $line: $(sed -n "${line}{p;q}" "$a" | cut_lines)"
      echo "    new  line $line: $(sed -n "${line}{p;q}" "$b" | cut_lines)"
    fi
    return
  fi
  if ((have_jq)) && [[ $a == *.json || $a == *.jsonl ]] && jq -e . "$a" >/dev/null 2>&1 &&
    jq -e . "$b" >/dev/null 2>&1; then
    out=$(diff <(jq -S . "$a") <(jq -S . "$b") | head -20 | cut_lines || true)
    if [[ -z $out ]]; then
      out="(the same JSON values, written differently) $(cmp "$a" "$b" 2>&1 || true)"
    fi
  else
    out=$(diff "$a" "$b" | head -20 | cut_lines || true)
  fi
  indent <<<"$out"
}

compare_case() {  # NAME KIND: prints the differences, returns 0 same, 1 different, 2 error
  local name=$1 kind=$2 b="$work/base/$1" n="$work/new/$1" sb sn rel result=0
  sb=$(cat "$b/status" 2>/dev/null || echo missing)
  sn=$(cat "$n/status" 2>/dev/null || echo missing)
  if [[ $sb != "$sn" ]]; then
    echo "DIFFERENT $kind $name: exit status $sb with BASE, $sn with NEW"
    echo "    BASE log ($b/run.log), last lines:"
    tail -3 "$b/run.log" 2>/dev/null | cut_lines | sed 's/^/      /'
    echo "    NEW log ($n/run.log), last lines:"
    tail -3 "$n/run.log" 2>/dev/null | cut_lines | sed 's/^/      /'
    return 1
  fi
  if [[ $kind == *-error && $sb == 0 ]]; then
    echo "ERROR $kind $name: meant to fail, succeeded with both binaries (fix the case)"
    return 2
  fi
  if [[ $kind != *-error && $sb != 0 ]]; then
    echo "ERROR $kind $name: failed with both binaries (exit $sb); logs $b/run.log, $n/run.log:"
    tail -3 "$n/run.log" | cut_lines | sed 's/^/      /'
    return 2
  fi
  while IFS= read -r rel; do
    if [[ ! -f $b/out/$rel ]]; then
      echo "DIFFERENT $kind $name: $rel only written by NEW ($n/out/$rel)"
      result=1
    elif [[ ! -f $n/out/$rel ]]; then
      echo "DIFFERENT $kind $name: $rel only written by BASE ($b/out/$rel)"
      result=1
    elif ! cmp -s "$b/out/$rel" "$n/out/$rel"; then
      echo "DIFFERENT $kind $name: $rel"
      echo "    diff $b/out/$rel $n/out/$rel"
      show_difference "$b/out/$rel" "$n/out/$rel"
      result=1
    fi
  done < <({ [[ ! -d $b/out ]] || (cd "$b/out" && find . -type f); [[ ! -d $n/out ]] ||
    (cd "$n/out" && find . -type f); } | sed 's#^\./##' | LC_ALL=C sort -u)
  return "$result"
}

# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------
echo "check-identical: tier $tier, ${#selected[@]} cases, work $work" >&2
echo "  BASE $base" >&2
echo "  NEW  $new" >&2
start=$(now)
write_derived  # each case's directory is replaced when it runs; other cases' are left alone
if ((jobs >= 2)); then
  run_side base "$base" &
  pid_base=$!
  run_side new "$new" &
  pid_new=$!
  side_base=0 side_new=0
  wait "$pid_base" || side_base=$?
  wait "$pid_new" || side_new=$?
  ((side_base == 0 && side_new == 0)) || die "a side stopped (BASE: exit $side_base, NEW: exit $side_new)"
else
  run_side base "$base"
  run_side new "$new"
fi

different=() errors=()
for c in "${selected[@]}"; do
  read -r _ kind name _ <<<"$c"
  status=0
  compare_case "$name" "$kind" || status=$?
  case $status in
    0) ;;
    1) different+=("$name") ;;
    *) errors+=("$name") ;;
  esac
done
elapsed=$((($(now) - start) / 1000000))
if ((${#errors[@]})); then
  echo "error: ${#errors[@]} of ${#selected[@]} cases could not be compared (tier $tier): ${errors[*]}"
  ((${#different[@]} == 0)) || echo "different: ${#different[@]} cases: ${different[*]}"
  exit 2
fi
if ((${#different[@]})); then
  echo "different: ${#different[@]} of ${#selected[@]} cases (tier $tier, ${elapsed}s): ${different[*]}"
  echo "outputs: $work/base and $work/new (each case: out/ compared, run.log, status)"
  exit 1
fi
echo "identical: ${#selected[@]} case$( ((${#selected[@]} == 1)) || echo s) (tier $tier, ${elapsed}s)"
