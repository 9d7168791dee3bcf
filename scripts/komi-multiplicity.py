#!/usr/bin/env python3
"""How often the komi pie is called "effective" where no komi is near even: "some komi", simulated.

    scripts/komi-multiplicity.py [STUDIES] [GAMES]

The komi pie is effective when some komi of 1..=12 has Black's best, B(k), with its 95% interval
inside [0.35, 0.65] (docs/studies.md). The claim is made over twelve komis at once, but the twelve
readings are one fitted curve, not twelve independent rates. This simulates komi studies whose
truth has no komi near even (16 classes, komi 0, 3, 6, 9, 12, GAMES games a cell, 80 by
default, fitted and
banded as scripts/komi-coverage.py does, which this imports) and prints the share of STUDIES
studies (200 by default) called effective by any komi of 1..=12, beside the share called so by
the komi nearest the band alone: if the readings behaved as twelve independent tests the first
would be several times the second. Cases: komi barely moves the games (slope -0.02, B(12)
0.651, just above the band, as in R(7)'s games), and a steep one (slope -1.5, B jumping from
above 0.65 to below 0.35 between komi 6 and 7). Needs numpy; under a minute on a core for 400
studies of 1,000 games a cell.
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np

spec = importlib.util.spec_from_file_location(
    "coverage", Path(__file__).with_name("komi-coverage.py"))
cov = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cov)

BAND = (0.35, 0.65)


def case(b12_best, slope):
    """Intercepts at the centre komi: the best class at komi 12 at b12_best, the others 0.05 lower."""
    at12 = np.r_[b12_best, np.full(15, b12_best - 0.05)]
    return cov.logit(at12) - slope * (12 - cov.CENTRE), slope


def main():
    studies = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    games_a_cell = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    rng = np.random.default_rng(11)
    komis = np.arange(1, 13, dtype=float)
    # The cliff: the best class crosses one half at 6.5; a logistic jumps past the band between
    # two komis only with a slope steeper than about -1.2, so -1.5: B(6) 0.68, B(7) 0.32.
    cliff = cov.logit(np.r_[0.5, np.full(15, 0.3)]) + 1.5 * (6.5 - cov.CENTRE)
    cases = {
        "komi barely moves the games (slope -0.02, B(12) 0.651)": case(0.651, -0.02),
        "a cliff (slope -1.5, B(6) 0.68, B(7) 0.32)": (cliff, -1.5),
    }
    print(f"{studies} simulated studies a case, {games_a_cell} games a cell, {cov.REFITS} refits each")
    for name, (a, slope) in cases.items():
        classes = len(a)
        cls = np.repeat(np.arange(classes), len(cov.KOMIS))
        komi = np.tile(np.array(cov.KOMIS, float), classes)
        games = np.full(len(cls), float(games_a_cell))
        truth = cov.rates(np.r_[a, slope], komis).max(axis=1)
        assert ((truth > BAND[1]) | (truth < BAND[0])).all(), truth
        nearest = int(np.argmin(np.minimum(abs(truth - BAND[1]), abs(truth - BAND[0]))))
        anywhere = alone = 0
        for _ in range(studies):
            p = 1 / (1 + np.exp(-(a[cls] + slope * (komi - cov.CENTRE))))
            wins = rng.binomial(games_a_cell, p).astype(float)
            theta = cov.fit(cls, komi, wins, games, classes)
            refits = np.stack([
                cov.rates(cov.fit(cls, komi, rng.binomial(games_a_cell, wins / games_a_cell).astype(float),
                                  games, classes), komis)
                for _ in range(cov.REFITS)])
            lo, hi = cov.band(cov.rates(theta, komis), refits)
            inside = (lo >= BAND[0]) & (hi <= BAND[1])
            anywhere += inside.any()
            alone += inside[nearest]
        print(f"{name}: true B(k) {np.round(truth, 3).tolist()}")
        print(f"  called effective by some komi of 1..12: {anywhere / studies:.3f}; "
              f"by komi {nearest + 1} alone: {alone / studies:.3f}", flush=True)


if __name__ == "__main__":
    main()
