#!/usr/bin/env python3
"""Cohen's kappa between two practical-balance swap maps of the same classes.

    scripts/map-kappa.py A/practical.json B/practical.json
    scripts/map-kappa.py LADDER/practical.json#0 LADDER/practical.json#2

Reads each study's first player's classes (`#I` after a file: its player I, from 0) (opening -> category: swap, keep, near-even or
undetermined) and prints the classes both maps hold, their agreement, Cohen's kappa over the
four categories (agreement beyond what the two maps' category rates give by chance), and the
classes decided both times (swap, keep or near even) whose categories differ; then the same of
the point estimates (the maker's side of one half, Pearson r, the median difference) and each
map's median interval width. A diagnostic of
agreement between two players or two visit rungs, not a measure of correctness: two maps that
make the same mistakes agree.
"""
import collections
import json
import statistics
import sys


def classes(spec):
    path, _, index = spec.partition("#")
    with open(path) as f:
        study = json.load(f)
    players = study["players"]
    i = int(index) if index else 0
    if not 0 <= i < len(players):
        sys.exit(f"{spec}: the study has {len(players)} player(s), numbered from 0")
    return {(c["opening"], c.get("komi")): c for c in players[i]["classes"]}


def kappa(pairs):
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    left = collections.Counter(a for a, _ in pairs)
    right = collections.Counter(b for _, b in pairs)
    chance = sum(left[k] * right[k] for k in left) / (n * n)
    return observed, chance, (observed - chance) / (1 - chance) if chance < 1 else None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    full_a, full_b = classes(sys.argv[1]), classes(sys.argv[2])
    a = {k: c["category"] for k, c in full_a.items()}
    b = {k: c["category"] for k, c in full_b.items()}
    shared = sorted(set(a) & set(b), key=str)
    if not shared:
        sys.exit("the two maps hold no class in common")
    pairs = [(a[k], b[k]) for k in shared]
    observed, chance, k = kappa(pairs)
    print(f"classes in both: {len(shared)} (only in the first {len(set(a) - set(b))}, only in the second {len(set(b) - set(a))})")
    print(f"agreement {observed:.3f}, by chance {chance:.3f}, Cohen's kappa {k if k is None else round(k, 3)}")
    print("categories (first -> second):")
    for (x, y), n in sorted(collections.Counter(pairs).items()):
        print(f"  {x:>12} -> {y:<12} {n}")
    flips = [k for k in shared if a[k] != b[k] and "undetermined" not in (a[k], b[k])]
    print(f"decided both times and different: {len(flips)}", ", ".join(o for o, _ in flips))
    rate = lambda c: c["win_rate"]["estimate"]
    above = [(rate(full_a[k]) > 0.5, rate(full_b[k]) > 0.5) for k in shared]
    observed, chance, k = kappa(above)
    alike = sum(x == y for x, y in above)
    print(f"the maker's side of one half: {alike} of {len(shared)} alike, Cohen's kappa {k if k is None else round(k, 3)}")
    wa, wb = [rate(full_a[k]) for k in shared], [rate(full_b[k]) for k in shared]
    if len(shared) > 1 and statistics.pstdev(wa) > 0 and statistics.pstdev(wb) > 0:
        print(f"Pearson r of the win rates {statistics.correlation(wa, wb):.3f}")
    print(f"median difference of the win rates {statistics.median(abs(x - y) for x, y in zip(wa, wb)):.3f}")
    width = lambda c: c["win_rate"]["hi"] - c["win_rate"]["lo"]
    print("median interval width {:.3f} and {:.3f}".format(
        statistics.median(width(full_a[k]) for k in shared),
        statistics.median(width(full_b[k]) for k in shared)))


if __name__ == "__main__":
    main()
