#!/usr/bin/env python3
"""How often players that are the same would be called converged on a pie's win rate.

    scripts/convergence-power.py [STUDIES]

A pie's figure converges when its players' win rates of one class differ by less than 0.05 and
every interval is narrower than 0.1 (docs/studies.md, "Convergence"). This draws STUDIES
(200,000 by default) sets of 3 or 4 players whose true rate of the class is the same, 0.5, each
measured on N distinct games, and prints the share whose spread (largest minus smallest) is
under 0.05: the chance that the spread alone lets identical players converge. (Wilson
intervals at one half are under 0.1 wide from 385 distinct games.) Needs numpy; seconds.
"""
import sys

import numpy as np


def main():
    studies = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    rng = np.random.default_rng(1)
    print("distinct games a class | 3 players | 4 players")
    for n in (200, 400, 800, 1600):
        shares = []
        for players in (3, 4):
            rates = rng.binomial(n, 0.5, size=(studies, players)) / n
            spread = rates.max(axis=1) - rates.min(axis=1)
            shares.append((spread < 0.05).mean())
        print(f"{n} | {shares[0]:.3f} | {shares[1]:.3f}")


if __name__ == "__main__":
    main()
