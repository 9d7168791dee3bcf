//! Elo differences from match scores, with 95% intervals.
//!
//! The logistic Elo model: a player `d` Elo stronger scores `s = 1 / (1 + 10^(-d/400))` per game
//! (a draw counts half), so `d = -400 log10(1/s - 1)`.
//!
//! The interval comes from the trinomial distribution of the per-game score (as fishtest and
//! cutechess-cli report it): with `n` games of which `w` won, `d` drawn and `l` lost, the mean
//! score is `s = (w + d/2)/n`, the per-game variance is
//! `var = (w (1-s)^2 + d (1/2-s)^2 + l s^2) / n`, the standard error of `s` is `sqrt(var/n)`, and
//! the 95% interval `s ± 1.96 sqrt(var/n)` is mapped through the Elo formula (it is not
//! symmetric in Elo).
//!
//! When every game had the same result (a single game, all wins, all draws, all losses) that
//! variance is 0 and so would the interval's width be; the interval is then the Wilson score
//! interval of the points, `(s + z²/2n ± z sqrt(s(1-s)/n + z²/4n²)) / (1 + z²/n)`, which takes
//! each game as a win or a loss (the largest variance a score allows). 4-0 gives a score interval
//! of `[n/(n + z²), 1]`, Elo `[+7, +ELO_CAP]`; one draw gives about ±500.
//!
//! A score of exactly 0 or 1 has no finite Elo. The estimate clamps it to `[1/(2n), 1 - 1/(2n)]`,
//! half a game from the edge (so a single game gives 0); an interval end at or past 0 or 1 means
//! the data bound the difference on that side not at all, and is reported as `∓ELO_CAP` (finite,
//! so that it survives JSON; [`format_elo_end`] prints it as `±inf`). Either sets `clamped`. With
//! no games the estimate is 0 with the interval `±ELO_CAP`.

use crate::score::{Estimate, Z95};
use serde::{Deserialize, Serialize};

/// The largest Elo difference reported (the Elo of a score of 1 - 1/(2n) for a huge n is large
/// but finite; this caps the no-game case).
pub const ELO_CAP: f64 = 2000.0;

/// Score per game (0..1) of a player `elo` points stronger than its opponent.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Elo difference that gives the score `s` (0 < s < 1); infinite at 0 and 1.
pub fn elo_from_score(s: f64) -> f64 {
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Wins, draws and losses of one player against another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    pub fn new(wins: u64, draws: u64, losses: u64) -> Wdl {
        Wdl {
            wins,
            draws,
            losses,
        }
    }
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
    /// Score points: wins plus half the draws.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }
    /// Mean score per game (0.5 with no games).
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            self.points() / n as f64
        }
    }
    /// The same result seen by the opponent.
    pub fn flipped(&self) -> Wdl {
        Wdl {
            wins: self.losses,
            draws: self.draws,
            losses: self.wins,
        }
    }
    /// Per-game variance of the score (trinomial).
    pub fn variance(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.0;
        }
        let s = self.score();
        (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s * s)
            / n as f64
    }
    pub fn add(&mut self, other: Wdl) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
    }
}

/// An Elo difference with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    pub elo: f64,
    /// Lower and upper end of the 95% interval.
    pub lo: f64,
    pub hi: f64,
    pub score: f64,
    pub games: u64,
    /// Whether a score of 0 or 1 (or an interval end past them) was clamped to stay finite.
    pub clamped: bool,
}

impl EloEstimate {
    /// Half-width of the interval (the larger side).
    pub fn margin(&self) -> f64 {
        (self.elo - self.lo).max(self.hi - self.elo)
    }
}

/// Elo difference of the player with result `wdl` against its opponent, with its 95% interval.
pub fn elo_estimate(wdl: Wdl) -> EloEstimate {
    let n = wdl.games();
    if n == 0 {
        return EloEstimate {
            elo: 0.0,
            lo: -ELO_CAP,
            hi: ELO_CAP,
            score: 0.5,
            games: 0,
            clamped: true,
        };
    }
    let s = wdl.score();
    let edge = 0.5 / n as f64;
    let inside = s.clamp(edge, 1.0 - edge);
    let elo = elo_from_score(inside).clamp(-ELO_CAP, ELO_CAP);
    let (lo_score, hi_score) = score_interval(wdl);
    let lo = end_elo(lo_score);
    let hi = end_elo(hi_score);
    let clamped = inside != s || lo <= -ELO_CAP || hi >= ELO_CAP;
    EloEstimate {
        elo,
        lo,
        hi,
        score: s,
        games: n,
        clamped,
    }
}

/// The 95% interval of the score per game (at least one game): the trinomial normal interval,
/// or where the results do not vary and it would have no width, Wilson's (see the module docs).
fn score_interval(wdl: Wdl) -> (f64, f64) {
    let n = wdl.games() as f64;
    let s = wdl.score();
    let var = wdl.variance();
    if var > 0.0 {
        let half = Z95 * (var / n).sqrt();
        return (s - half, s + half);
    }
    Estimate::score(s * n, wdl.games()).map_or((0.0, 1.0), |e| (e.lo, e.hi))
}

