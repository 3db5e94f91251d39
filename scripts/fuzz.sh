#!/usr/bin/env bash
# Fuzzes every decoder a peer or a damaged file reaches (tests/fuzz/) with
# libFuzzer + ASan + UBSan (clang, the fuzz preset in build-fuzz/), SECONDS
# per target (default 60), two targets at a time. Each corpus starts from
# the target's seeds and the inputs that once broke it, and grows in
# build-fuzz/corpus/. Prints each target's inputs executed and crashes (a
# crash, leak or sanitizer report stops that target and leaves its input in
# build-fuzz/artifacts/); exits non-zero if any target found one. With
# --report FILE it also writes the table there (bench/results/); with
# --only T1,T2 it runs those targets alone.
#   scripts/fuzz.sh [SECONDS] [--report FILE] [--only TARGET,...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
report=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --report) report="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    *) seconds="$1"; shift ;;
  esac
done
scripts/install-deps.sh fuzz
targets=(envelope stream_framing handshake range_copy replica_step
  metrics_request
  snapshot_records experiment_spec data_files)
if [ -n "$only" ]; then
  IFS=, read -r -a targets <<<"$only"
fi
cmake --preset fuzz >/dev/null
cmake --build build-fuzz --target "${targets[@]/%/_fuzz}"

out=build-fuzz/fuzz-logs
rm -rf "$out"
mkdir -p "$out" build-fuzz/artifacts
run_target() {
  local t="$1" corpus="build-fuzz/corpus/$1"
  mkdir -p "$corpus"
  LOCKSTEP_FUZZ_WRITE_SEEDS="$corpus" "build-fuzz/bin/${t}_fuzz" >/dev/null
  local dirs=("$corpus")
  [ -d "tests/fuzz/regressions/$t" ] && dirs+=("tests/fuzz/regressions/$t")
  # -rss_limit_mb: the readers' own limits keep far below it.
  "build-fuzz/bin/${t}_fuzz" -max_total_time="$seconds" -print_final_stats=1 \
    -rss_limit_mb=4096 -max_len=65536 -timeout=20 \
    -artifact_prefix="build-fuzz/artifacts/${t}-" "${dirs[@]}" \
    >"$out/$t.log" 2>&1 && echo 0 >"$out/$t.rc" || echo $? >"$out/$t.rc"
}
pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$(nproc)" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait

table="$(mktemp)"
{
  echo "# scripts/fuzz.sh ${seconds} s per target${only:+ (--only $only)}, libFuzzer + ASan + UBSan (clang $(clang++ -dumpversion)), $(nproc) CPUs, $(date -u +%F)"
  printf '%-18s %14s %12s %10s %8s\n' target inputs inputs/s corpus crashes
  total=0
  failed=0
  for t in "${targets[@]}"; do
    log="$out/$t.log"
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)"
    rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)"
    units="$(find "build-fuzz/corpus/$t" -type f | wc -l)"
    crashes=0
    if [ "$(cat "$out/$t.rc")" != 0 ] || ls build-fuzz/artifacts/"$t"-* >/dev/null 2>&1; then
      crashes=1
      failed=1
    fi
    total=$((total + runs))
    printf '%-18s %14s %12s %10s %8s\n' "$t" "$runs" "$rate" "$units" "$crashes"
  done
  printf '%-18s %14s\n' total "$total"
} >"$table"
cat "$table"
[ -n "$report" ] && cp "$table" "$report"
if [ "$failed" != 0 ]; then
  echo "a target failed: see $out/ and build-fuzz/artifacts/" >&2
  exit 1
fi
