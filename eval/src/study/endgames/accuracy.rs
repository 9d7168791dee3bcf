//! A player's accuracy on a truth set (`eval endgames score`): its match search at its visits
//! on every proved position, the sign of its value and of its raw value head against the proved
//! result, and, where the mover wins, whether the move it plays keeps the win (settled by the
//! position's certificate where its strategy plays that move, else by df-pn); written as
//! `score.json`, `.md` and `.svg`.

use super::{line_of, mover_wins, weights_of, TruthPosition, TruthSet};
use crate::error::EvalError;
use crate::players::{Brain, Contestant, RolloutEvaluator};
use crate::results::PlayerInfo;
use crate::score::Estimate;
use crate::study::practical::measure::value_head;
use crate::study::report::command_line;
use burn::tensor::Device;
use engine::proof::Certificate;
use engine::{AnyGame, Game, Player};
use rand::SeedableRng;
use selfplay::search::SearchConfig;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::PathBuf;

/// What `eval endgames score` is given: the `[search]` of its run config, read and parsed
/// once by the caller, and the player and budgets (each field is the option of the same name).
#[derive(Clone, Debug)]
pub struct ScoreSetup {
    /// The set: a folder made by `eval endgames build`.
    pub set: PathBuf,
    /// `[search]` for the player (each position keeps its own game and komi).
    pub search: SearchConfig,
    /// The player judged: CHECKPOINT@VISITS (or mcts:N).
    pub player: String,
    /// df-pn's budget for the position after the player's move (best-move accuracy).
    pub seconds: f64,
    pub table_mib: usize,
    pub seed: u64,
    /// The folder `score.json`, `.md` and `.svg` go to.
    pub out: PathBuf,
    /// Device of a network player.
    pub device: Device,
}

/// One position judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub proof: String,
    pub empty: usize,
    pub mover_wins: bool,
    /// The search's value for the player to move.
    pub value: f64,
    pub value_head: Option<f64>,
    /// The move the player plays.
    pub best: String,
    /// In a position the mover wins: whether that move keeps the win (`None`: the mover loses,
    /// or df-pn did not settle the position after the move in its budget).
    pub keeps_win: Option<bool>,
    /// What settled `keeps_win`.
    #[serde(default)]
    pub settled_by: Option<Settled>,
}

/// What settled whether a move keeps the win.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Settled {
    /// The move is the one the position's checked certificate plays.
    #[serde(rename = "certificate")]
    Certificate,
    /// df-pn proved the position after the move, without a certificate.
    #[serde(rename = "df-pn")]
    Dfpn,
}

/// Hits out of a count, with the Wilson 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    pub hits: u64,
    pub of: u64,
    pub rate: Option<Estimate>,
}

impl Accuracy {
    fn of(hits: impl Iterator<Item = bool>) -> Accuracy {
        let (mut h, mut n) = (0, 0);
        for hit in hits {
            h += u64::from(hit);
            n += 1;
        }
        Accuracy {
            hits: h,
            of: n,
            rate: Estimate::score(h as f64, n),
        }
    }
}

impl std::fmt::Display for Accuracy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.rate {
            Some(r) => write!(
                f,
                "{}/{} = {:.3} [{:.3}, {:.3}]",
                self.hits, self.of, r.estimate, r.lo, r.hi
            ),
            None => write!(f, "n/a (no positions)"),
        }
    }
}

/// The accuracies over some positions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Accuracies {
    pub positions: usize,
    /// The search value's sign against the proved result (a value of 0 counts as wrong).
    pub value_sign: Accuracy,
    /// Cohen's κ of "the mover wins" as the value's sign says it (0 reads as "loses") against
    /// the proof: agreement beyond what a value that guessed at the same rates would get.
    pub value_sign_kappa: Option<f64>,
    pub value_head_sign: Accuracy,
    pub value_head_sign_kappa: Option<f64>,
    /// Over the positions whose mover wins and whose move was settled.
    pub best_move: Accuracy,
    /// Positions whose mover wins where the position after the move was not settled.
    pub best_move_unsettled: usize,
}

