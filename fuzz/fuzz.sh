#!/usr/bin/env bash
# Runs mfabric's libFuzzer harnesses (docs/reliability.md). BUILD_DIR is the clang build made with
# -DMFABRIC_BUILD_FUZZ=ON (`make fuzz` and `make test` use build/fuzz).
#
#   fuzz.sh run BUILD_DIR [HARNESS...]   fuzz each harness in turn for FUZZ_SECONDS (default 60)
#                                        or FUZZ_RUNS executions; after a crash the harness is
#                                        restarted on its grown corpus until its budget is spent.
#                                        Crashes go to BUILD_DIR/crashes/<harness>/, the corpus to
#                                        BUILD_DIR/corpus/<harness>/, logs to BUILD_DIR/logs/.
#                                        Prints a summary; exits 1 if anything crashed.
#   fuzz.sh smoke BUILD_DIR HARNESS      the seed corpus, then a short seeded run (ctest)
#   fuzz.sh replay BUILD_DIR HARNESS...  each file of fuzz/regressions/<harness>/ once; exits 1
#                                        on a crash (ctest)
#   fuzz.sh pending BUILD_DIR [HARNESS...]  each file of fuzz/pending/<harness>/ (crashes found
#                                        and not fixed yet): which still crash, which now pass
#   fuzz.sh triage BUILD_DIR [HARNESS...]   replays BUILD_DIR/crashes/<harness>/* and groups them
#                                        by signature, saying which match a pending crash
set -uo pipefail

FUZZ_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_ROOT="$(dirname "$FUZZ_SRC")"
ALL_HARNESSES=(experiment model prices routing_json routing_text replay kernel_measurements
  connection_matrix chakra chakra_gzip spec fabric units demand comm_groups sweep journal
  tl1_response tl1_command)

# Longest input each harness is given: enough for every seed, small enough to keep mutation
# fast. The text harnesses expand repeat markers in their input (fuzz/fuzz_support.h), so that a
# short input can stand for up to 4 MiB of deep or large text.
max_len() {
  case "$1" in
    spec | fabric) echo 256 ;;
    units) echo 64 ;;
    chakra | chakra_gzip) echo 2048 ;;
    # experiment model prices routing_json routing_text replay connection_matrix demand
    # comm_groups sweep journal tl1_response tl1_command, and any other
    *) echo 4096 ;;
  esac
}

# Executions of the smoke run (about two seconds each on one core of the CI machine). A count,
# not a time, so that with its fixed seed the smoke runs the same inputs on every machine.
smoke_runs() {
  case "$1" in
    experiment | chakra | chakra_gzip) echo 1000 ;;
    model | prices | spec | sweep | journal) echo 2000 ;;
    routing_text | fabric | demand | comm_groups | tl1_response | tl1_command) echo 8000 ;;
    routing_json | replay | connection_matrix | units) echo 15000 ;;
    *) echo 2000 ;;
  esac
}

