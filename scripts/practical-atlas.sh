#!/usr/bin/env bash
# Every practical-balance figure of docs/balance, regenerated from today's binary: side 3 by
# scripts/practical-side-3.sh, then the committed reference players of sides 4, 5 and 7 (players/)
# through `eval balance practical`, and R(4) and its relatives through the side-4 endgame truth
# set. Each folder gets its JSON (with the command that made it), Markdown and SVG; the
# definitions are docs/studies.md's. A study stopped part-way keeps its finished pieces in
# OUT/.resume, and running this script again goes on from them.
#
# Usage: scripts/practical-atlas.sh [SIDE...]   (after `cargo build --release -p eval`; sides
# 3, 4 and 5 by default; sides 6 and 7, R(6)'s and R(7)'s komi studies, only when named).
#        scripts/practical-atlas.sh rejudge     (every committed study judged again from its own
# games under today's definitions, `eval balance rejudge`: seconds, nothing replayed; what to
# run after a definition of docs/studies.md changes). On 2 cores, from each
# study's own time (docs/balance/README.md): side 3 about 15 minutes without its 1024-visit
# rungs, side 4 about 5 hours (its strong pie's map at 256 visits and the strong ladder's study
# about an hour each), side 5 about 4 hours before its weak pie's convergence study; a study
# whose players are not all committed yet is skipped with a line saying which.
set -euo pipefail
cd "$(dirname "$0")/.."
eval_bin="${EVAL:-target/release/eval}"
sides=("$@")
[ ${#sides[@]} -gt 0 ] || sides=(3 4 5)

# A study of the players named, each at 64 visits: SIDE NAME CONFIG PLAYER... [-- EXTRA...]
study() {
  local side="$1" name="$2" config="$3"
  shift 3
  local args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    [ -d "players/$1" ] || { echo "skipped $name: players/$1 is not there" >&2; return 0; }
    args+=(--player "players/$1@64")
    shift
  done
  [ $# -gt 0 ] && shift
  "$eval_bin" balance practical --config "configs/$config" "${args[@]}" "$@" \
    --out "docs/balance/practical-$side/$name" | head -n 3
}

# R(4) and its relatives against the proved side-4 endgames: SCORE-FOLDER PLAYER.
endgame_score() {
  local set=docs/balance/lifeline-4-endgames
  "$eval_bin" endgames score --set "$set" --config configs/lifeline-4-komi.toml \
    --player "$2" --out "$set/$1" | head -n 3
}

for side in "${sides[@]}"; do
  case "$side" in
    rejudge)
      for dir in docs/balance/practical-*/*/; do
        [ -f "$dir/practical.json" ] && "$eval_bin" balance rejudge "$dir" | head -n 3
      done
      ;;
    3) scripts/practical-side-3.sh ;;
    4)
      study 4 komi lifeline-4-komi.toml lifeline-4-komi -- --komi 0..=12
      study 4 komi-convergence lifeline-4-komi.toml lifeline-4-komi lifeline-4-komi-x2 \
        lifeline-4-komi-x4 lifeline-4-komi-seed2 -- --komi 0..=12
      study 4 weak lifeline-4-weak.toml lifeline-4-weak
      study 4 weak-convergence lifeline-4-weak.toml lifeline-4-weak lifeline-4-weak-x2 \
        lifeline-4-weak-x4 lifeline-4-weak-seed2
      # The same ladder with enough games for its figure's bound (intervals under 0.1).
      study 4 weak-convergence-400 lifeline-4-weak.toml lifeline-4-weak lifeline-4-weak-x2 \
        lifeline-4-weak-x4 lifeline-4-weak-seed2 -- --games 400 --max-games 1600
      study 4 strong lifeline-4-strong.toml lifeline-4-strong
      # The same map at 256 visits: the rung diagnostic (scripts/map-kappa.py compares the two).
      "$eval_bin" balance practical --config configs/lifeline-4-strong.toml \
        --player players/lifeline-4-strong@256 --out docs/balance/practical-4/strong-256 | head -n 3
      study 4 strong-convergence lifeline-4-strong.toml lifeline-4-strong lifeline-4-strong-x2 \
        lifeline-4-strong-x4 lifeline-4-strong-seed2
      endgame_score score players/lifeline-4-komi@64
      endgame_score score-x2 players/lifeline-4-komi-x2@64
      endgame_score score-x4 players/lifeline-4-komi-x4@64
      endgame_score score-seed2 players/lifeline-4-komi-seed2@64
      endgame_score score-mcts1000 mcts:1000
      ;;
    5)
      study 5 komi lifeline-5-komi.toml lifeline-5-komi -- --komi 0..=12
      study 5 komi-convergence lifeline-5-komi.toml lifeline-5-komi lifeline-5-komi-seed2 \
        lifeline-5-komi-x2 -- --komi 0..=12
      study 5 weak lifeline-5-weak.toml lifeline-5-weak
      study 5 weak-x2 lifeline-5-weak.toml lifeline-5-weak-x2
      study 5 weak-seed2 lifeline-5-weak.toml lifeline-5-weak-seed2
      study 5 weak-convergence lifeline-5-weak.toml lifeline-5-weak lifeline-5-weak-x2 \
        lifeline-5-weak-x4 lifeline-5-weak-seed2 -- --games 400 --max-games 1600
      # b2 alone, the class the ladder above chose, played afresh (another seed) to 1,600
      # distinct games a player (docs/balance/README.md, "Side 5's weak pie on b2 alone").
      study 5 weak-b2-1600 lifeline-5-weak.toml lifeline-5-weak lifeline-5-weak-x2 \
        lifeline-5-weak-x4 lifeline-5-weak-seed2 -- --classes b2 --games 1600 --max-games 6400 \
        --seed 2
      # The second seed at x2's budget and x8, b2 alone the same way ("...the second seed at
      # twice the budget", "...at eight times the budget"), then the convergence over x2, x4,
      # x8 and the second seed at x2's budget, chosen by name from the three studies.
      study 5 weak-b2-1600-seed2-x2 lifeline-5-weak.toml lifeline-5-weak-seed2-x2 -- --classes b2 \
        --games 1600 --max-games 6400 --seed 2
      study 5 weak-b2-1600-x8 lifeline-5-weak.toml lifeline-5-weak-x8 -- --classes b2 \
        --games 1600 --max-games 6400 --seed 2
      "$eval_bin" balance combine --player lifeline-5-weak-x2@64 --player lifeline-5-weak-x4@64 \
        --player lifeline-5-weak-x8@64 --player lifeline-5-weak-seed2-x2@64 \
        --out docs/balance/practical-5/weak-b2-convergence docs/balance/practical-5/weak-b2-1600 \
        docs/balance/practical-5/weak-b2-1600-seed2-x2 docs/balance/practical-5/weak-b2-1600-x8 \
        | head -n 3
      # The second seed at x4's budget, b2 alone the same way ("...the second seed at four
      # times the budget"), beside the four above: which way the seeds' gap goes.
      study 5 weak-b2-1600-seed2-x4 lifeline-5-weak.toml lifeline-5-weak-seed2-x4 -- --classes b2 \
        --games 1600 --max-games 6400 --seed 2
      "$eval_bin" balance combine --player lifeline-5-weak-x2@64 --player lifeline-5-weak-x4@64 \
        --player lifeline-5-weak-x8@64 --player lifeline-5-weak-seed2-x2@64 \
        --player lifeline-5-weak-seed2-x4@64 --out docs/balance/practical-5/weak-b2-seeds \
        docs/balance/practical-5/weak-b2-1600 docs/balance/practical-5/weak-b2-1600-seed2-x2 \
        docs/balance/practical-5/weak-b2-1600-x8 docs/balance/practical-5/weak-b2-1600-seed2-x4 \
        | head -n 3
      # The third seed at x2's budget, b2 alone the same way ("...a third seed at twice the
      # budget"), joined with the other two seeds at 800 rounds: whether the seeds agree there.
      study 5 weak-b2-1600-seed3-x2 lifeline-5-weak.toml lifeline-5-weak-seed3-x2 -- --classes b2 \
        --games 1600 --max-games 6400 --seed 2
      "$eval_bin" balance combine --player lifeline-5-weak-x2@64 --player lifeline-5-weak-seed2-x2@64 \
        --player lifeline-5-weak-seed3-x2@64 --out docs/balance/practical-5/weak-b2-seeds-x2 \
        docs/balance/practical-5/weak-b2-1600 docs/balance/practical-5/weak-b2-1600-seed2-x2 \
        docs/balance/practical-5/weak-b2-1600-seed3-x2 | head -n 3
      study 5 strong lifeline-5-strong.toml lifeline-5-strong
      ;;
    6)
      study 6 komi lifeline-6-komi.toml lifeline-6-komi -- --komi 0,3,6,9,12
      # Each player of R(6)'s ladder studied alone, then joined: its convergence over them.
      study 6 komi-x2 lifeline-6-komi.toml lifeline-6-komi-x2 -- --komi 0,3,6,9,12
      study 6 komi-seed2 lifeline-6-komi.toml lifeline-6-komi-seed2 -- --komi 0,3,6,9,12
      study 6 komi-x4 lifeline-6-komi.toml lifeline-6-komi-x4 -- --komi 0,3,6,9,12
      "$eval_bin" balance combine --out docs/balance/practical-6/komi-convergence \
        docs/balance/practical-6/komi docs/balance/practical-6/komi-x2 \
        docs/balance/practical-6/komi-x4 docs/balance/practical-6/komi-seed2 | head -n 3
      ;;
    7)
      study 7 komi lifeline-7-komi.toml lifeline-7-komi -- --komi 0,3,6,9,12
      # R(7)'s two doublings and its second seed (the seed's own config, R(7)'s but for
      # train.seed, which a study does not read), then the four joined: its convergence.
      study 7 komi-x2 lifeline-7-komi.toml lifeline-7-komi-x2 -- --komi 0,3,6,9,12
      study 7 komi-x4 lifeline-7-komi.toml lifeline-7-komi-x4 -- --komi 0,3,6,9,12
      study 7 komi-seed2 lifeline-7-komi-seed2.toml lifeline-7-komi-seed2 -- --komi 0,3,6,9,12
      "$eval_bin" balance combine --out docs/balance/practical-7/komi-convergence \
        docs/balance/practical-7/komi docs/balance/practical-7/komi-x2 \
        docs/balance/practical-7/komi-x4 docs/balance/practical-7/komi-seed2 | head -n 3
      # The second seed at x2's budget, joined with R(7)-x2: the two seeds at 800 rounds.
      study 7 komi-seed2-x2 lifeline-7-komi-seed2.toml lifeline-7-komi-seed2-x2 -- --komi 0,3,6,9,12
      "$eval_bin" balance combine --out docs/balance/practical-7/komi-seeds-x2 \
        docs/balance/practical-7/komi-x2 docs/balance/practical-7/komi-seed2-x2 | head -n 3
      ;;
    *) echo "no practical figures for side $side (sides 3 to 7 have them; or: rejudge)" >&2; exit 2 ;;
  esac
done
