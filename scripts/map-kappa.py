#!/usr/bin/env python3
"""Cohen's kappa between two practical-balance swap maps of the same classes.

    scripts/map-kappa.py A/practical.json B/practical.json

Reads each study's first player's classes (opening -> category: swap, keep, near-even or
undetermined) and prints the classes both maps hold, their agreement, Cohen's kappa over the
four categories (agreement beyond what the two maps' category rates give by chance), and the
classes decided both times (swap, keep or near even) whose categories differ. A diagnostic of
agreement between two players or two visit rungs, not a measure of correctness: two maps that
make the same mistakes agree.
"""
import collections
import json
import sys


def categories(path):
    with open(path) as f:
        study = json.load(f)
    classes = study["players"][0]["classes"]
    return {(c["opening"], c.get("komi")): c["category"] for c in classes}


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
    a, b = categories(sys.argv[1]), categories(sys.argv[2])
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


if __name__ == "__main__":
    main()
