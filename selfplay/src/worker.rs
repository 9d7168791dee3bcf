//! Self-play: many games in flight, their leaves evaluated together, samples and records out.

use crate::search::{Evaluator, LeafBatch, Search, SearchConfig, SearchError};
use crate::shard::Sample;
use engine::record::{GameRecord, MoveInfo, RecordResult};
use engine::testing::encode_owned;
use engine::{Action, AnyGame, EndReason, Game, GameConfig, Player};
use net::amx::Precision;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Self-play parameters (the `[selfplay]` table of a config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlayConfig {
    /// Games played at once by one worker; their leaves share each network call.
    pub games_in_flight: usize,
    /// Sampling temperature for the first `temperature_plies` decisions, then `final_temperature`.
    pub temperature: f32,
    pub temperature_plies: u32,
    pub final_temperature: f32,
    /// Playout cap randomization (KataGo): a share of decisions gets the full visit count and
    /// becomes a policy target; the others are searched with `fast_visits` and are not.
    pub full_search_share: f32,
    pub fast_visits: u32,
    /// Resign when the search values the position below this for the player to move.
    pub resign_threshold: f32,
    /// Share of games that never resign, to measure how often resigning would have been wrong.
    pub resign_playout_share: f32,
    /// Self-play threads, each with its own evaluator (0: one per core).
    pub threads: usize,
    /// `[lo, hi]`: each game draws its komi uniformly from this range (games with komi only),
    /// so one network learns to play every komi of it (balance studies need that). Absent:
    /// every game has the config's komi.
    pub komi_range: Option<[u32; 2]>,
    /// Board sizes: each game draws one uniformly from this list, so one network learns every
    /// size of it (Lifeline, Square Lifeline, Leblin). Absent: every game has the config's size.
    pub sizes: Option<Vec<usize>>,
    /// Share of games in which White declines the pie's swap: once self-play learns to swap
    /// every good opening, the positions after a declined swap stop occurring, yet they are
    /// what a balance study values an opening by. The swap decision of such a game leaves no
    /// sample (its targets would teach that the swap is bad).
    pub decline_swap_share: f32,
    /// Share of games in which every decision after Black's first turn (White's swap decision
    /// included) is the search's choice, without noise or temperature; the first turn is
    /// sampled as in every game. Sampled continuations teach the value head the win rate of
    /// noisy play after an opening, where a balance study asks what the first player can
    /// achieve with it. Not shown to help yet: on side 3 one run at 0.5 put its value head's
    /// fair komi at 2.92 where the same config without it reached 3.45 (the solver: between 3
    /// and 4; docs/balance/README.md).
    pub greedy_share: f32,
    /// Share of games whose first turn (each of Black's actions before White's first decision)
    /// is drawn uniformly among the legal actions instead of searched. Self-play soon stops
    /// opening with the stones it has learnt are bad, so White never learns to refute them,
    /// yet a balance study asks White to, class by class (the side-3 strong pie's keep-classes,
    /// docs/balance/README.md). Those plies are recorded with 0 visits and leave no sample;
    /// the search starts afresh from the position White faces. KataGo and lc0 start a share of
    /// their games from random or book openings for the same reason.
    pub random_opening_share: f32,
    /// What self-play's network computes its convolutions in: `f32`, or `bf16` on the tile
    /// unit of CPUs that have one (Intel AMX; f32 elsewhere, and the loop's machine line names
    /// the backend that ran). Only self-play: gates, ratings and studies stay in f32, the same
    /// on every CPU.
    pub precision: Precision,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            games_in_flight: 16,
            temperature: 1.0,
            temperature_plies: 8,
            final_temperature: 0.1,
            full_search_share: 0.25,
            fast_visits: 32,
            resign_threshold: -0.95,
            resign_playout_share: 0.1,
            threads: 0,
            komi_range: None,
            sizes: None,
            decline_swap_share: 0.0,
            greedy_share: 0.0,
            random_opening_share: 0.0,
            precision: Precision::F32,
        }
    }
}

impl SelfPlayConfig {
    /// Check every field; the error names the field. Every float must be finite; values are in
    /// [-1, 1], so a `resign_threshold` of -1 never resigns.
    pub fn validate(&self) -> Result<(), String> {
        use crate::validate::{check_float, FloatRange::*};
        if self.games_in_flight == 0 {
            return Err("selfplay.games_in_flight must be at least 1".into());
        }
        let share = Closed(0.0, 1.0);
        for (name, v, range) in [
            ("temperature", self.temperature, NonNegative),
            ("final_temperature", self.final_temperature, NonNegative),
            ("full_search_share", self.full_search_share, share),
            ("resign_threshold", self.resign_threshold, Closed(-1.0, 1.0)),
            ("resign_playout_share", self.resign_playout_share, share),
            ("decline_swap_share", self.decline_swap_share, share),
            ("greedy_share", self.greedy_share, share),
            ("random_opening_share", self.random_opening_share, share),
        ] {
            check_float(&format!("selfplay.{name}"), v, range)?;
        }
        if self.fast_visits == 0 {
            return Err("selfplay.fast_visits must be at least 1".into());
        }
        Ok(())
    }

