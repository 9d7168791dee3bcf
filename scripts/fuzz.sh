#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser that reads outside data (docs/fuzzing.md): builds the
# targets of fuzz/ with libFuzzer's coverage instrumentation, as `cargo fuzz build` does (no
# sanitizer, so a stable toolchain builds them), then runs each for a fixed time from its
# committed seeds (fuzz/seeds/TARGET) plus what earlier runs found (fuzz/corpus/TARGET).
#
#   scripts/fuzz.sh [--seconds N] [--build-only] [TARGET...]    (default: 30 s, every target)
#
# Prints one line per target: executions, corpus size, and whether it crashed; a crash, a hang
# (over 10 s on one input) or an input needing over 2 GiB fails the run, its input saved under
# fuzz/artifacts/TARGET/ (replay it: the target's binary with the file as its argument).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=30 build_only=0 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=$(ls fuzz/fuzz_targets | sed 's/\.rs$//')
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<< "$(echo $all)"
for t in "${targets[@]}"; do
  grep -qx "$t" <<< "$all" || { echo "fuzz.sh: no target $t (targets: $(echo $all))" >&2; exit 2; }
done
host=$(rustc -vV | sed -n 's/^host: //p')
# cargo-fuzz's flags without its sanitizer. `--target` keeps build scripts and proc macros,
# which run inside the compiler, uninstrumented.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
export CARGO_INCREMENTAL=0
cargo build --release --locked --manifest-path fuzz/Cargo.toml --target "$host" --bins
[ "$build_only" -eq 0 ] || exit 0
bin=fuzz/target/$host/release
failed=0
printf '%-12s %12s %10s %8s  %s\n' target executions per-second corpus result
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  log=$(mktemp)
  status=0
  "$bin/$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  corpus=$(ls "fuzz/corpus/$t" | wc -l)
  if [ "$status" -eq 0 ]; then
    result=ok
  else
    result="FAILED: $(grep -m1 -E 'panicked|ERROR: libFuzzer|SUMMARY' "$log" || echo "exit $status")"
    failed=1
    tail -40 "$log" >&2
  fi
  printf '%-12s %12s %10s %8s  %s\n' "$t" "${runs:-?}" "${rate:-?}" "$corpus" "$result"
  rm -f "$log"
done
exit "$failed"