# Options every run shares: the dictionary, the input size, and what counts as a failure beyond
# crashes and sanitizer reports: 10 s for one input; 3 GiB of RSS or 1 GiB in one allocation.
# The RSS bound is ASan's: its redzones and quarantine take two to three times the memory of the
# release build, and the largest YAML the library reads (1 MiB, which the repeat markers reach)
# takes up to 530 MB to parse in release and 1.2 GB here; a missing size guard allocates
# without bound.
common_flags() {
  local h="$1"
  local flags=(-max_len="$(max_len "$h")" -timeout=10 -rss_limit_mb=3072 -malloc_limit_mb=1024
    -print_final_stats=1)
  [ -f "$FUZZ_SRC/dict/$h.dict" ] && flags+=(-dict="$FUZZ_SRC/dict/$h.dict")
  printf '%s\n' "${flags[@]}"
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

harness_bin() {
  local bin="$BUILD_DIR/fuzz/fuzz_$1"
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: $bin not found; build with -DMFABRIC_BUILD_FUZZ=ON (make fuzz)" >&2
    exit 2
  fi
  echo "$bin"
}

# Input files of a directory (none if it does not exist), one per line.
inputs_in() {
  [ -d "$1" ] && find "$1" -type f ! -name 'README*' ! -name '.*' | sort
}

# --- crash signatures -----------------------------------------------------------------------------
# What kind of failure a harness log shows and the first three frames of mfabric code on its stack
# (function and file, without line numbers), so that two inputs that hit one bug compare equal.
signature() {
  local log="$1" kind frames
  kind="$(grep -m1 -oE "AddressSanitizer: [a-z-]+|runtime error: [a-z -]+|terminate called after throwing an instance of '[^']+'|property failed|out-of-memory \((malloc|used)|ALARM: working on the last Unit|LeakSanitizer: detected memory leaks|deadly signal" "$log")"
  frames="$(grep -E "^ +#[0-9]+ 0x[0-9a-f]+ in .* $PROJECT_ROOT/(src|fuzz)/[^ ]+:[0-9]+" "$log" |
    grep -vE '/fuzz/fuzz_support\.(h|cpp):' |
    sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in //; s| /[^ ]*/([^/ ]+):[0-9]+(:[0-9]+)?$| (\1)|' |
    head -n 3 | paste -sd ';' -)"
  echo "${kind:-unknown failure}: ${frames:-no mfabric frame}"
}

# Runs one input; on failure prints its signature and returns 1.
input_signature() {
  local bin="$1" h="$2" input="$3" log rc
  log="$(mktemp)"
  local flags
  mapfile -t flags < <(common_flags "$h")
  "$bin" "${flags[@]}" "$input" >"$log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && signature "$log"
  rm -f "$log"
  return $rc
}

# "SIGNATURE<TAB>FILE" for each pending input of the harness that still fails.
pending_signatures() {
  local h="$1" bin f sig
  bin="$(harness_bin "$h")"
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    if sig="$(input_signature "$bin" "$h" "$f")"; then :; else printf '%s\t%s\n' "$sig" "$f"; fi
  done < <(inputs_in "$FUZZ_SRC/pending/$h")
}

# The pending input whose signature is $2 (from pending_signatures output $1), if any.
known_as() { awk -F '\t' -v s="$2" '$1 == s { print $2; exit }' <<<"$1"; }

