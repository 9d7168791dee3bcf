#!/usr/bin/env python3
"""The winner's curse in a komi study's Black's best: its bootstrap against its estimate.

    scripts/komi-edge-bias.py STUDY/practical.json [KOMI]

Refits a practical komi study's pooled logistic from the games its JSON keeps (each class's
outcomes; the model of eval/src/study/practical/komi_model.rs: an intercept a class, one shared
slope, ridge 0.01, centred on the middle of the komis studied), reads Black's best B(KOMI) =
max over classes (KOMI 0 by default: the edge the komi pie needs), and prints the estimate, the
2.5 / 50 / 97.5 percentiles of 200 bootstrap refits (the percentile interval the study prints,
up to the random draws; the study also stretches it to hold the estimate), and the basic bootstrap interval (2 * estimate - the upper and lower
percentiles), which corrects a bootstrap distribution shifted away from its estimate. A maximum
over noisy classes is shifted upward (the best of several noisy rates is too high), so a median
above the estimate says by how much the percentile interval leans up. A diagnostic of the
interval's method, not a figure of the study: the study's verdicts use the percentile interval
of docs/studies.md. Needs numpy. The first player of the study only.
"""
import json
import sys

import numpy as np

RIDGE = 0.01
REFITS = 200


def fit(cells, classes, centre):
    """Newton's method on the ridge-penalised log-likelihood, as komi_model.rs's fit_pooled."""
    theta = np.zeros(classes + 1)
    for _ in range(200):
        grad = -RIDGE * theta
        hess = np.eye(classes + 1) * RIDGE
        for c, k, ys in cells:
            x = k - centre
            p = 1 / (1 + np.exp(-(theta[c] + theta[classes] * x)))
            n = len(ys)
            r, w = ys.sum() - n * p, n * p * (1 - p)
            grad[c] += r
            grad[classes] += r * x
            hess[c, c] += w
            hess[c, classes] += w * x
            hess[classes, c] += w * x
            hess[classes, classes] += w * x * x
        step = np.linalg.solve(hess, grad)
        theta += step
        if np.abs(step).sum() < 1e-10:
            break
    return theta


def best(theta, komi, centre):
    slope = theta[-1]
    return max(1 / (1 + np.exp(-(a + slope * (komi - centre)))) for a in theta[:-1])


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    path = sys.argv[1]
    komi = float(sys.argv[2]) if len(sys.argv) == 3 else 0.0
    try:
        with open(path) as f:
            played = json.load(f)["players"][0]["classes"]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        sys.exit(f"{path}: not a readable practical study ({type(e).__name__}: {e})")
    if not played or played[0].get("komi") is None:
        sys.exit(f"{path}: not a komi study (its classes have no `komi`)")
    names = sorted({c["opening"] for c in played})
    cells = [(names.index(c["opening"]), c["komi"], np.array(c["outcomes"])) for c in played]
    komis = [k for _, k, _ in cells]
    centre = (min(komis) + max(komis)) / 2
    estimate = best(fit(cells, len(names), centre), komi, centre)
    rng = np.random.default_rng(1)
    refits = []
    for _ in range(REFITS):
        drawn = [(c, k, ys[rng.integers(0, len(ys), len(ys))]) for c, k, ys in cells]
        refits.append(best(fit(drawn, len(names), centre), komi, centre))
    lo, mid, hi = np.percentile(refits, [2.5, 50, 97.5])
    print(f"{path}: B({komi:g}) {estimate:.3f} over {len(names)} classes")
    print(f"  bootstrap percentiles 2.5 / 50 / 97.5: {lo:.3f} / {mid:.3f} / {hi:.3f}")
    print(f"  percentile interval [{lo:.3f}, {hi:.3f}]; basic [{2 * estimate - hi:.3f}, "
          f"{2 * estimate - lo:.3f}]; median - estimate {mid - estimate:+.3f}")


if __name__ == "__main__":
    main()
