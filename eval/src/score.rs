//! Figures with their 95% intervals: a Wilson score interval ([`Estimate`]), and a score
//! measured by play over distinct games ([`Score`]); Cohen's κ ([`cohen_kappa`]), the
//! agreement of two ratings beyond chance; and the normal quantile ([`normal_quantile`]) for
//! Wilson intervals of other levels (a family's simultaneous ones, [`Estimate::score_at`]).

use serde::{Deserialize, Serialize};

/// z of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A figure with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Estimate {
    /// A score (`points` of `games`, draws counting half) with its Wilson interval. `None`
    /// for no games.
    pub fn score(points: f64, games: u64) -> Option<Estimate> {
        Estimate::score_at(points, games, Z95)
    }

    /// [`Estimate::score`] with the Wilson interval of any two-sided level: `z` is
    /// [`normal_quantile`] of 1 − α/2 (the simultaneous intervals of a family of figures).
    pub fn score_at(points: f64, games: u64, z: f64) -> Option<Estimate> {
        if games == 0 {
            return None;
        }
        let n = games as f64;
        let p = points / n;
        let z2 = z * z;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        // The Wilson interval holds p in exact arithmetic; the bounds keep it so in floats.
        Some(Estimate {
            estimate: p,
            lo: (centre - half).clamp(0.0, p),
            hi: (centre + half).clamp(p, 1.0),
        })
    }

    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// `0.562 [0.512, 0.611]`.
    pub fn show(&self) -> String {
        format!("{:.3} [{:.3}, {:.3}]", self.estimate, self.lo, self.hi)
    }
}

/// The standard normal quantile: the z below which a share `p` of the distribution lies
/// (`normal_quantile(0.975)` is [`Z95`]), by Acklam's rational approximation: within 1.2e-9
/// relative, far below what an interval's third digit shows, so no refining step. `p` at or
/// past 0 or 1 gives ∓∞ or ±∞.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.024_25;
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// A score measured by play, over distinct games: a deterministic player repeating one game
/// has played one game, however many times it was asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub estimate: f64,
    /// A 95% interval; absent when the figure comes from single deterministic games (one
    /// distinct game has no sampling noise to bound, only the player's own mistakes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    pub games: u64,
    pub distinct_games: u64,
}

impl Score {
    /// The mean of `values` (one per distinct game, each in [0, 1]) with its Wilson interval
    /// when there are two distinct games or more.
    pub fn of_values(values: &[f64], games: u64) -> Score {
        let n = values.len() as u64;
        let points: f64 = values.iter().sum();
        match Estimate::score(points, n) {
            Some(e) if n >= 2 => Score::with_bounds(e.estimate, e.lo, e.hi, games, n),
            _ => Score::with_bounds(points / n.max(1) as f64, 0.0, 0.0, games, n),
        }
    }

    /// A score with bounds `[lo, hi]`; bounds that do not enclose it with a width are dropped
    /// (the figure is deterministic).
    pub fn with_bounds(estimate: f64, lo: f64, hi: f64, games: u64, distinct: u64) -> Score {
        let interval = lo <= estimate && estimate <= hi && hi - lo > 1e-12;
        Score {
            estimate,
            lo: interval.then_some(lo),
            hi: interval.then_some(hi),
            games,
            distinct_games: distinct,
        }
    }

    pub fn deterministic(&self) -> bool {
        self.lo.is_none()
    }

    /// The interval, or the point itself when deterministic.
    pub fn bounds(&self) -> (f64, f64) {
        (
            self.lo.unwrap_or(self.estimate),
            self.hi.unwrap_or(self.estimate),
        )
    }

    /// As an [`Estimate`] (a point interval when deterministic), for charts.
    pub fn as_estimate(&self) -> Estimate {
        let (lo, hi) = self.bounds();
        Estimate {
            estimate: self.estimate,
            lo,
            hi,
        }
    }

    /// Whether an exact value lies in the interval (equals the figure when deterministic).
    pub fn admits(&self, exact: f64) -> bool {
        let (lo, hi) = self.bounds();
        lo - 1e-9 <= exact && exact <= hi + 1e-9
    }

