//! Players: the spec strings of the command line and configs, and the loaded contestants.
//!
//! - `random`: a uniformly random legal action.
//! - `mcts:N`: plain MCTS, no network: the PUCT [`selfplay::search::Search`] with uniform priors and, as the
//!   value of a leaf, the result of one random playout from it ([`RolloutEvaluator`]); N
//!   playouts per decision, no noise, the most visited action is played.
//! - a checkpoint directory with an optional visit count, `runs/x/models/000120@64`;
//!   `runs/x/models/best` follows the `best` pointer file to the directory it names. Without
//!   `@N` the visits come from the config. The network scores leaves ([`net::model::NetEvaluator`]), no
//!   noise, temperature 0 (the most visited action).

use crate::error::EvalError;
use crate::results::{PlayerInfo, PlayerKind};
use burn::tensor::Device;
use engine::playout::random_playout_count;
use engine::{Action, Game, GameConfig};
use net::model::Model;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use run::RunDirError;
use selfplay::search::{Evaluation, Evaluator, SearchConfig};
use std::path::{Path, PathBuf};

/// A player as written on a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    Random,
    Mcts { playouts: u32 },
    Checkpoint { path: PathBuf, visits: Option<u32> },
}

fn bad(spec: &str, why: impl Into<String>) -> EvalError {
    EvalError::BadSpec {
        spec: spec.to_string(),
        why: why.into(),
    }
}

impl PlayerSpec {
    /// Parse a spec; the error names it and says what is expected. Checkpoint paths are
    /// checked when loaded.
    pub fn parse(spec: &str) -> Result<PlayerSpec, EvalError> {
        let s = spec.trim();
        if s.is_empty() {
            return Err(bad(
                spec,
                "empty player (expected random, mcts:N or a checkpoint directory)",
            ));
        }
        if s == "random" {
            return Ok(PlayerSpec::Random);
        }
        if s == "mcts" || s.starts_with("mcts:") {
            let n = s.strip_prefix("mcts:").unwrap_or("");
            return match n.parse::<u32>() {
                Ok(p) if p >= 1 => Ok(PlayerSpec::Mcts { playouts: p }),
                _ => Err(bad(
                    spec,
                    "expected mcts:N with N a positive number of playouts, e.g. mcts:200",
                )),
            };
        }
        if s.starts_with("random:") {
            return Err(bad(spec, "random takes no parameter"));
        }
        match s.rsplit_once('@') {
            Some((path, v)) => match v.parse::<u32>() {
                Ok(n) if n >= 1 && !path.is_empty() => Ok(PlayerSpec::Checkpoint { path: path.into(), visits: Some(n) }),
                _ => Err(bad(spec, "expected CHECKPOINT@VISITS with VISITS a positive number, e.g. runs/x/models/000120@64")),
            },
            None => Ok(PlayerSpec::Checkpoint { path: s.into(), visits: None }),
        }
    }
}

/// The checkpoint directory a path names ([`run::resolve_checkpoint`]), with
/// the error naming the spec.
pub fn resolve_checkpoint(path: &Path) -> Result<PathBuf, EvalError> {
    run::resolve_checkpoint(path).map_err(|e| match e {
        RunDirError::Invalid { why, .. } => bad(&path.display().to_string(), why),
        other => other.into(),
    })
}

/// How a contestant chooses its actions (one per player: their size does not matter).
#[allow(clippy::large_enum_variant)]
pub enum Brain {
    Random,
    /// Plain MCTS with random rollouts.
    Mcts {
        search: SearchConfig,
    },
    /// PUCT with a network (in inference mode).
    Net {
        model: Model,
        search: SearchConfig,
    },
}

/// A loaded player.
pub struct Contestant {
    pub info: PlayerInfo,
    pub brain: Brain,
}

impl Contestant {
    pub fn random() -> Contestant {
        Contestant {
            info: PlayerInfo {
                name: "random".into(),
                kind: PlayerKind::Random,
                spec: "random".into(),
                step: None,
                visits: None,
            },
            brain: Brain::Random,
        }
    }

    /// Plain MCTS with `playouts` rollouts per decision; exploration constants from `base`.
    pub fn mcts(playouts: u32, base: &SearchConfig) -> Contestant {
        let search = SearchConfig {
            cache_size: 0,
            batch: base.batch.clamp(1, 8),
            ..base.puct(playouts)
        };
        let name = format!("mcts:{playouts}");
        Contestant {
            info: PlayerInfo {
                name: name.clone(),
                kind: PlayerKind::Mcts,
                spec: name,
                step: None,
                visits: Some(playouts),
            },
            brain: Brain::Mcts { search },
        }
    }