    /// `komi_range` must be ordered and `sizes` non-empty, and every komi and size of them
    /// playable by `game`.
    pub fn check_ranges(&self, game: &GameConfig) -> Result<(), String> {
        if let Some([lo, hi]) = self.komi_range {
            if lo > hi {
                return Err(format!(
                    "selfplay.komi_range [{lo}, {hi}] must be [low, high]"
                ));
            }
            for k in [lo, hi] {
                game.with_komi(k)
                    .map_err(|e| format!("selfplay.komi_range: {e}"))?;
            }
        }
        if self.sizes.as_ref().is_some_and(Vec::is_empty) {
            return Err("selfplay.sizes is empty (leave it out to play the config's size)".into());
        }
        self.sized_games(game).map(|_| ())
    }

    /// `game` at each size of `sizes`, or `game` alone; an error names a size the game cannot
    /// have.
    pub fn sized_games(&self, game: &GameConfig) -> Result<Vec<GameConfig>, String> {
        match &self.sizes {
            Some(sizes) => sizes
                .iter()
                .map(|&s| {
                    game.with_size(s)
                        .map_err(|e| format!("selfplay.sizes: {e}"))
                })
                .collect(),
            None => Ok(vec![game.clone()]),
        }
    }

    /// The games self-play starts from: one per size of `sizes` and komi of `komi_range`, or
    /// `game` alone.
    pub fn starts(&self, game: &GameConfig) -> Vec<(GameConfig, AnyGame)> {
        let sized = self.sized_games(game).expect("checked sizes");
        let configs: Vec<GameConfig> = match self.komi_range {
            Some([lo, hi]) => sized
                .iter()
                .flat_map(|g| (lo..=hi).map(|k| g.with_komi(k).expect("checked komi range")))
                .collect(),
            None => sized,
        };
        configs
            .into_iter()
            .map(|g| {
                let start = g.start().expect("validated game config");
                (g, start)
            })
            .collect()
    }
}

/// A finished self-play game.
#[derive(Debug)]
pub struct FinishedGame {
    pub record: GameRecord,
    pub samples: Vec<Sample>,
    /// The player who resigned, if one did.
    pub resigned: Option<Player>,
    /// For games played out past a resignation the rules would have allowed: whether that
    /// resignation would have been wrong (the would-be resigner did not lose).
    pub false_resignation: Option<bool>,
}

struct Pending {
    inputs: Vec<f32>,
    legal: Vec<u8>,
    policy: Option<Vec<f32>>,
    to_move: Player,
    komi: f32,
}

struct Slot {
    search: Search<AnyGame>,
    /// This game's config (its size and komi may be drawn from `sizes` and `komi_range`) and
    /// start.
    config: GameConfig,
    start: AnyGame,
    actions: Vec<Action>,
    infos: Vec<MoveInfo>,
    pending: Vec<Pending>,
    full: bool,
    may_resign: bool,
    would_resign: Option<Player>,
    /// White declines the swap in this game (`decline_swap_share`).
    declines_swap: bool,
    /// After Black's first turn this game is played without noise or temperature
    /// (`greedy_share`); `white_moved` says when that turn is over.
    greedy: bool,
    white_moved: bool,
}

impl Slot {
    /// Whether this decision is played greedily: a greedy game once Black's first turn is
    /// over (from White's first decision on).
    fn greedy_now(&self) -> bool {
        self.greedy && (self.white_moved || self.search.root_game().to_move() == Player::White)
    }
}

/// Plays `games` games of `config` and calls `done` for each as it finishes.
pub struct SelfPlay<'a> {
    pub game: &'a GameConfig,
    pub search: &'a SearchConfig,
    pub selfplay: &'a SelfPlayConfig,
    /// When to abandon the games in flight (the finished ones are kept).
    pub stop: &'a run::Stop,
}

