//! The reference gate: a player's figures are a claim about practical balance only if it
//! beats every anchor (its score's 95% lower bound above one half); otherwise every verdict
//! of the study is `n/a`. A player's anchor games are kept with the study's pieces
//! ([`crate::study::resume`]), so a study stopped and run again does not play them again.

use super::PracticalOptions;
use crate::elo::{elo_estimate, Wdl};
use crate::error::EvalError;
use crate::matches::{run_match, MatchOptions, MatchOutput};
use crate::players::{Brain, Contestant};
use crate::results::PlayerInfo;
use crate::score::Estimate;
use engine::GameConfig;
use selfplay::search::SearchConfig;
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

/// Everything that decides a player's anchor games: a study run again finds them kept under it.
#[derive(Serialize)]
struct GateKey<'a> {
    game: &'a GameConfig,
    player: Side<'a>,
    anchors: Vec<Side<'a>>,
    anchor_games: usize,
    games_in_flight: usize,
    seed: u64,
}

/// One side of the gate's matches, as far as its games depend on it.
#[derive(Serialize)]
struct Side<'a> {
    info: &'a PlayerInfo,
    weights: Option<&'a str>,
    search: Option<&'a SearchConfig>,
}

impl<'a> Side<'a> {
    fn of(c: &'a Contestant) -> Side<'a> {
        Side {
            info: &c.info,
            weights: c.weights_checksum(),
            search: c.search_config(),
        }
    }
}

/// Whether `player` is a reference player on `game`: it must beat every anchor with its
/// score's 95% lower bound above one half. Its games are kept in `opts.resume`.
pub fn reference(
    game: &GameConfig,
    player: &Contestant,
    anchors: &[Contestant],
    opts: &PracticalOptions,
) -> Result<Reference, EvalError> {
    let games_in_flight = opts.games_in_flight.max(1);
    let key = GateKey {
        game,
        player: Side::of(player),
        anchors: anchors.iter().map(Side::of).collect(),
        anchor_games: opts.anchor_games,
        games_in_flight,
        seed: opts.seed,
    };
    let results = crate::study::resume::remembered(opts.resume.as_deref(), &key, || {
        anchors
            .iter()
            .map(|anchor| against(game, player, anchor, games_in_flight, opts))
            .collect::<Result<Vec<_>, _>>()
    })?;
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

/// `player`'s games against one anchor.
fn against(
    game: &GameConfig,
    player: &Contestant,
    anchor: &Contestant,
    games_in_flight: usize,
    opts: &PracticalOptions,
) -> Result<AnchorResult, EvalError> {
    let match_opts = MatchOptions {
        games: opts.anchor_games,
        games_in_flight,
        seed: opts.seed,
        progress: opts.progress,
        ..MatchOptions::default()
    };
    let s = run_match(game, player, anchor, &match_opts, &MatchOutput::default())?;
    let wdl = Wdl::new(s.wins, s.draws, s.losses);
    let elo = elo_estimate(wdl);
    Ok(AnchorResult {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::practical::tests::{doctor_the_kept_piece, weak_side_3};

    /// A player's anchor games are kept and read back by a study run again, and played again
    /// under other options. Fails if the gate replayed its games (the doctored result would be
    /// gone), or kept them under a key blind to the number of anchor games.
    #[test]
    fn a_players_anchor_games_are_kept_for_a_study_run_again() {
        let game = weak_side_3();
        let base = SearchConfig::default();
        let (player, anchor) = (Contestant::mcts(16, &base), Contestant::mcts(2, &base));
        let dir = std::env::temp_dir().join(format!("eval-gate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = PracticalOptions {
            anchor_games: 2,
            resume: Some(dir.clone()),
            ..PracticalOptions::default()
        };
        let first = reference(&game, &player, std::slice::from_ref(&anchor), &opts).unwrap();
        assert_eq!(first.anchors[0].wins + first.anchors[0].losses, 2);
        // Doctor the kept piece: a second run must read this back instead of playing.
        doctor_the_kept_piece(&dir, |anchors| anchors[0]["wins"] = 99.into());
        let again = reference(&game, &player, std::slice::from_ref(&anchor), &opts).unwrap();
        assert_eq!(
            again.anchors[0].wins, 99,
            "the anchor games were played again"
        );
        let more = PracticalOptions {
            anchor_games: 4,
            ..opts
        };
        let other = reference(&game, &player, std::slice::from_ref(&anchor), &more).unwrap();
        let a = &other.anchors[0];
        assert_eq!(
            a.wins + a.draws + a.losses,
            4,
            "other options read the kept games"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
