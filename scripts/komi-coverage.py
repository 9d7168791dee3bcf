#!/usr/bin/env python3
"""How often a komi study's intervals hold the truth: the winner's curse, simulated.

    scripts/komi-coverage.py [STUDIES] [GAMES]

Simulates komi studies whose truth is known (16 first-stone classes, komi 0, 3, 6, 9, 12, GAMES
games a (class, komi) cell, 80 by default, one slope of -0.1 a komi point; four cases: all 16
classes tied at the top, one class leading, four tied at the top, the classes spread evenly) and
fits each as eval/src/study/practical/komi_model.rs does (an intercept a class, one shared slope,
ridge 0.01, centred on komi 6; 200 bootstrap refits resampling every cell's games). For Black's
best at komi 0, B(0) = max over classes, it prints the share of STUDIES simulated studies (400
by default) whose 95% interval holds the true B(0), and the mean width, for three intervals:
the percentile bootstrap (the study's before 2026-11-29), the basic bootstrap, and the band over
the classes in contention (docs/studies.md, "Black's best without the winner's curse"); then the
same share for the fair komi (the crossing of one half) by the percentile bootstrap and by the
band inverted. Needs numpy; about 3 minutes on one core.
"""
import sys

import numpy as np

RIDGE = 0.01
REFITS = 200
KOMIS = [0, 3, 6, 9, 12]
CENTRE = 6.0
SLOPE = -0.1


def logit(p):
    p = np.asarray(p, float)
    return np.log(p / (1 - p))


# Intercepts at the centre, from each class's win rate at komi 0.
CASES = {
    "16 tied": logit(np.full(16, 0.62)) + SLOPE * CENTRE,
    "one leads": logit(np.r_[0.70, np.full(15, 0.45)]) + SLOPE * CENTRE,
    "4 tied at the top": logit(np.r_[np.full(4, 0.64), np.linspace(0.36, 0.58, 12)]) + SLOPE * CENTRE,
    "spread": logit(np.linspace(0.36, 0.66, 16)) + SLOPE * CENTRE,
}


def fit(cls, komi, wins, games, classes):
    """Newton's method on the ridge-penalised log-likelihood, as komi_model.rs's fit_pooled."""
    theta = np.zeros(classes + 1)
    x = komi - CENTRE
    for _ in range(100):
        p = 1 / (1 + np.exp(-(theta[cls] + theta[-1] * x)))
        r, w = wins - games * p, games * p * (1 - p)
        grad = -RIDGE * theta
        grad[:-1] += np.bincount(cls, r, classes)
        grad[-1] += (r * x).sum()
        hess = np.eye(classes + 1) * RIDGE
        hess[np.arange(classes), np.arange(classes)] += np.bincount(cls, w, classes)
        hx = np.bincount(cls, w * x, classes)
        hess[:-1, -1] += hx
        hess[-1, :-1] += hx
        hess[-1, -1] += (w * x * x).sum()
        step = np.linalg.solve(hess, grad)
        theta += step
        if np.abs(step).sum() < 1e-10:
            break
    return theta


def rates(theta, komi):
    """Every class's fitted rate at each komi: shape (komis, classes)."""
    komi = np.atleast_1d(komi)[:, None]
    return 1 / (1 + np.exp(-(theta[:-1] + theta[-1] * (komi - CENTRE))))


def band(fitted, refits):
    """The band over the classes in contention: B's 95% interval at each komi.
    fitted (komis, classes); refits (refits, komis, classes)."""
    spread = refits.std(axis=0)
    safe = np.where(spread > 0, spread, 1.0)
    t = (np.abs(refits - fitted) / safe).max(axis=2)
    q = np.percentile(t, 95, axis=0)[:, None]
    floor = (fitted - q * spread).max(axis=1, keepdims=True)
    contending = fitted + q * spread >= floor
    t2 = np.where(contending, np.abs(refits - fitted) / safe, 0).max(axis=2)
    q2 = np.percentile(t2, 95, axis=0)[:, None]
    lo = np.where(contending, fitted - q2 * spread, -np.inf).max(axis=1)
    hi = np.where(contending, fitted + q2 * spread, -np.inf).max(axis=1)
    return lo, hi


def main():
    studies = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    games = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    rng = np.random.default_rng(7)
    reach = np.arange(KOMIS[0] - 12, KOMIS[-1] + 12 + 1e-9, 0.05)
    print(f"{studies} simulated studies a case, {games} games a cell, {REFITS} refits each")
    for name, a in CASES.items():
        classes = len(a)
        cls = np.repeat(np.arange(classes), len(KOMIS))
        komi = np.tile(np.array(KOMIS, float), classes)
        games_ = np.full(len(cls), float(games))
        truth_b0 = rates(np.r_[a, SLOPE], 0.0).max()
        truth_fair = (CENTRE - a / SLOPE).max()
        held = {"percentile": 0, "basic": 0, "band": 0, "fair percentile": 0, "fair band": 0}
        width = {"percentile": 0.0, "basic": 0.0, "band": 0.0}
        for _ in range(studies):
            p = 1 / (1 + np.exp(-(a[cls] + SLOPE * (komi - CENTRE))))
            wins = rng.binomial(games, p).astype(float)
            theta = fit(cls, komi, wins, games_, classes)
            thetas = [fit(cls, komi, rng.binomial(games, wins / games).astype(float), games_, classes)
                      for _ in range(REFITS)]
            b0 = rates(theta, 0.0).max()
            maxima = np.array([rates(t, 0.0).max() for t in thetas])
            lo, hi = np.percentile(maxima, [2.5, 97.5])
            intervals = {
                "percentile": (min(lo, b0), max(hi, b0)),
                "basic": (2 * b0 - hi, 2 * b0 - lo),
            }
            fitted = rates(theta, reach)
            refit_rates = np.stack([rates(t, reach) for t in thetas])
            blo, bhi = band(fitted, refit_rates)
            at0 = np.argmin(np.abs(reach))
            intervals["band"] = (blo[at0], bhi[at0])
            for m, (l, h) in intervals.items():
                held[m] += l <= truth_b0 <= h
                width[m] += h - l
            fair = (CENTRE - theta[:-1] / theta[-1]).max()
            crossings = [(CENTRE - t[:-1] / t[-1]).max() for t in thetas]
            l, h = np.percentile(crossings, [2.5, 97.5])
            held["fair percentile"] += min(l, np.floor(fair)) <= truth_fair <= max(h, np.ceil(fair))
            holds = np.flatnonzero((blo <= 0.5) & (0.5 <= bhi))
            if len(holds) and 0 < holds[0] and holds[-1] < len(reach) - 1:
                l, h = min(reach[holds[0]], np.floor(fair)), max(reach[holds[-1]], np.ceil(fair))
                held["fair band"] += l <= truth_fair <= h
        shares = ", ".join(f"{m} {held[m] / studies:.2f} (width {width[m] / studies:.3f})"
                           for m in width)
        print(f"{name}: true B(0) {truth_b0:.3f}; held by {shares}")
        print(f"  true fair komi {truth_fair:.2f}; held by the percentile interval "
              f"{held['fair percentile'] / studies:.2f}, the band {held['fair band'] / studies:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