/// The Elo of an interval end; at or past a score of 0 or 1 it is unbounded, so `∓ELO_CAP`.
fn end_elo(score: f64) -> f64 {
    elo_from_score(score.clamp(0.0, 1.0)).clamp(-ELO_CAP, ELO_CAP)
}

/// An interval end for people: `+123`, or `+inf` / `-inf` for an end at the cap (unbounded).
pub fn format_elo_end(elo: f64) -> String {
    if elo.abs() >= ELO_CAP {
        format!("{}inf", if elo > 0.0 { '+' } else { '-' })
    } else {
        format!("{elo:+.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_score_and_interval() {
        // 6 wins, 2 draws, 2 losses: s = 0.7, var = (6*0.09 + 2*0.04 + 2*0.49)/10 = 0.16,
        // se = sqrt(0.016) = 0.126491, s ± 1.96 se = [0.452077, 0.947923],
        // Elo = -400 log10(1/0.7 - 1) = 147.19, interval [-33.40, 504.03].
        let e = elo_estimate(Wdl::new(6, 2, 2));
        assert!((e.score - 0.7).abs() < 1e-12);
        assert!((Wdl::new(6, 2, 2).variance() - 0.16).abs() < 1e-12);
        assert!((e.elo - 147.1907).abs() < 1e-3, "{e:?}");
        assert!((e.lo - -33.3994).abs() < 1e-3, "{e:?}");
        assert!((e.hi - 504.0333).abs() < 1e-3, "{e:?}");
        assert!(!e.clamped);
    }

    #[test]
    fn known_scores() {
        assert!((elo_from_score(0.75) - 190.8485).abs() < 1e-3);
        assert!(elo_from_score(0.5).abs() < 1e-12);
        assert!((score_from_elo(190.848501887865) - 0.75).abs() < 1e-12);
        assert!((elo_from_score(score_from_elo(-321.0)) + 321.0).abs() < 1e-9);
        // Symmetric: the opponent's view is the negative.
        let a = elo_estimate(Wdl::new(30, 10, 20));
        let b = elo_estimate(Wdl::new(30, 10, 20).flipped());
        assert!((a.elo + b.elo).abs() < 1e-9 && (a.lo + b.hi).abs() < 1e-9);
    }

    #[test]
    fn one_sided_results_stay_finite() {
        let e = elo_estimate(Wdl::new(20, 0, 0));
        assert!(e.clamped && e.elo.is_finite() && e.lo.is_finite() && e.hi.is_finite());
        // Clamped to a score of 1 - 1/40: -400 log10(1/39) = 636.4.
        assert!((e.elo - 636.4).abs() < 0.1, "{e:?}");
        assert!(e.lo <= e.elo && e.elo <= e.hi);
        let z = elo_estimate(Wdl::default());
        assert_eq!(z.elo, 0.0);
        assert!(z.lo < 0.0 && z.hi > 0.0);
    }

    #[test]
    fn tiny_and_one_sided_samples_have_honest_intervals() {
        let samples = [(1, 0, 0), (4, 0, 0), (0, 0, 4), (0, 1, 0), (0, 3, 0)];
        for wdl in samples.map(|(w, d, l)| Wdl::new(w, d, l)) {
            let e = elo_estimate(wdl);
            assert!(e.lo < e.elo && e.elo < e.hi, "{wdl:?}: {e:?}");
            assert!(e.lo.is_finite() && e.hi.is_finite(), "{wdl:?}: {e:?}");
        }
        // 4-0: Wilson's lower end n/(n + z²) = 0.5101, +7.0 Elo; the upper end is unbounded.
        let e = elo_estimate(Wdl::new(4, 0, 0));
        assert!(
            (e.lo - 7.0).abs() < 0.1 && e.hi == ELO_CAP && e.clamped,
            "{e:?}"
        );
        assert_eq!(format_elo_end(e.hi), "+inf");
        assert_eq!(format_elo_end(e.lo), "+7");
        // 0-4 is its mirror image.
        let m = elo_estimate(Wdl::new(0, 0, 4));
        assert!((m.hi + 7.0).abs() < 0.1 && m.lo == -ELO_CAP, "{m:?}");
        assert_eq!(format_elo_end(m.lo), "-inf");
        // One draw: score interval 0.5 ± 0.4454, about ±495 Elo.
        let d = elo_estimate(Wdl::new(0, 1, 0));
        assert!(
            (d.hi - 495.0).abs() < 1.0 && (d.lo + d.hi).abs() < 1e-9,
            "{d:?}"
        );
        // One win: the estimate is clamped to half a game (0), the lower end is 1/(1 + z²).
        let w = elo_estimate(Wdl::new(1, 0, 0));
        assert!(
            w.elo == 0.0 && (w.lo + 233.8).abs() < 0.1 && w.hi == ELO_CAP,
            "{w:?}"
        );
    }
}