/// κ of "the mover wins" as a value's sign says it (a value of 0 reads as "loses") against the
/// proof.
fn kappa(values: impl Iterator<Item = (f64, bool)>) -> Option<f64> {
    let yes = |b: bool| usize::from(b);
    crate::score::cohen_kappa(values.map(|(v, wins)| (yes(v > 0.0), yes(wins))))
}

impl Accuracies {
    pub fn of(judged: &[&Judged]) -> Accuracies {
        let sign = |v: f64, wins: bool| (v > 0.0) == wins && v != 0.0;
        Accuracies {
            positions: judged.len(),
            value_sign: Accuracy::of(judged.iter().map(|j| sign(j.value, j.mover_wins))),
            value_sign_kappa: kappa(judged.iter().map(|j| (j.value, j.mover_wins))),
            value_head_sign_kappa: kappa(
                judged
                    .iter()
                    .filter_map(|j| Some((j.value_head?, j.mover_wins))),
            ),
            value_head_sign: Accuracy::of(
                judged
                    .iter()
                    .filter_map(|j| Some(sign(j.value_head?, j.mover_wins))),
            ),
            best_move: Accuracy::of(judged.iter().filter_map(|j| j.keeps_win)),
            best_move_unsettled: judged
                .iter()
                .filter(|j| j.mover_wins && j.keeps_win.is_none())
                .count(),
        }
    }
}

/// Judge one position: the player's match search on it, and the proof of where its move leads.
fn judge(
    p: &TruthPosition,
    player: &Contestant,
    setup: &ScoreSetup,
    seed: u64,
) -> Result<Judged, EvalError> {
    player
        .plays(&p.game)
        .map_err(|why| EvalError::Config(format!("{}: {}: {why}", p.proof, player.info.name)))?;
    let line = line_of(&p.game, &p.setup)?;
    let g = line.last().expect("a line holds its start");
    let Some(cfg) = player.match_search() else {
        return Err(EvalError::Config(
            "the random player has no values: use mcts:N or a checkpoint".into(),
        ));
    };
    let mut search = selfplay::search::Search::new(cfg, g.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let result = match &player.brain {
        Brain::Net { model, .. } => {
            search.run(&mut net::model::NetEvaluator::new(model), false, &mut rng)
        }
        _ => search.run(&mut RolloutEvaluator::new(seed), false, &mut rng),
    }
    .map_err(|source| EvalError::Search {
        player: player.info.name.clone(),
        source,
    })?;
    let best = result.best();
    let mover_wins = p.winner == p.to_move;
    let (keeps_win, settled_by) = if mover_wins {
        keeps_win(g, best, p, setup)?
    } else {
        (None, None)
    };
    Ok(Judged {
        proof: p.proof.clone(),
        empty: p.empty,
        mover_wins,
        value: result.value as f64,
        // The value head's value is Black's.
        value_head: value_head(g, player).map(|v| match g.to_move() {
            Player::Black => v,
            Player::White => -v,
        }),
        best: g.action_to_string(best),
        keeps_win,
        settled_by,
    })
}

/// Whether `best`, played in `g` whose mover wins, keeps the win, and what settled it: the
/// position's certificate where its strategy plays that very move (a move of a checked winning
/// strategy wins), else df-pn on the position after it (also where the certificate is not
/// there: the same answer where df-pn settles it in its budget, only `settled_by` differs).
fn keeps_win(
    g: &AnyGame,
    best: engine::Action,
    p: &TruthPosition,
    setup: &ScoreSetup,
) -> Result<(Option<bool>, Option<Settled>), EvalError> {
    // A set may lack its largest certificates (`eval endgames reprove` makes them again):
    // df-pn settles the move then.
    let path = setup.set.join(&p.proof);
    if path.exists() {
        let (certificate, _) =
            Certificate::read(&path).map_err(|e| EvalError::Config(e.to_string()))?;
        if certificate.moves.get(&g.hash()) == Some(&best) {
            return Ok((Some(true), Some(Settled::Certificate)));
        }
    }
    let mut after = g.clone();
    after.apply(best);
    let keeps = mover_wins_after(&after, p.to_move, setup.seconds, setup.table_mib << 20);
    Ok((keeps, keeps.map(|_| Settled::Dfpn)))
}

/// Whether `mover` wins `after` (the position after its move), by df-pn.
fn mover_wins_after(after: &AnyGame, mover: Player, seconds: f64, table: usize) -> Option<bool> {
    let wins = mover_wins(after, seconds, table)?;
    Some(wins == (after.to_move() == mover))
}

/// `score.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub player: PlayerInfo,
    pub weights: Option<String>,
    pub set: String,
    /// Who built the set (its positions come from this player's games).
    pub set_player: String,
    pub all: Accuracies,
    /// By empty cells.
    pub by_empty: Vec<(usize, Accuracies)>,
    pub judged: Vec<Judged>,
    pub intervals: String,
    pub command: String,
}