    /// A network already in memory (the train loop's candidate): `name` is its checkpoint
    /// directory name; the model is moved to inference mode. It searches with the root `base`
    /// names; in a match a Gumbel root plays without noise ([`Search::prepare_root`]).
    ///
    /// [`Search::prepare_root`]: selfplay::search::Search::prepare_root
    pub fn network(model: &Model, name: &str, visits: u32, base: &SearchConfig) -> Contestant {
        let search = SearchConfig {
            visits,
            ..base.clone()
        };
        let name = format!("{name}@{visits}");
        let info = PlayerInfo {
            name: name.clone(),
            kind: PlayerKind::Checkpoint,
            spec: name,
            step: Some(model.meta.step),
            visits: Some(visits),
        };
        Contestant {
            info,
            brain: Brain::Net {
                model: model.for_inference(),
                search,
            },
        }
    }

    /// Load the player a spec names for `game`. Checkpoints without `@N` use
    /// `default_visits`; their game must be `game`.
    pub fn load(
        spec_text: &str,
        game: &GameConfig,
        base: &SearchConfig,
        default_visits: u32,
        device: &Device,
    ) -> Result<Contestant, EvalError> {
        Contestant::load_for(spec_text, Some(game), base, default_visits, device)
    }

    /// [`Contestant::load`], with a checkpoint checked against `game` when one is given and
    /// against its own game otherwise (a study over several sizes or balancing methods checks
    /// each game as it plays it).
    pub fn load_for(
        spec_text: &str,
        game: Option<&GameConfig>,
        base: &SearchConfig,
        default_visits: u32,
        device: &Device,
    ) -> Result<Contestant, EvalError> {
        let mut c = match PlayerSpec::parse(spec_text)? {
            PlayerSpec::Random => Contestant::random(),
            PlayerSpec::Mcts { playouts } => Contestant::mcts(playouts, base),
            PlayerSpec::Checkpoint { path, visits } => {
                let dir = resolve_checkpoint(&path).map_err(|e| match e {
                    EvalError::BadSpec { why, .. } => bad(spec_text.trim(), why),
                    other => other,
                })?;
                let visits = visits.unwrap_or(default_visits).max(1);
                Contestant::checkpoint(&dir, game, base, visits, device)?
            }
        };
        c.info.spec = spec_text.trim().to_string();
        Ok(c)
    }

    /// The network of checkpoint directory `dir` at `visits` visits, named as results name it
    /// ([`checkpoint_name`]); it must play `game` (its own game when none is given) with
    /// finite outputs.
    pub fn checkpoint(
        dir: &Path,
        game: Option<&GameConfig>,
        base: &SearchConfig,
        visits: u32,
        device: &Device,
    ) -> Result<Contestant, EvalError> {
        let model = Model::load(dir, device)?;
        let own = model.meta.game.clone();
        let game = game.unwrap_or(&own);
        model.check_plays(game, dir)?;
        model.check_finite(game, dir)?;
        Ok(Contestant::network(&model, &dir_name(dir), visits, base))
    }

    /// Whether this player can play `game`: a network only the games it was trained for
    /// ([`net::model::ModelMeta::plays`]), a searcher any game.
    pub fn plays(&self, game: &GameConfig) -> Result<(), String> {
        match &self.brain {
            Brain::Net { model, .. } => model.meta.plays(game),
            Brain::Random | Brain::Mcts { .. } => Ok(()),
        }
    }

    /// Visits per decision of a searching player.
    /// The checksum of a network's weights (a network only): what a kept result of this
    /// player is keyed on, beside its spec.
    pub fn weights_checksum(&self) -> Option<&str> {
        match &self.brain {
            Brain::Net { model, .. } => model.meta.weights_checksum.as_deref(),
            _ => None,
        }
    }

    pub fn search_config(&self) -> Option<&SearchConfig> {
        match &self.brain {
            Brain::Random => None,
            Brain::Mcts { search } | Brain::Net { search, .. } => Some(search),
        }
    }

    /// The search of this player in a match. A network's Gumbel root considers
    /// `play_considered` actions and takes one leaf at a time: the match batches the network
    /// over its games in flight, and leaves batched under virtual loss only weakened the
    /// search (the same network at 64 visits scored 93.0% against mcts:1000 one leaf at a time
    /// and 90.0% eight at a time, 200 games each). PUCT keeps its batch: one leaf at a time
    /// measured within noise of it (86.5% and 84.5%), and it piles a small budget's visits
    /// onto one child, which leaves nothing to sample from in a study's sampled plies. Rollouts
    /// keep their batch too, which runs them in parallel.
    pub fn match_search(&self) -> Option<SearchConfig> {
        match &self.brain {
            Brain::Random => None,
            Brain::Mcts { search } => Some(search.clone()),
            Brain::Net { search, .. } if search.gumbel => Some(SearchConfig {
                batch: 1,
                gumbel_considered: search.play_considered,
                ..search.clone()
            }),
            Brain::Net { search, .. } => Some(search.clone()),
        }
    }

    /// Whether the player's match move is a function of the position: a network (its match
    /// search has no noise), where random play and rollouts draw.
    pub fn deterministic(&self) -> bool {
        matches!(self.brain, Brain::Net { .. })
    }
}

