#!/usr/bin/env python3
"""A hexhex pie map read by rings: where on the board the near-even openings are.

    scripts/map-rings.py docs/balance/practical-5/strong/practical.json
    scripts/map-rings.py LADDER/practical.json#2

Reads a Lifeline practical-balance study of a pie (weak: one stone a class, strong: a pair),
its player I (`#I`, from 0), and prints, grouped by the ring of the opening's inner stone (0 the
centre, side - 1 the edge) and by the distance between a pair's stones: the classes, their mean
win rate for the maker (the swap declined), how many are near even, and how many have their
95% interval wholly above or below one half; then the Pearson and Spearman correlation of the
games' win rates with the search's value and with the raw value head, and the most lopsided
classes. Cells are named as the game names them (a column letter, a row number; a1 a corner),
so a cell's ring on a board of side n is max(|q|, |r|, |q - r|) with q = column - (n - 1) and
r = row - n. A description of one player's map, not a measure of its correctness.
"""
import collections
import json
import re
import statistics
import sys


def load(spec):
    path, _, index = spec.partition("#")
    try:
        with open(path) as f:
            study = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: {e}")
    players = study["players"]
    i = int(index) if index else 0
    if not 0 <= i < len(players):
        sys.exit(f"{spec}: the study has {len(players)} player(s), numbered from 0")
    player = players[i]
    side = re.match(r"lifeline-(\d+)-", player["game"])
    if not side:
        sys.exit(f"{spec}: game {player['game']!r} is not a Lifeline hexhex game")
    return int(side.group(1)), player["classes"]


def axial(cell, side):
    return ord(cell[0]) - ord("a") - (side - 1), int(cell[1:]) - side


def ring(cell, side):
    q, r = axial(cell, side)
    return max(abs(q), abs(r), abs(q - r))


def distance(a, b, side):
    (qa, ra), (qb, rb) = axial(a, side), axial(b, side)
    dq, dr = qa - qb, ra - rb
    return max(abs(dq), abs(dr), abs(dq - dr))


def row(label, group):
    rates = [c["win_rate"]["estimate"] for c in group]
    near = sum(c["category"] == "near-even" for c in group)
    above = sum(c["win_rate"]["lo"] > 0.5 for c in group)
    below = sum(c["win_rate"]["hi"] < 0.5 for c in group)
    print(f"{label}: {len(group)} classes, maker's mean {statistics.mean(rates):.3f}, "
          f"near even {near}, interval above 1/2 {above}, below {below}")


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0] * len(xs)
    for k, i in enumerate(order):
        r[i] = k
    return r


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    side, classes = load(sys.argv[1])
    by_ring = collections.defaultdict(list)
    by_distance = collections.defaultdict(list)
    for c in classes:
        stones = c["opening"].split("+")
        by_ring[min(ring(s, side) for s in stones)].append(c)
        if len(stones) == 2:
            by_distance[distance(*stones, side)].append(c)
    for k in sorted(by_ring):
        row(f"inner stone on ring {k}", by_ring[k])
    for k in sorted(by_distance):
        row(f"stones at distance {k}", by_distance[k])
    rates = [c["win_rate"]["estimate"] for c in classes]
    for name in ("search_value", "value_head"):
        values = [c[name] for c in classes]
        print(f"games against {name}: Pearson {statistics.correlation(rates, values):.2f}, "
              f"Spearman {statistics.correlation(ranks(rates), ranks(values)):.2f}, "
              f"{name} from {min(values):+.2f} to {max(values):+.2f}, mean {statistics.mean(values):+.3f}")
    print(f"games: maker's mean {statistics.mean(rates):.3f}")
    lopsided = sorted(classes, key=lambda c: c["win_rate"]["estimate"])
    for c in lopsided[:3] + lopsided[-3:]:
        w = c["win_rate"]
        print(f"{c['opening']}: {w['estimate']:.3f} [{w['lo']:.3f}, {w['hi']:.3f}] {c['category']}")


if __name__ == "__main__":
    main()