    /// `0.562 [0.512, 0.611]`, or `1.000 (deterministic)`.
    pub fn show(&self) -> String {
        match (self.lo, self.hi) {
            (Some(lo), Some(hi)) => format!("{:.3} [{lo:.3}, {hi:.3}]", self.estimate),
            _ => format!("{:.3} (deterministic)", self.estimate),
        }
    }
}

/// Cohen's κ of two ratings of the same items, each pair `(a, b)` the categories (0, 1, ...)
/// the two gave one item: agreement beyond what raters that chose at the same rates would
/// reach by chance (0: chance, 1: perfect). `None` without items, or where chance agreement is
/// already total (both put every item in one and the same category).
pub fn cohen_kappa(pairs: impl IntoIterator<Item = (usize, usize)>) -> Option<f64> {
    let pairs: Vec<(usize, usize)> = pairs.into_iter().collect();
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let observed = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let categories = pairs.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0) + 1;
    let share = |k: usize, side: fn(&(usize, usize)) -> usize| {
        pairs.iter().filter(|p| side(p) == k).count() as f64 / n
    };
    let expected: f64 = (0..categories)
        .map(|k| share(k, |p| p.0) * share(k, |p| p.1))
        .sum();
    (expected < 1.0).then(|| (observed - expected) / (1.0 - expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a coefficient of the approximation were mistyped (the quantiles below are
    /// the standard normal's to the digits printed in any table) or a tail were mirrored.
    #[test]
    fn the_normal_quantile_matches_the_table() {
        for (p, z) in [
            (0.5, 0.0),
            (0.975, Z95),
            (0.995, 2.575_829_303_548_9),
            (0.025 / 9.0, -2.772_921_294_608_661),
            (1.0 - 0.025 / 164.0, 3.611_119_572_844_367),
            (1e-6, -4.753_424_308_822_899),
        ] {
            let got = normal_quantile(p);
            assert!((got - z).abs() < 1e-6, "quantile of {p}: {got}, not {z}");
            assert!(
                (normal_quantile(1.0 - p) + z).abs() < 1e-6,
                "symmetry at {p}"
            );
        }
    }

    #[test]
    fn wilson_intervals_hold_the_estimate_and_shrink_with_games() {
        for (points, games) in [(0.0, 1), (1.0, 1), (3.5, 10), (10.0, 10), (500.0, 1000)] {
            let e = Estimate::score(points, games).unwrap();
            assert!(e.contains(e.estimate), "{points}/{games}: {e:?}");
            assert!(e.lo < e.hi, "never zero width: {e:?}");
            assert!((0.0..=1.0).contains(&e.lo) && (0.0..=1.0).contains(&e.hi));
        }
        let small = Estimate::score(5.0, 10).unwrap();
        let large = Estimate::score(500.0, 1000).unwrap();
        assert!(large.hi - large.lo < small.hi - small.lo);
        assert!(Estimate::score(0.0, 0).is_none());
    }

    #[test]
    fn a_score_counts_distinct_games_and_one_game_has_no_interval() {
        let one = Score::of_values(&[1.0], 10);
        assert!(one.deterministic() && one.games == 10 && one.distinct_games == 1);
        assert_eq!(one.show(), "1.000 (deterministic)");
        let many = Score::of_values(&[1.0, 0.0, 1.0, 1.0], 4);
        let (lo, hi) = many.bounds();
        assert!(lo < 0.75 && 0.75 < hi && !many.deterministic(), "{many:?}");
        assert!(many.admits(0.5) && !one.admits(0.0));
    }

    // Fails if κ counts raw agreement (a rater that always says yes agrees with a mostly-yes
    // truth often, and must get 0), or if perfect agreement is not 1.
    #[test]
    fn kappa_is_agreement_beyond_chance() {
        let truth = [1, 1, 1, 0];
        assert_eq!(cohen_kappa(truth.iter().map(|&t| (1, t))), Some(0.0));
        assert_eq!(cohen_kappa(truth.iter().map(|&t| (t, t))), Some(1.0));
        assert!(cohen_kappa(truth.iter().map(|&t| (1 - t, t))).unwrap() < 0.0);
        assert_eq!(cohen_kappa(std::iter::empty()), None);
    }
}