triage() {
  local h="$1" bin known f sig
  bin="$(harness_bin "$h")"
  known="$(pending_signatures "$h")"
  declare -A first count
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    if sig="$(input_signature "$bin" "$h" "$f")"; then sig="passes now"; fi
    count["$sig"]=$((${count["$sig"]:-0} + 1))
    [ -z "${first["$sig"]:-}" ] && first["$sig"]="$f"
  done < <(find "$BUILD_DIR/crashes/$h" -type f \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null | sort)
  if [ ${#count[@]} -eq 0 ]; then
    echo "$h: no reproducers in $BUILD_DIR/crashes/$h/"
    return 0
  fi
  for sig in "${!count[@]}"; do
    local as
    as="$(known_as "$known" "$sig")"
    echo "$h: ${count["$sig"]} input(s), e.g. ${first["$sig"]}"
    echo "    $sig"
    if [ "$sig" = "passes now" ]; then
      echo "    fixed"
    elif [ -n "$as" ]; then
      echo "    known: ${as#"$FUZZ_SRC"/}"
    else
      echo "    NEW"
    fi
  done
}

# --- smoke: the seed corpus, then a short fuzzing run with a fixed seed ---------------------------
smoke() {
  local h="$1" bin work
  bin="$(harness_bin "$h")"
  work="$BUILD_DIR/fuzz-smoke/$h"
  rm -rf "$work"
  mkdir -p "$work/corpus"
  local flags
  mapfile -t flags < <(common_flags "$h")
  # Repeat markers expand to at most 64 KiB here (fuzz_support.h: max_expanded_bytes), which keeps
  # the smoke as fast as before they existed; the regressions replay at the full 4 MiB.
  MFABRIC_FUZZ_MAX_EXPANDED="${FUZZ_SMOKE_MAX_EXPANDED:-65536}" \
    "$bin" "${flags[@]}" -seed=1 -max_total_time="${FUZZ_SMOKE_SECONDS:-30}" \
    -runs="${FUZZ_SMOKE_RUNS:-$(smoke_runs "$h")}" -artifact_prefix="$work/" \
    "$work/corpus" "$FUZZ_SRC/corpus/$h" >"$work/log" 2>&1
  local rc=$?
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::average_exec_per_sec)' \
    "$work/log"
  if [ $rc -ne 0 ]; then
    # A crash already recorded in fuzz/pending/ (found before, fix under way) is reported, not
    # failed: the smoke is there to catch new ones.
    local sig as
    sig="$(signature "$work/log")"
    as="$(known_as "$(pending_signatures "$h")" "$sig")"
    if [ -n "$as" ]; then
      echo "fuzz smoke $h: hit a known crash (${as#"$FUZZ_SRC"/}): $sig"
      echo "fuzz smoke $h: ok"
      return 0
    fi
    echo "fuzz smoke $h: FAILED (exit $rc): $sig"
    echo "log: $work/log; reproducer(s):"
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null
    tail -n 60 "$work/log"
    return 1
  fi
  echo "fuzz smoke $h: ok"
}

# --- replay: every regression input once ----------------------------------------------------------
replay_dir() {
  local h="$1" dir="$2" must_pass="$3" bin failed=0 passed=0 f
  bin="$(harness_bin "$h")"
  local flags
  mapfile -t flags < <(common_flags "$h")
  local files
  mapfile -t files < <(inputs_in "$dir")
  if [ ${#files[@]} -eq 0 ]; then
    echo "$h: no inputs in ${dir#"$FUZZ_SRC"/}"
    return 0
  fi
  for f in "${files[@]}"; do
    local log
    log="$(mktemp)"
    if "$bin" "${flags[@]}" "$f" >"$log" 2>&1; then
      passed=$((passed + 1))
      [ "$must_pass" = no ] && echo "$h: now passes (move it to fuzz/regressions/$h/): ${f#"$FUZZ_SRC"/}"
    else
      failed=$((failed + 1))
      if [ "$must_pass" = yes ]; then
        echo "$h: CRASH on ${f#"$FUZZ_SRC"/}:"
        grep -E 'ERROR|SUMMARY|runtime error|terminate called|what\(\)|property failed|#[0-9]+ 0x' "$log" | head -n 30
      else
        echo "$h: still crashes: ${f#"$FUZZ_SRC"/}: $(grep -m1 -E 'ERROR:|runtime error|what\(\)|property failed' "$log" | cut -c1-160)"
      fi
    fi
    rm -f "$log"
  done
  echo "$h: ${dir#"$FUZZ_SRC"/}: $passed passed, $failed crashed"
  [ "$must_pass" = no ] || [ $failed -eq 0 ]
}

# --- run: a fuzzing campaign with a summary -------------------------------------------------------
# Fields of libFuzzer's status lines ("#123 NEW cov: 45 ft: 67 corp: 8/90b ...").
status_field() { grep -oE "$2: [0-9]+" <<<"$1" | grep -oE '[0-9]+$'; }

campaign() {
  local h="$1" bin
  bin="$(harness_bin "$h")"
  local corpus="$BUILD_DIR/corpus/$h" crashes="$BUILD_DIR/crashes/$h" logs="$BUILD_DIR/logs"
  mkdir -p "$corpus" "$crashes" "$logs"
  local flags
  mapfile -t flags < <(common_flags "$h")
  local seconds="${FUZZ_SECONDS:-}" runs="${FUZZ_RUNS:-}"
  [ -z "$seconds" ] && [ -z "$runs" ] && seconds=60
  local start now execs=0 restarts=0 inited="" last="" rc=0
  start=$(date +%s)
  touch "$logs/$h.start"
  : >"$logs/$h.log"
  while :; do
    local limit=() log="$logs/$h.$restarts.log"
    if [ -n "$seconds" ]; then
      now=$(date +%s)
      local left=$((seconds - (now - start)))
      [ $left -lt 1 ] && break
      limit+=(-max_total_time="$left")
    fi
    if [ -n "$runs" ]; then
      local left_runs=$((runs - execs))
      [ $left_runs -lt 1 ] && break
      limit+=(-runs="$left_runs")
    fi
    "$bin" "${flags[@]}" "${limit[@]}" -artifact_prefix="$crashes/" "$corpus" "$FUZZ_SRC/corpus/$h" \
      >"$log" 2>&1
    rc=$?
    cat "$log" >>"$logs/$h.log"
    local n
    n=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n1)
    execs=$((execs + ${n:-0}))
    [ -z "$inited" ] && inited="$(grep -m1 -E '^#[0-9]+[[:space:]]+INITED' "$log")"
    local l
    l="$(grep -E '^#[0-9]+[[:space:]].*cov: ' "$log" | tail -n1)"
    [ -n "$l" ] && last="$l"
    rm -f "$log"
    [ $rc -eq 0 ] && break
    restarts=$((restarts + 1))
    if [ $restarts -ge "${FUZZ_MAX_RESTARTS:-20}" ]; then
      echo "fuzz.sh: $h crashed $restarts times; stopping it" >&2
      break
    fi
  done
  local elapsed=$(($(date +%s) - start))
  [ $elapsed -lt 1 ] && elapsed=1
  local found
  found=$(find "$crashes" -type f -newer "$logs/$h.start" \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  printf '%-13s %10d %8d %6s %6s %7s %6s %6s %8d %7d\n' "$h" "$execs" $((execs / elapsed)) \
    "$(status_field "$inited" cov)" "$(status_field "$last" cov)" "$(status_field "$last" ft)" \
    "$(status_field "$last" corp)" "$(find "$corpus" -type f | wc -l)" "$restarts" "$found" \
    >>"$SUMMARY"
}

run() {
  SUMMARY="$(mktemp)"
  printf '%-13s %10s %8s %6s %6s %7s %6s %6s %8s %7s\n' harness execs exec/s cov0 cov ft corp \
    files crashes artifacts >"$SUMMARY"
  local h
  for h in "$@"; do
    echo "fuzz.sh: fuzzing $h (${FUZZ_SECONDS:+${FUZZ_SECONDS}s}${FUZZ_RUNS:+ ${FUZZ_RUNS} runs})" >&2
    campaign "$h"
  done
  echo
  echo "cov0 = coverage after the seed corpus, cov/ft = at the end; corp = units in the corpus;"
  echo "files = BUILD_DIR/corpus/<harness>/ (new inputs); crashes = restarts after a crash;"
  echo "artifacts = new reproducers in $BUILD_DIR/crashes/<harness>/ (fuzz.sh triage groups them)"
  column -t "$SUMMARY" 2>/dev/null || cat "$SUMMARY"
  local total
  total=$(awk 'NR > 1 { s += $10 } END { print s + 0 }' "$SUMMARY")
  rm -f "$SUMMARY"
  echo
  for h in "$@"; do replay_dir "$h" "$FUZZ_SRC/pending/$h" no | grep -v ': no inputs in'; done
  [ "$total" -eq 0 ]
}

mode="${1:-}"
BUILD_DIR="${2:-}"
if [ -z "$mode" ] || [ -z "$BUILD_DIR" ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
shift 2
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${ALL_HARNESSES[@]}")

case "$mode" in
  run) run "${harnesses[@]}" ;;
  smoke)
    status=0
    for h in "${harnesses[@]}"; do smoke "$h" || status=1; done
    exit $status
    ;;
  replay)
    status=0
    for h in "${harnesses[@]}"; do replay_dir "$h" "$FUZZ_SRC/regressions/$h" yes || status=1; done
    exit $status
    ;;
  pending)
    for h in "${harnesses[@]}"; do replay_dir "$h" "$FUZZ_SRC/pending/$h" no; done
    ;;
  triage)
    for h in "${harnesses[@]}"; do triage "$h"; done
    ;;
  *)
    echo "fuzz.sh: unknown mode '$mode' (run, smoke, replay, pending, triage)" >&2
    exit 2
    ;;
esac
