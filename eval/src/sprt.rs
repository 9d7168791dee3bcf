//! Sequential probability ratio test on the Elo difference (gating).
//!
//! H0: the candidate is `elo0` Elo stronger than the best model; H1: it is `elo1` stronger
//! (elo1 > elo0). Games are played in batches; after each batch the log-likelihood ratio of
//! the results so far is compared with the bounds of Wald's test,
//! `lower = ln(beta / (1 - alpha))` and `upper = ln((1 - beta) / alpha)`: at or above
//! `upper` H1 is accepted (the candidate is promoted), at or below `lower` H0 is accepted
//! (it is rejected), in between the test continues.
//!
//! The LLR is the generalized (GSPRT) trinomial LLR that fishtest uses for W/D/L results
//! (M. Van den Bergh, "Comments on the SPRT", the `LLR_logistic` of fishtest's `stat_util`):
//! with `s0, s1` the scores of the two hypotheses (`s = 1/(1+10^(-elo/400))`) and `p̂` the
//! observed frequencies of the outcomes with scores `a = (1, 1/2, 0)`,
//!
//! ```text
//! LLR = N * sum_i p̂_i ln(p1_i / p0_i),   pk_i = p̂_i / (1 + λk (a_i - sk)),
//! ```
//!
//! where `pk` is the maximum-likelihood trinomial with mean score `sk` and `λk` solves
//! `sum_i p̂_i (a_i - sk) / (1 + λk (a_i - sk)) = 0` (found by bisection). Counts are
//! regularized as fishtest does: a count of zero becomes 1e-3, so one-sided early results
//! (all wins) give a finite LLR that grows by about `ln(s1/s0)` per win.
//!
//! Its normal approximation (used by cutechess-cli and early fishtest, [`llr_normal`]) is
//! `LLR ≈ N (s1 - s0) (2 s̄ - s0 - s1) / (2 var)` with `s̄` the mean score and `var` the
//! per-game trinomial variance; both agree closely once a few dozen games are played.

use crate::elo::{score_from_elo, Wdl};
use serde::{Deserialize, Serialize};

/// Parameters of the test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds (promoting a candidate that is not better).
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds (rejecting a candidate that is better).
    pub beta: f64,
}

/// What the test says now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Continue,
    AcceptH1,
    AcceptH0,
}

/// The state of the test after some games.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtStatus {
    pub decision: Decision,
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
}

const REGULARIZE: f64 = 1e-3;

impl Sprt {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return Err(format!(
                "alpha must be between 0 and 0.5 (exclusive), got {}",
                self.alpha
            ));
        }
        if !(self.beta > 0.0 && self.beta < 0.5) {
            return Err(format!(
                "beta must be between 0 and 0.5 (exclusive), got {}",
                self.beta
            ));
        }
        for (field, elo) in [("elo0", self.elo0), ("elo1", self.elo1)] {
            if !elo.is_finite() {
                return Err(format!("{field} must be a finite number, got {elo}"));
            }
        }
        if !(self.elo1 > self.elo0) {
            return Err(format!(
                "elo1 ({}) must be greater than elo0 ({})",
                self.elo1, self.elo0
            ));
        }
        Ok(())
    }

    /// Wald's bounds `(lower, upper)`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The test applied to the candidate's results so far.
    pub fn status(&self, wdl: Wdl) -> SprtStatus {
        let llr = llr_gsprt(wdl, self.elo0, self.elo1);
        let (lower, upper) = self.bounds();
        let decision = if llr >= upper {
            Decision::AcceptH1
        } else if llr <= lower {
            Decision::AcceptH0
        } else {
            Decision::Continue
        };
        SprtStatus {
            decision,
            llr,
            lower,
            upper,
        }
    }
}

/// The generalized trinomial LLR of H1 (`elo1`) against H0 (`elo0`); see the module docs.
pub fn llr_gsprt(wdl: Wdl, elo0: f64, elo1: f64) -> f64 {
    if wdl.games() == 0 {
        return 0.0;
    }
    let counts = [wdl.wins as f64, wdl.draws as f64, wdl.losses as f64].map(|c| c.max(REGULARIZE));
    let n: f64 = counts.iter().sum();
    let p = counts.map(|c| c / n);
    let a = [1.0, 0.5, 0.0];
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    let lam0 = constrained_mle(&p, &a, s0);
    let lam1 = constrained_mle(&p, &a, s1);
    // ln(p1_i / p0_i) = ln(1 + λ0 (a_i - s0)) - ln(1 + λ1 (a_i - s1))
    n * (0..3)
        .map(|i| p[i] * ((1.0 + lam0 * (a[i] - s0)).ln() - (1.0 + lam1 * (a[i] - s1)).ln()))
        .sum::<f64>()
}