/// Uniform priors and, as value, the result of one uniformly random playout from the
/// position (for the player to move: +1 win, 0 draw, -1 loss). The playouts of a batch run in
/// parallel (rayon), each with its own generator seeded from this one, so results do not
/// depend on the thread count.
pub struct RolloutEvaluator {
    rng: ChaCha8Rng,
    seeds: Vec<u64>,
}

impl RolloutEvaluator {
    pub fn new(seed: u64) -> Self {
        RolloutEvaluator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            seeds: Vec::new(),
        }
    }
}

impl<G: Game> Evaluator<G> for RolloutEvaluator {
    fn evaluate(&mut self, positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        out.clear();
        self.seeds.clear();
        for _ in positions {
            self.seeds.push(self.rng.gen());
        }
        let values: Vec<f32> = positions
            .par_iter()
            .zip(self.seeds.par_iter())
            .with_min_len(4)
            .map(|(g, &seed)| {
                let mut g = g.clone();
                let me = g.to_move();
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut buf = Vec::new();
                random_playout_count(&mut g, &mut rng, &mut buf);
                g.outcome().map(|o| o.value_for(me)).unwrap_or(0.0)
            })
            .collect();
        for (l, v) in legal.iter().zip(values) {
            let p = 1.0 / l.len().max(1) as f32;
            out.push(Evaluation {
                priors: vec![p; l.len()],
                value: v,
            });
        }
    }
}

/// How results name the network of checkpoint directory `dir` at `visits` visits:
/// `000120@64`. A role builds its match's key from it before loading any network.
pub fn checkpoint_name(dir: &Path, visits: u32) -> String {
    format!("{}@{visits}", dir_name(dir))
}

/// A checkpoint directory's name (`000120`), or its whole path where it has none.
fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use run::RunDir;

    #[test]
    fn parses_specs() {
        assert_eq!(PlayerSpec::parse("random").unwrap(), PlayerSpec::Random);
        assert_eq!(
            PlayerSpec::parse("mcts:200").unwrap(),
            PlayerSpec::Mcts { playouts: 200 }
        );
        assert_eq!(
            PlayerSpec::parse("runs/x/models/000120@64").unwrap(),
            PlayerSpec::Checkpoint {
                path: "runs/x/models/000120".into(),
                visits: Some(64)
            }
        );
        assert_eq!(
            PlayerSpec::parse("runs/x/models/best").unwrap(),
            PlayerSpec::Checkpoint {
                path: "runs/x/models/best".into(),
                visits: None
            }
        );
        for s in [
            "mcts:0",
            "mcts:",
            "mcts:abc",
            "mcts",
            "runs/x@",
            "runs/x@-3",
            "@5",
            "",
            "random:3",
        ] {
            let e = PlayerSpec::parse(s).unwrap_err().to_string();
            assert!(e.contains(&format!("`{s}`")), "{e}");
        }
    }

    #[test]
    fn missing_checkpoint_names_the_spec() {
        let g: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":4}}"#).unwrap();
        let dev = net::model::parse_device("cpu").unwrap();
        let e = Contestant::load("no/such/dir@8", &g, &SearchConfig::default(), 8, &dev)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("no/such/dir@8") && e.contains("no such checkpoint"),
            "{e}"
        );
    }

    #[test]
    fn best_pointer_is_followed() {
        let dir = std::env::temp_dir().join(format!("eval-best-{}", std::process::id()));
        let run = RunDir::new(&dir);
        let ckpt = run.checkpoint(120);
        std::fs::create_dir_all(&ckpt).unwrap();
        std::fs::write(ckpt.join(net::model::WEIGHTS_FILE), b"w").unwrap();
        std::fs::write(ckpt.join(net::model::META_FILE), b"{}").unwrap();
        run.set_best(&ckpt).unwrap();
        assert_eq!(resolve_checkpoint(&run.best_pointer()).unwrap(), ckpt);
        assert_eq!(
            resolve_checkpoint(&ckpt.join(net::model::WEIGHTS_FILE)).unwrap(),
            ckpt
        );
        let e = resolve_checkpoint(&ckpt.join(net::model::META_FILE))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a file"), "{e}");
        std::fs::write(run.best_pointer(), "000999\n").unwrap();
        let e = resolve_checkpoint(&run.best_pointer())
            .unwrap_err()
            .to_string();
        assert!(e.contains("000999"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rollouts_value_finished_positions_exactly() {
        // A position one random move from the end is valued by the rules; every value is a
        // game result and priors are uniform.
        let g: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3}}"#).unwrap();
        let start = g.start().unwrap();
        let mut legal = Vec::new();
        start.legal_actions(&mut legal);
        let mut ev = RolloutEvaluator::new(1);
        let mut out = Vec::new();
        ev.evaluate(&vec![start.clone(); 16], &vec![legal.clone(); 16], &mut out);
        assert_eq!(out.len(), 16);
        for e in &out {
            assert!([-1.0, 0.0, 1.0].contains(&e.value));
            assert_eq!(e.priors.len(), legal.len());
            assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        // Different playouts in one batch (not one seed for all).
        assert!(out.iter().any(|e| e.value != out[0].value));
    }
}
