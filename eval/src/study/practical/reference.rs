//! The reference gate: a player's figures are a claim about practical balance only if it
//! beats every anchor (its score's 95% lower bound above one half); otherwise every verdict
//! of the study is `n/a`.

use super::PracticalOptions;
use crate::elo::{elo_estimate, Wdl};
use crate::error::EvalError;
use crate::matches::{run_match, MatchOptions, MatchOutput};
use crate::players::{Brain, Contestant};
use crate::score::Estimate;
use engine::GameConfig;
use serde::{Deserialize, Serialize};

/// The player's results against one anchor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnchorResult {
    pub anchor: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// The player's score with its Wilson 95% interval, and its Elo over the anchor.
    pub score: Estimate,
    pub elo: Estimate,
}

/// Who measured: the player, what it is, and whether it is a reference player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub player: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_checksum: Option<String>,
    /// Training step and samples from the checkpoint's meta (a network only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
    pub visits: Option<u32>,
    pub anchors: Vec<AnchorResult>,
    /// `None` for a reference player, else why it is not one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reference: Option<String>,
}

impl Reference {
    pub fn is_reference(&self) -> bool {
        self.not_reference.is_none()
    }
}

/// Whether `player` is a reference player on `game`: it must beat every anchor with its
/// score's 95% lower bound above one half.
pub fn reference(
    game: &GameConfig,
    player: &Contestant,
    anchors: &[Contestant],
    opts: &PracticalOptions,
) -> Result<Reference, EvalError> {
    let mut results = Vec::new();
    for anchor in anchors {
        let match_opts = MatchOptions {
            games: opts.anchor_games,
            games_in_flight: opts.games_in_flight.max(1),
            seed: opts.seed,
            progress: opts.progress,
            ..MatchOptions::default()
        };
        let s = run_match(game, player, anchor, &match_opts, &MatchOutput::default())?;
        let wdl = Wdl::new(s.wins, s.draws, s.losses);
        let elo = elo_estimate(wdl);
        results.push(AnchorResult {
            anchor: anchor.info.name.clone(),
            wins: s.wins,
            draws: s.draws,
            losses: s.losses,
            score: Estimate::score(s.wins as f64 + 0.5 * s.draws as f64, s.games)
                .expect("an anchor match has games"),
            elo: Estimate {
                estimate: elo.elo,
                lo: elo.lo,
                hi: elo.hi,
            },
        });
    }
    let failed: Vec<String> = results
        .iter()
        .filter(|a| !(a.score.lo > 0.5))
        .map(|a| format!("{} {}", a.anchor, a.score.show()))
        .collect();
    let not_reference = if anchors.is_empty() {
        Some("no anchor was given".to_string())
    } else {
        (!failed.is_empty()).then(|| format!("does not beat {}", failed.join(", ")))
    };
    let meta = match &player.brain {
        Brain::Net { model, .. } => Some(&model.meta),
        _ => None,
    };
    Ok(Reference {
        player: player.info.name.clone(),
        weights_checksum: meta.and_then(|m| m.weights_checksum.clone()),
        step: meta.map(|m| m.step),
        samples: meta.map(|m| m.samples),
        visits: player.info.visits,
        anchors: results,
        not_reference,
    })
}
