//! Gating: the candidate becomes the best model when the SPRT accepts an Elo gain.
//!
//! Games are played in batches of `gate_batch` (whole opening pairs, colours swapped within a
//! pair); after each batch the test ([`crate::sprt`]) looks at all results so far. It stops
//! when the test accepts H1 (promote) or H0 (keep the best), or when `max_games` games are
//! played: then the candidate is promoted if its score is above 50% (the sign of the
//! observed Elo difference), and the result says `decided_by = "max_games"`.
//!
//! The gate's summary line (kind `gate`, A = candidate, B = best) is appended to
//! `RUN/eval/matches.jsonl`, so every gate enters the ratings.

use crate::config::EvalConfig;
use crate::error::EvalError;
use crate::matches::{play_games, summarize, write_games, MatchOutput};
use crate::players::Contestant;
use crate::results::{append_summary, MatchSummary};
use crate::sprt::{Decision, SprtStatus};
use engine::GameConfig;
use serde::{Deserialize, Serialize};

/// The outcome of a gate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub promoted: bool,
    /// `sprt` or `max_games`.
    pub decided_by: String,
    pub status: SprtStatus,
    /// Candidate's results (A) against the best (B).
    pub summary: MatchSummary,
}

/// Run the gate of `candidate` against `best` and append its summary where `out` says.
pub fn gate(
    game: &GameConfig,
    candidate: &Contestant,
    best: &Contestant,
    cfg: &EvalConfig,
    seed: u64,
    progress: bool,
    out: &MatchOutput,
) -> Result<GateResult, EvalError> {
    cfg.validate().map_err(EvalError::Config)?;
    crate::matches::check_output(out)?;
    let sprt = cfg.sprt();
    let opts = cfg.match_options(cfg.max_games, seed, progress);
    let bar = run::progress::bar(cfg.max_games as u64, "games", progress).with_message(format!(
        "gate {} vs {}",
        candidate.info.name, best.info.name
    ));
    let mut results = Vec::new();
    let mut status;
    loop {
        let count = cfg.gate_batch.min(cfg.max_games - results.len());
        let batch = play_games(
            game,
            candidate,
            best,
            results.len(),
            count,
            &opts,
            Some(&bar),
        )?;
        results.extend(batch);
        status = sprt.status(crate::matches::tally(&results));
        bar.set_message(format!(
            "gate {} vs {} LLR {:.2} [{:.2}, {:.2}]",
            candidate.info.name, best.info.name, status.llr, status.lower, status.upper
        ));
        if status.decision != Decision::Continue || results.len() >= cfg.max_games {
            break;
        }
    }
    bar.finish_and_clear();
    let (promoted, decided_by) = match status.decision {
        Decision::AcceptH1 => (true, "sprt"),
        Decision::AcceptH0 => (false, "sprt"),
        Decision::Continue => (crate::matches::tally(&results).score() > 0.5, "max_games"),
    };
    if let Some(p) = &out.games_file {
        write_games(p, &results)?;
    }
    let mut summary = summarize(
        "gate",
        game,
        candidate,
        best,
        &results,
        &opts,
        out.games_file.as_deref(),
    );
    summary.sprt = Some(sprt);
    summary.sprt_status = Some(status);
    summary.promoted = Some(promoted);
    if let Some(p) = &out.summary_file {
        append_summary(p, &summary)?;
    }
    Ok(GateResult {
        promoted,
        decided_by: decided_by.into(),
        status,
        summary,
    })
}