impl SelfPlay<'_> {
    pub fn run<E: Evaluator<AnyGame>, R: Rng>(
        &self,
        evaluator: &mut E,
        games: usize,
        rng: &mut R,
        mut done: impl FnMut(FinishedGame),
    ) -> Result<(), SearchError> {
        let starts = self.selfplay.starts(self.game);
        let mut slots: Vec<Option<Slot>> = Vec::new();
        let mut started = 0;
        let mut batch = LeafBatch::new();
        loop {
            // Fill free slots with new games.
            while started < games
                && slots.iter().filter(|s| s.is_some()).count() < self.selfplay.games_in_flight
            {
                // A draw only when there is a choice, so a config without a komi range plays
                // the games it always played for a seed.
                let pick = if starts.len() > 1 {
                    rng.gen_range(0..starts.len())
                } else {
                    0
                };
                let (config, start) = &starts[pick];
                let slot = self.new_slot(config, start, rng);
                match slots.iter_mut().find(|s| s.is_none()) {
                    Some(free) => *free = Some(slot),
                    None => slots.push(Some(slot)),
                }
                started += 1;
            }
            // A stop request abandons the games in flight (the finished ones are kept).
            if slots.iter().all(|s| s.is_none()) || self.stop.requested() {
                return Ok(());
            }
            // Leaves of every game, one evaluation call.
            let searches = slots.iter_mut().flatten().map(|slot| {
                let want = self
                    .target_visits(slot)
                    .saturating_sub(slot.search.root_visits())
                    .clamp(1, self.search.batch as u32);
                (&mut slot.search, want as usize)
            });
            batch.round(searches, evaluator)?;
            // Move in every game whose search is complete.
            for entry in slots.iter_mut() {
                let Some(slot) = entry.as_mut() else { continue };
                if slot.search.root_visits() > 0 {
                    if slot.declines_swap {
                        slot.search.exclude_at_root(Action::Swap);
                    }
                    // Once per decision (until the search advances). Dirichlet noise only on
                    // full searches (a fast one samples its move by temperature); the Gumbel
                    // noise on every one, because it is what samples the Gumbel root's move.
                    let noise = (slot.full || self.search.gumbel) && !slot.greedy_now();
                    slot.search.prepare_root(noise, rng);
                }
                if slot.search.root_visits() < self.target_visits(slot) {
                    continue;
                }
                if let Some(finished) = self.make_move(slot, rng) {
                    done(finished);
                    *entry = None;
                }
            }
        }
    }

    fn new_slot<R: Rng>(&self, config: &GameConfig, start: &AnyGame, rng: &mut R) -> Slot {
        let mut slot = Slot {
            search: Search::new(self.search.clone(), start.clone()),
            config: config.clone(),
            start: start.clone(),
            actions: Vec::new(),
            infos: Vec::new(),
            pending: Vec::new(),
            full: true,
            may_resign: rng.gen::<f32>() >= self.selfplay.resign_playout_share,
            would_resign: None,
            // Drawn only when asked for, so a config without it keeps its random stream.
            declines_swap: self.selfplay.decline_swap_share > 0.0
                && rng.gen::<f32>() < self.selfplay.decline_swap_share,
            greedy: self.selfplay.greedy_share > 0.0
                && rng.gen::<f32>() < self.selfplay.greedy_share,
            white_moved: false,
        };
        slot.full = rng.gen::<f32>() < self.selfplay.full_search_share;
        // Drawn only when asked for, so a config without it keeps its random stream.
        if self.selfplay.random_opening_share > 0.0
            && rng.gen::<f32>() < self.selfplay.random_opening_share
        {
            self.play_random_first_turn(&mut slot, rng);
        }
        slot
    }

    /// Black's first turn drawn uniformly among the legal actions, unsearched
    /// (`random_opening_share`): recorded with 0 visits and no sample, the search started
    /// afresh from the position White faces.
    fn play_random_first_turn<R: Rng>(&self, slot: &mut Slot, rng: &mut R) {
        let mut game = slot.start.clone();
        let mut legal = Vec::new();
        while game.to_move() == Player::Black && game.outcome().is_none() {
            legal.clear();
            game.legal_actions(&mut legal);
            if legal.is_empty() {
                break;
            }
            let action = legal[rng.gen_range(0..legal.len())];
            game.apply(action);
            slot.actions.push(action);
            slot.infos.push(MoveInfo {
                value: 0.0,
                visits: 0,
            });
        }
        slot.search = Search::new(self.search.clone(), game);
    }

    fn target_visits(&self, slot: &Slot) -> u32 {
        if slot.full {
            self.search.visits
        } else {
            self.selfplay.fast_visits.min(self.search.visits)
        }
    }

    fn make_move<R: Rng>(&self, slot: &mut Slot, rng: &mut R) -> Option<FinishedGame> {
        let result = slot.search.result();
        let g = slot.search.root_game().clone();
        let ply = g.ply();
        let me = g.to_move();
        // The sample of this position (its policy target only after a full search).
        let mut legal = Vec::new();
        g.legal_actions(&mut legal);
        let swap_declined = slot.declines_swap && legal.contains(&Action::Swap);
        let mut mask = vec![0u8; g.policy_len()];
        for &a in &legal {
            mask[g.policy_index(a)] = 1;
        }
        let policy = slot.full.then(|| {
            let mut p = vec![0f32; g.policy_len()];
            for (a, share) in result.policy() {
                p[g.policy_index(a)] = share;
            }
            p
        });
        if !swap_declined {
            slot.pending.push(Pending {
                inputs: encode_owned(&g).into_raw_vec_and_offset().0,
                legal: mask,
                policy,
                to_move: me,
                komi: g.komi(),
            });
        }
        slot.infos.push(MoveInfo {
            value: result.value,
            visits: result.root_visits,
        });
        // Resignation.
        if result.value < self.selfplay.resign_threshold && slot.would_resign.is_none() {
            slot.would_resign = Some(me);
            if slot.may_resign {
                return Some(self.finish(slot, None, Some(me)));
            }
        }
        let t = if ply < self.selfplay.temperature_plies {
            self.selfplay.temperature
        } else {
            self.selfplay.final_temperature
        };
        let action = if slot.greedy_now() {
            result.best()
        } else {
            result
                .gumbel_action
                .unwrap_or_else(|| result.sample(t, rng))
        };
        slot.white_moved |= me == Player::White;
        slot.actions.push(action);
        slot.search.advance(action);
        if slot.greedy && !slot.white_moved && slot.search.root_game().to_move() == Player::White {
            // The greedy continuation starts from a fresh tree: the subtree kept from Black's
            // noisy first turn would make its choices depend on that noise.
            let after = slot.search.root_game().clone();
            slot.search = Search::new(self.search.clone(), after);
        }
        if slot.search.root_game().outcome().is_some() {
            let end = slot.search.root_game().clone();
            return Some(self.finish(slot, Some(end), None));
        }
        slot.full = rng.gen::<f32>() < self.selfplay.full_search_share;
        None
    }

    fn finish(
        &self,
        slot: &mut Slot,
        end: Option<AnyGame>,
        resigned: Option<Player>,
    ) -> FinishedGame {
        let end_game = end.unwrap_or_else(|| slot.search.root_game().clone());
        let winner = match resigned {
            Some(p) => Some(p.opponent()),
            None => end_game.outcome().and_then(|o| o.winner),
        };
        let reason = match resigned {
            Some(_) => EndReason::Resignation,
            None => end_game
                .outcome()
                .map(|o| o.reason)
                .unwrap_or(EndReason::TurnCap),
        };
        let b = end_game.board();
        let owners: Vec<Option<Player>> = (0..b.grid_len())
            .map(|i| {
                b.cell_of_grid_index(i)
                    .and_then(|c| end_game.final_owner(c))
            })
            .collect();
        let samples = slot
            .pending
            .drain(..)
            .map(|p| {
                let value = match winner {
                    None => [0.0, 1.0, 0.0],
                    Some(w) if w == p.to_move => [1.0, 0.0, 0.0],
                    Some(_) => [0.0, 0.0, 1.0],
                };
                let ownership = owners
                    .iter()
                    .map(|o| match o {
                        None => 0.0,
                        Some(q) if *q == p.to_move => 1.0,
                        Some(_) => -1.0,
                    })
                    .collect();
                let policy_weight = if p.policy.is_some() { 1.0 } else { 0.0 };
                let policy = p.policy.unwrap_or_else(|| vec![0.0; p.legal.len()]);
                Sample {
                    inputs: p.inputs,
                    legal: p.legal,
                    policy,
                    policy_weight,
                    value,
                    ownership,
                    komi: p.komi,
                }
            })
            .collect();
        let mut record =
            GameRecord::new(slot.config.clone(), &slot.start, &slot.actions, &end_game);
        record.result = Some(RecordResult { winner, reason });
        record.moves = std::mem::take(&mut slot.infos);
        let false_resignation = match (resigned, slot.would_resign) {
            (None, Some(p)) => Some(winner != Some(p.opponent())),
            _ => None,
        };
        if let Some(p) = slot.would_resign {
            record.meta.insert(
                "would_resign".into(),
                serde_json::Value::String(p.to_string()),
            );
        }
        FinishedGame {
            record,
            samples,
            resigned,
            false_resignation,
        }
    }
}
