#!/usr/bin/env bash
# What a GPU does for Lifeline Zero, from the built binaries alone (no cargo, no network): the
# script a machine with a GPU runs, and, with --device cpu --tiny, what CI runs so that it
# cannot rot.
#
#   scripts/gpu-check.sh --bin DIR [--device cuda|cpu] [--tiny] [--out DIR]
#
# DIR holds the `selfplay` and `train` binaries (built with `--features train/cuda` for a GPU:
# README, "The GPU"). It prints, each line also in OUT/gpu-check.log:
#   1. agreement of the device with the CPU's folded network: the largest difference of a prior
#      and of a value over 1,000 positions, for the quick (4x32, side 5) and the full (10x128,
#      side 7) network (`selfplay agree`; it fails above 1e-3, 2e-2 for the full network);
#   2. training samples/s on the device for both networks at batch 128, 512 and 2048
#      (`train bench`), beside the same binary's CPU figure at batch 128;
#   3. inference positions/s at batch 64 to 4096 (`selfplay bench-net`) and self-play with
#      256 games in flight (`selfplay bench-search`: visits/s, the network batch formed);
#   4. a short learning run of the quick config on the device (`train loop`, 3 minutes) and its
#      final match against mcts:1000.
# About 6 minutes on one H100 by the sizes below (an estimate until it has run on one); --tiny
# shrinks every size so that the CPU mode takes a minute or two.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="" device="cuda" tiny=0 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --tiny) tiny=1; shift ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 --bin DIR [--device cuda|cpu] [--tiny] [--out DIR]" >&2; exit 2 ;;
  esac
done
for b in selfplay train; do
  if [ -z "$bin" ] || [ ! -x "$bin/$b" ]; then
    echo "gpu-check: no executable $b in --bin '${bin}'" >&2
    exit 2
  fi
done
out="${out:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")}"
mkdir -p "$out"
log="$out/gpu-check.log"
: >"$log"

if [ "$tiny" -eq 1 ]; then
  positions=40 net_batches="8,64" games=8 steps=1 minutes=0.3 final=2
  train_batches="16 32"
else
  positions=1000 net_batches="64,256,1024,4096" games=256 steps=5
  minutes=3 final=40 train_batches="128 512 2048"
fi

say() { echo "$*" | tee -a "$log"; }
run() { "$@" 2>&1 | tee -a "$log"; }

# Configs for this check, beside its log: the quick and the full config, the learning run's on
# the device with its final match shortened in tiny mode, self-play with many games in flight.
quick="$out/quick.toml" full="$out/full.toml" learn="$out/learn.toml" many="$out/many.toml"
cp configs/lifeline-5-quick.toml "$quick"
cp configs/lifeline-7-full.toml "$full"
sed -e "s/^final_games = .*/final_games = $final/" \
    -e "s/^\[loop\]/[loop]\ndevice = \"$device\"/" configs/lifeline-5-quick.toml >"$learn"
sed -e "s/^games_in_flight = 32$/games_in_flight = $games/" configs/lifeline-5-quick.toml >"$many"

say "# gpu-check: device $device, binaries $bin, $(date -u +%Y-%m-%dT%H:%MZ)"
say "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
if command -v nvidia-smi >/dev/null; then
  say "# gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
fi

say "## 1. agreement with the CPU"
run "$bin/selfplay" agree --config "$quick" --device "$device" --positions "$positions"
# The full network sums 10 blocks of 128 channels: more rounding than the quick one's 4 of 32.
run "$bin/selfplay" agree --config "$full" --device "$device" --positions "$positions" --max-diff 2e-2

say "## 2. training samples/s (device, then this binary on the CPU at the first batch)"
for cfg in "$quick" "$full"; do
  for b in $train_batches; do
    run "$bin/train" bench --config "$cfg" --device "$device" --batch "$b" --steps "$steps"
  done
  if [ "$device" != cpu ]; then
    run "$bin/train" bench --config "$cfg" --device cpu --batch "${train_batches%% *}" --steps 2
  fi
done

say "## 3. inference and self-play"
run "$bin/selfplay" bench-net --config "$quick" --device "$device" --batches "$net_batches" --seconds 2
run "$bin/selfplay" bench-net --config "$full" --device "$device" --batches "$net_batches" --seconds 2
run "$bin/selfplay" bench-search --config "$many" --device "$device" --games "$games"

say "## 4. learning on the device: the quick config for $minutes minutes, then mcts:1000"
run "$bin/train" loop --config "$learn" --run "$out/learn" --minutes "$minutes" --quiet
say "# gpu-check: done ($log)"