const INTERVALS: &str = "95% Wilson intervals over the set's positions: they cover which positions the set drew from this player's games, not how the set leans (positions df-pn did not prove in its budget are left out, and the games are the building player's).";

/// `eval endgames score`: returns the Markdown.
pub fn score(setup: &ScoreSetup) -> Result<String, EvalError> {
    let set = TruthSet::read(&setup.set)?;
    let player = Contestant::load_for(
        &setup.player,
        None,
        &setup.search,
        setup.search.visits,
        &setup.device,
    )?;
    if !(setup.seconds > 0.0) {
        return Err(EvalError::Config(
            "--seconds: must be a number of seconds above 0".into(),
        ));
    }
    run::check_writable(&setup.out)?;
    let bar = run::progress::bar(set.positions.len() as u64, "positions judged", true);
    let mut judged = Vec::with_capacity(set.positions.len());
    for (i, p) in set.positions.iter().enumerate() {
        judged.push(judge(p, &player, setup, setup.seed.wrapping_add(i as u64))?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let all = Accuracies::of(&judged.iter().collect::<Vec<_>>());
    let mut empties: Vec<usize> = judged.iter().map(|j| j.empty).collect();
    empties.sort_unstable();
    empties.dedup();
    let by_empty = empties
        .iter()
        .map(|&e| {
            let these: Vec<&Judged> = judged.iter().filter(|j| j.empty == e).collect();
            (e, Accuracies::of(&these))
        })
        .collect();
    let score = Score {
        player: player.info.clone(),
        weights: weights_of(&player),
        set: setup.set.display().to_string(),
        set_player: set.player.name.clone(),
        all,
        by_empty,
        judged,
        intervals: INTERVALS.into(),
        command: command_line(),
    };
    let md = markdown(&score, &set);
    let json = serde_json::to_string_pretty(&score).expect("a score serialises") + "\n";
    run::write_atomic(&setup.out.join("score.json"), json.as_bytes())?;
    run::write_atomic(&setup.out.join("score.md"), md.as_bytes())?;
    run::write_atomic(&setup.out.join("score.svg"), svg(&score).as_bytes())?;
    Ok(md)
}

fn markdown(s: &Score, set: &TruthSet) -> String {
    let mut md = String::new();
    let weights = s.weights.as_deref().unwrap_or("-");
    let _ = writeln!(md, "# Endgame accuracy of {}\n", s.player.name);
    let _ = writeln!(
        md,
        "Set: `{}`, {} positions proved by df-pn with certificates, from the games of {} ({} to {} empty cells; {} positions left out, not proved in {} s). Player: {} (weights {weights}).\n",
        s.set,
        set.positions.len(),
        s.set_player,
        set.empty[0],
        set.empty[1],
        set.unproved.len(),
        set.seconds_per_position,
        s.player.name
    );
    let _ = writeln!(md, "| empty cells | positions | value sign | κ | value head sign | κ | best move (mover wins) | unsettled |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    let k = |x: Option<f64>| x.map_or("n/a".to_string(), |x| format!("{x:.2}"));
    let row = |md: &mut String, label: &str, a: &Accuracies| {
        let _ = writeln!(
            md,
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            a.positions,
            a.value_sign,
            k(a.value_sign_kappa),
            a.value_head_sign,
            k(a.value_head_sign_kappa),
            a.best_move,
            a.best_move_unsettled
        );
    };
    for (e, a) in &s.by_empty {
        row(&mut md, &e.to_string(), a);
    }
    row(&mut md, "all", &s.all);
    let by = |how: Settled| {
        s.judged
            .iter()
            .filter(|j| j.settled_by == Some(how))
            .count()
    };
    let _ = writeln!(
        md,
        "\nBest moves settled by the position's certificate (the player's move is the certified strategy's): {}; by df-pn on the position after the move (no certificate): {}.",
        by(Settled::Certificate),
        by(Settled::Dfpn)
    );
    let _ = writeln!(md, "\nIntervals: {}\n", s.intervals);
    let _ = writeln!(md, "Made by `{}`.", s.command);
    md
}

/// Accuracy by empty cells: value sign (blue) and best move (orange), each with its interval.
fn svg(s: &Score) -> String {
    const W: f64 = 520.0;
    const H: f64 = 300.0;
    const LEFT: f64 = 50.0;
    const BOTTOM: f64 = 40.0;
    let n = s.by_empty.len().max(1) as f64;
    let x = |i: usize, shift: f64| LEFT + (i as f64 + 0.5 + shift) / n * (W - LEFT - 20.0);
    let y = |p: f64| 20.0 + (1.0 - p) * (H - BOTTOM - 20.0);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{LEFT}\" y=\"14\">{}: value sign (blue), best move (orange), 95% intervals</text>\n",
        s.player.name
    );
    for p in [0.0, 0.5, 1.0] {
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" stroke=\"#ccc\"/><text x=\"{2}\" y=\"{0:.1}\" text-anchor=\"end\">{p}</text>",
            y(p),
            W - 20.0,
            LEFT - 4.0
        );
    }
    for (i, (e, a)) in s.by_empty.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{e}</text>",
            x(i, 0.0),
            H - BOTTOM + 16.0
        );
        for (acc, colour, shift) in [
            (&a.value_sign, "#1f77b4", -0.12),
            (&a.best_move, "#ff7f0e", 0.12),
        ] {
            if let Some(r) = &acc.rate {
                let xx = x(i, shift);
                let _ = writeln!(
                    out,
                    "<line x1=\"{xx:.1}\" y1=\"{:.1}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"{colour}\"/><circle cx=\"{xx:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{colour}\"/>",
                    y(r.lo),
                    y(r.hi),
                    y(r.estimate)
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">empty cells</text>",
        (W + LEFT) / 2.0,
        H - 6.0
    );
    out + "</svg>\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    // Fails if a value of the wrong sign, or of 0, counts as a hit, or if a losing mover's
    // position enters the best-move accuracy.
    #[test]
    fn accuracies_count_signs_and_only_the_winning_movers_moves() {
        let j = |mover_wins, value: f64, keeps_win| Judged {
            proof: String::new(),
            empty: 10,
            mover_wins,
            value,
            value_head: Some(value),
            best: String::new(),
            keeps_win,
            settled_by: None,
        };
        let all = [
            j(true, 0.5, Some(true)),
            j(true, -0.5, Some(false)),
            j(false, -0.2, None),
            j(false, 0.0, None),
            j(true, 0.1, None),
        ];
        let a = Accuracies::of(&all.iter().collect::<Vec<_>>());
        assert_eq!((a.value_sign.hits, a.value_sign.of), (3, 5));
        assert_eq!((a.best_move.hits, a.best_move.of), (1, 2));
        assert_eq!(a.best_move_unsettled, 1);
    }
}