/// λ of the maximum-likelihood distribution with mean score `s` (0 < s < 1): the root of
/// `f(λ) = sum p_i (a_i - s) / (1 + λ (a_i - s))`, decreasing on the interval where every
/// `1 + λ (a_i - s)` is positive.
fn constrained_mle(p: &[f64; 3], a: &[f64; 3], s: f64) -> f64 {
    let f = |lam: f64| {
        (0..3)
            .map(|i| p[i] * (a[i] - s) / (1.0 + lam * (a[i] - s)))
            .sum::<f64>()
    };
    let (mut lo, mut hi) = (-1.0 / (1.0 - s), 1.0 / s);
    let eps = 1e-12;
    lo += eps * (hi - lo);
    hi -= eps * (hi - lo);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The normal approximation of the LLR, `N (s1 - s0)(2 s̄ - s0 - s1) / (2 var)`; 0 when the
/// variance is 0 (all results equal).
pub fn llr_normal(wdl: Wdl, elo0: f64, elo1: f64) -> f64 {
    let var = wdl.variance();
    if !(var > 0.0) {
        return 0.0;
    }
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    let n = wdl.games() as f64;
    n * (s1 - s0) * (2.0 * wdl.score() - s0 - s1) / (2.0 * var)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const TEST: Sprt = Sprt {
        elo0: 0.0,
        elo1: 10.0,
        alpha: 0.05,
        beta: 0.05,
    };

    #[test]
    fn bounds_are_walds() {
        let (lo, hi) = TEST.bounds();
        // ln(0.05/0.95) and ln(0.95/0.05)
        assert!((lo - -2.944439).abs() < 1e-6 && (hi - 2.944439).abs() < 1e-6);
    }

    #[test]
    fn hand_computed_llr() {
        // W/D/L 60/30/30 with elo0 = 0, elo1 = 10: s0 = 0.5, s1 = 0.5143872, s̄ = 0.625,
        // var = (60*0.140625 + 30*0.015625 + 30*0.390625)/120 = 0.171875,
        // normal approximation 120 * 0.0143872 * (1.25 - 1.0143872) / (2 * 0.171875) = 1.18335.
        let wdl = Wdl::new(60, 30, 30);
        assert!((llr_normal(wdl, 0.0, 10.0) - 1.183350).abs() < 1e-5);
        // The exact GSPRT (constrained MLE computed independently): 1.086712.
        assert!(
            (llr_gsprt(wdl, 0.0, 10.0) - 1.086712).abs() < 1e-5,
            "{}",
            llr_gsprt(wdl, 0.0, 10.0)
        );
        assert_eq!(TEST.status(wdl).decision, Decision::Continue);
        // Symmetry: swapping the hypotheses and the colours of the result negates the LLR.
        let a = llr_gsprt(Wdl::new(40, 25, 35), -5.0, 15.0);
        let b = llr_gsprt(Wdl::new(35, 25, 40), -15.0, 5.0);
        assert!((a + b).abs() < 1e-9);
        // Close to the null with many games, the two formulas agree.
        let big = Wdl::new(2100, 1000, 1900);
        let (g, n) = (llr_gsprt(big, 0.0, 10.0), llr_normal(big, 0.0, 10.0));
        assert!((g - n).abs() < 0.02 * n.abs().max(1.0), "{g} vs {n}");
    }

    #[test]
    fn one_sided_results_need_many_games() {
        // A handful of wins must not decide the test: each win is worth about ln(s1/s0).
        let st = TEST.status(Wdl::new(5, 0, 0));
        assert_eq!(st.decision, Decision::Continue, "{st:?}");
        assert!(st.llr > 0.0 && st.llr.is_finite());
        assert_eq!(
            TEST.status(Wdl::new(300, 0, 0)).decision,
            Decision::AcceptH1
        );
        assert_eq!(
            TEST.status(Wdl::new(0, 0, 300)).decision,
            Decision::AcceptH0
        );
        assert_eq!(TEST.status(Wdl::new(0, 0, 0)).llr, 0.0);
    }

    /// Play games of a player `true_elo` stronger (draw rate 20%) until the test decides.
    fn simulate(sprt: &Sprt, true_elo: f64, rng: &mut ChaCha8Rng) -> (Decision, u64) {
        let s = score_from_elo(true_elo);
        let draw = 0.2;
        let (pw, pd) = (s - draw / 2.0, draw);
        let mut wdl = Wdl::default();
        loop {
            for _ in 0..2 {
                let u: f64 = rng.gen();
                if u < pw {
                    wdl.wins += 1;
                } else if u < pw + pd {
                    wdl.draws += 1;
                } else {
                    wdl.losses += 1;
                }
            }
            let st = sprt.status(wdl);
            if st.decision != Decision::Continue || wdl.games() > 100_000 {
                return (st.decision, wdl.games());
            }
        }
    }

    #[test]
    fn simulated_matches_decide_with_the_promised_error_rates() {
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 40.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let reps = 400;
        let rate = |true_elo: f64, want: Decision, rng: &mut ChaCha8Rng| {
            (0..reps)
                .filter(|_| simulate(&sprt, true_elo, rng).0 == want)
                .count() as f64
                / reps as f64
        };
        // Far from the hypotheses the test is (almost) always right.
        assert!(rate(120.0, Decision::AcceptH1, &mut rng) >= 0.99);
        assert!(rate(-80.0, Decision::AcceptH0, &mut rng) >= 0.99);
        // At the hypotheses themselves the error rates are alpha and beta (Wald's bounds are
        // conservative, overshoot makes them a little smaller). Binomial sd with 400 runs is
        // 0.011; the margin is about 3 sd.
        let false_promotion = rate(0.0, Decision::AcceptH1, &mut rng);
        let false_rejection = rate(40.0, Decision::AcceptH0, &mut rng);
        println!("observed alpha {false_promotion}, beta {false_rejection} (nominal 0.05 each)");
        assert!(
            (0.01..=0.085).contains(&false_promotion),
            "alpha observed {false_promotion}"
        );
        assert!(
            (0.01..=0.085).contains(&false_rejection),
            "beta observed {false_rejection}"
        );
        // Halfway between, either answer is fine, but the test must end.
        let (_, games) = simulate(&sprt, 20.0, &mut rng);
        assert!(games < 100_000);
    }
}
