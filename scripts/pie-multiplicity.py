#!/usr/bin/env python3
"""How often a pie study calls a pie "effective" that is not: the existential verdict, simulated.

    scripts/pie-multiplicity.py [STUDIES]

A pie is effective when *some* first-turn class's win rate is near even (docs/studies.md). Read
from per-class 95% intervals, that claim is made over every class measured at once: with m
classes each just outside the band, one of them lands inside by chance far more often than one
time in twenty. This simulates pie studies whose truth is known (m classes, every class's
distinct games binomial, the numbers of games the studies reach: 64 and 256) and prints, for m =
6, 9, 61 and 164 (the side-4 and side-5 weak and strong pies), the share of STUDIES simulated
studies (20,000 by default) that call the pie effective:
- *false*: every class's true win rate on the band's edge (0.35 or 0.65, half each), so no class
  is near even and every "effective" is wrong (the worst case for the claim);
- *power*: one class at 0.5, the others at 0.2 or 0.8;
once from per-class Wilson 95% intervals (the rule until 2026-11-29) and once from Wilson
intervals at the Bonferroni level 1 - 0.05/m (docs/studies.md, "A pie's verdict over all its
classes"). The early stop of the study's sequential test is left out: a class on the band's edge
is not stopped early by it, so the games it reaches are those simulated. Needs numpy; seconds.
"""
import sys
from statistics import NormalDist

import numpy as np

BAND = (0.35, 0.65)


def wilson(wins, n, z):
    p = wins / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return centre - half, centre + half


def effective_share(truth, n, z, studies, rng):
    wins = rng.binomial(n, truth, size=(studies, len(truth)))
    lo, hi = wilson(wins, n, z)
    inside = (lo >= BAND[0]) & (hi <= BAND[1])
    return inside.any(axis=1).mean()


def main():
    studies = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rng = np.random.default_rng(1)
    z95 = NormalDist().inv_cdf(0.975)
    print(f"{studies} simulated studies a line; share called effective")
    print("classes  games  case   per-class 95%  Bonferroni 1-0.05/m")
    for m in (6, 9, 61, 164):
        z_family = NormalDist().inv_cdf(1 - 0.025 / m)
        edge = np.where(np.arange(m) % 2 == 0, BAND[0], BAND[1])
        one_even = np.r_[0.5, np.where(np.arange(m - 1) % 2 == 0, 0.2, 0.8)]
        for n in (64, 256):
            for case, truth in (("false", edge), ("power", one_even)):
                each = effective_share(truth, n, z95, studies, rng)
                family = effective_share(truth, n, z_family, studies, rng)
                print(f"{m:7}  {n:5}  {case:5}  {each:13.3f}  {family:19.3f}")


if __name__ == "__main__":
    main()
