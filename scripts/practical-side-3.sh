#!/usr/bin/env bash
# The side-3 practical-balance figures of docs/balance/practical-3, regenerated from today's
# binary: each network of eval/tests/fixtures/lifeline-3 through `eval balance practical` at 64
# visits, the solver's class-by-class results read from docs/solve/lifeline-3 (df-pn, with
# certificates). Each folder gets practical.json (with its command), .md and .svg.
# Usage: scripts/practical-side-3.sh [OUT]   (after `cargo build --release -p eval`; ~8 minutes
# on 2 cores without the 1024-visit rungs, about an hour with them)
set -euo pipefail
cd "$(dirname "$0")/.."
eval_bin="${EVAL:-target/release/eval}"
out="${1:-docs/balance/practical-3}"
fixtures=eval/tests/fixtures/lifeline-3
study() { # NAME CONFIG NETWORK[@VISITS, default 64] [EXTRA...]
  local name="$1" config="$2" network="$3"
  shift 3
  [[ "$network" == *@* ]] || network="$network@64"
  "$eval_bin" balance practical --config "$fixtures/$config" --player "$fixtures/$network" \
    --exact-from docs/solve/lifeline-3 --out "$out/$name" "$@" | head -n 3
}
study komi komi.toml komi-17200 --komi 0..=8
study komi-old-fixture komi.toml komi --komi 0..=8
# Convergence of the komi figures over the players of one recipe: the same config, twice and four
# times the budget (the last where its network is there), another seed.
x4=()
[ -d "$fixtures/komi-x4" ] && x4=(--player "$fixtures/komi-x4@64")
study komi-convergence komi.toml komi-17200 --player "$fixtures/komi-budget2@64" \
  --player "$fixtures/komi-seed2@64" "${x4[@]}" --komi 0..=8
study weak weak.toml weak
study strong strong.toml strong
for s in 1 2; do
  [ -d "$fixtures/strong-seed$s" ] && study "strong-seed$s" strong.toml "strong-seed$s"
  # Four times the budget, at 64, 256 and 1024 visits (the swap map's κ against the solver;
  # the 1024-visit rung takes about 25 minutes of the 2 cores on its own).
  if [ -d "$fixtures/strong-seed$s-x4" ]; then
    study "strong-seed$s-x4" strong.toml "strong-seed$s-x4"
    study "strong-seed$s-x4-256" strong.toml "strong-seed$s-x4@256"
    study "strong-seed$s-x4-1024" strong.toml "strong-seed$s-x4@1024"
  fi
  # Twice the budget with half the self-play games opened at random (random_opening_share).
  if [ -d "$fixtures/strong-open-seed$s" ]; then
    study "strong-open-seed$s" strong.toml "strong-open-seed$s"
    study "strong-open-seed$s-256" strong.toml "strong-open-seed$s@256"
    study "strong-open-seed$s-1024" strong.toml "strong-open-seed$s@1024"
  fi
  # The same recipe doubled (480 rounds): the players of the swap map's κ test, at 256 visits.
  if [ -d "$fixtures/strong-open-seed$s-x2" ]; then
    study "strong-open-seed$s-x2" strong.toml "strong-open-seed$s-x2"
    study "strong-open-seed$s-x2-256" strong.toml "strong-open-seed$s-x2@256"
  fi
done
echo "written: $out"
