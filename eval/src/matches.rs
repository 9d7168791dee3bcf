//! Matches: N games between two players, colours alternated and openings paired, many games
//! in flight with each side's leaves evaluated together.
//!
//! Game `i` belongs to opening pair `i / 2`: the opening is `opening_plies` uniformly random
//! plies from the start, drawn from a generator seeded by (seed, pair), and player A has Black
//! in the even game of the pair and White in the odd one. So every opening is played once with
//! each colour. A match is reproducible from its seed and options, and the opening and
//! colours of a game depend only on the seed and its index (so a gate's batches get the same
//! openings as one long match); the rollouts of `mcts:N` also depend on how games share
//! evaluation batches, so a different `games_in_flight` plays different games.
//!
//! At every step each side gathers leaves from all the games where it is to move, makes one
//! evaluator call for all of them, and hands the answers back (as the self-play worker does);
//! games where the decision is trivial (one legal action, or the random player) move at once.

use crate::elo::{elo_estimate, Wdl};
use crate::error::EvalError;
use crate::players::{Brain, Contestant, RolloutEvaluator};
use crate::results::{append_summary, now_secs, MatchSummary};
use engine::record::{write_records_to, GameRecord};
use engine::{Action, AnyGame, Game, GameConfig, Player};
use indicatif::ProgressBar;
use net::model::NetEvaluator;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use selfplay::search::{Evaluation, Evaluator, LeafBatch, Search};
use std::path::{Path, PathBuf};

/// How a match is played.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchOptions {
    pub games: usize,
    /// Random plies before each pair of games (0: every game from the start).
    pub opening_plies: u32,
    /// Games played at once.
    pub games_in_flight: usize,
    pub seed: u64,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Decisions (after the opening) chosen in proportion to the search's visits instead of the
    /// most visited action: variety for players that are otherwise deterministic (networks),
    /// which balance studies need (0: always the most visited action).
    pub sample_plies: u32,
    /// Actions every game starts with, before the random opening plies (a balance study
    /// playing games from one opening).
    pub prefix: Vec<Action>,
    /// Sampled plies choose only among the actions whose search value is within this margin
    /// (in [-1, 1] units) of the chosen action's: variety that does not give games away.
    /// `None`: any visited action.
    pub sample_margin: Option<f32>,
    /// White never swaps: a balance study values an opening with the pie's swap declined.
    pub decline_swap: bool,
    /// When to give the match up (nothing of it is written then).
    pub stop: run::Stop,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            games: 20,
            opening_plies: 2,
            games_in_flight: 16,
            seed: 1,
            progress: false,
            sample_plies: 0,
            prefix: Vec::new(),
            sample_margin: None,
            decline_swap: false,
            stop: run::Stop::on_signal(),
        }
    }
}

/// Where the results of a match go.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchOutput {
    /// One game record per line (written atomically when the match ends).
    pub games_file: Option<PathBuf>,
    /// The summary line is appended here.
    pub summary_file: Option<PathBuf>,
}

impl MatchOutput {
    /// `RUN/eval/games-A-vs-B-TIME.jsonl` and `RUN/eval/matches.jsonl`.
    pub fn in_run(run: &Path, a: &Contestant, b: &Contestant, tag: &str) -> MatchOutput {
        let clean = |s: &str| {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        };
        let name = format!(
            "games-{tag}{}-vs-{}-{}.jsonl",
            clean(&a.info.name),
            clean(&b.info.name),
            now_secs()
        );
        MatchOutput {
            games_file: Some(run::RunDir::new(run).eval().join(name)),
            summary_file: Some(crate::results::matches_file(run)),
        }
    }
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct GameResult {
    pub index: usize,
    /// The colour player A had.
    pub a_colour: Player,
    /// A's score: 1 win, 0.5 draw, 0 loss.
    pub score_a: f64,
    /// The record, with `meta` naming the players, A's colour, the opening length and A's
    /// score.
    pub record: GameRecord,
}

/// Sum of results from A's point of view.
pub fn tally(results: &[GameResult]) -> Wdl {
    let mut w = Wdl::default();
    for r in results {
        if r.score_a > 0.75 {
            w.wins += 1;
        } else if r.score_a < 0.25 {
            w.losses += 1;
        } else {
            w.draws += 1;
        }
    }
    w
}

/// The opening of pair `pair`: up to `plies` uniformly random legal actions (fewer only if
/// every try ends the game first).
pub fn opening(start: &AnyGame, plies: u32, seed: u64, pair: u64) -> Vec<Action> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(pair);
    let mut legal = Vec::new();
    let mut best = Vec::new();
    for _ in 0..100 {
        let mut g = start.clone();
        let mut actions = Vec::new();
        while (actions.len() as u32) < plies && g.outcome().is_none() {
            g.legal_actions(&mut legal);
            let a = legal[rng.gen_range(0..legal.len())];
            g.apply(a);
            actions.push(a);
        }
        if g.outcome().is_none() {
            return actions;
        }
        if actions.len() > best.len() + 1 {
            best = actions[..actions.len() - 1].to_vec();
        }
    }
    best
}

/// A side's evaluator for one batch of games (two per match: their size does not matter).
#[allow(clippy::large_enum_variant)]
enum SideEval<'a> {
    None,
    Rollout(RolloutEvaluator),
    Net(NetEvaluator<'a>),
}

impl Evaluator<AnyGame> for SideEval<'_> {
    fn evaluate(
        &mut self,
        positions: &[AnyGame],
        legal: &[Vec<Action>],
        out: &mut Vec<Evaluation>,
    ) {
        match self {
            SideEval::None => unreachable!("the random player never searches"),
            SideEval::Rollout(e) => e.evaluate(positions, legal, out),
            SideEval::Net(e) => e.evaluate(positions, legal, out),
        }
    }
}

fn side_eval(c: &Contestant, seed: u64) -> SideEval<'_> {
    match &c.brain {
        Brain::Random => SideEval::None,
        Brain::Mcts { .. } => SideEval::Rollout(RolloutEvaluator::new(seed)),
        Brain::Net { model, .. } => SideEval::Net(NetEvaluator::new(model)),
    }
}

struct Slot {
    index: usize,
    a_colour: Player,
    game: AnyGame,
    actions: Vec<Action>,
    opening_len: usize,
    /// Search trees of A (0) and B (1), created on their first decision and advanced with
    /// every action (tree reuse).
    searches: [Option<Search<AnyGame>>; 2],
    rng: ChaCha8Rng,
}

impl Slot {
    fn side_to_move(&self) -> usize {
        if self.game.to_move() == self.a_colour {
            0
        } else {
            1
        }
    }
    fn play(&mut self, a: Action) {
        self.game.apply(a);
        self.actions.push(a);
        for s in self.searches.iter_mut().flatten() {
            s.advance(a);
        }
    }
}

/// Play games `first..first + count` of a match between `a` and `b`; results in index order.
pub fn play_games(
    game: &GameConfig,
    a: &Contestant,
    b: &Contestant,
    first: usize,
    count: usize,
    opts: &MatchOptions,
    progress: Option<&ProgressBar>,
) -> Result<Vec<GameResult>, EvalError> {
    let mut table = Table::new(game, [a, b], first, count, opts)?;
    loop {
        if opts.stop.requested() {
            return Err(EvalError::Interrupted);
        }
        table.start_games();
        if table.slots.is_empty() {
            break;
        }
        table.play_trivial_moves(progress);
        for side in 0..2 {
            table.search_round(side)?;
        }
    }
    let mut results = table.results;
    results.sort_by_key(|r| r.index);
    Ok(results)
}

/// The games of a match in flight, with each side's evaluator.
struct Table<'a> {
    game: &'a GameConfig,
    start: AnyGame,
    players: [&'a Contestant; 2],
    opts: &'a MatchOptions,
    evals: [SideEval<'a>; 2],
    slots: Vec<Slot>,
    next: usize,
    end: usize,
    results: Vec<GameResult>,
    batch: LeafBatch<AnyGame>,
    legal: Vec<Action>,
}

impl<'a> Table<'a> {
    fn new(
        game: &'a GameConfig,
        players: [&'a Contestant; 2],
        first: usize,
        count: usize,
        opts: &'a MatchOptions,
    ) -> Result<Self, EvalError> {
        let start = game
            .start()
            .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
        // A network plays only the games it was trained for (a study may ask for other sizes,
        // komi or balancing methods than the config it was loaded with).
        for p in players {
            p.plays(game).map_err(|why| {
                EvalError::Config(format!(
                    "{} cannot play {}: {why}",
                    p.info.name,
                    game.label()
                ))
            })?;
        }
        let evals = [
            side_eval(players[0], opts.seed ^ 0xA11CE ^ first as u64),
            side_eval(players[1], opts.seed ^ 0xB0B ^ first as u64),
        ];
        Ok(Table {
            game,
            start,
            players,
            opts,
            evals,
            slots: Vec::new(),
            next: first,
            end: first + count,
            results: Vec::new(),
            batch: LeafBatch::new(),
            legal: Vec::new(),
        })
    }

    /// Fill the free places with the next games: game `i` starts after the opening of its
    /// pair, with A as Black in even games.
    fn start_games(&mut self) {
        while self.next < self.end && self.slots.len() < self.opts.games_in_flight.max(1) {
            let i = self.next;
            let mut game = self.start.clone();
            for &x in &self.opts.prefix {
                game.apply(x);
            }
            let mut open = self.opts.prefix.clone();
            open.extend(opening(
                &game,
                self.opts.opening_plies,
                self.opts.seed,
                (i / 2) as u64,
            ));
            for &x in &open[self.opts.prefix.len()..] {
                game.apply(x);
            }
            let mut rng = ChaCha8Rng::seed_from_u64(self.opts.seed);
            rng.set_stream(1 << 40 | i as u64);
            let a_colour = if i.is_multiple_of(2) {
                Player::Black
            } else {
                Player::White
            };
            self.slots.push(Slot {
                index: i,
                a_colour,
                game,
                opening_len: open.len(),
                actions: open,
                searches: [None, None],
                rng,
            });
            self.next += 1;
        }
    }

    /// Decisions that need no search (one legal action, or the random player), and the
    /// games they finish.
    fn play_trivial_moves(&mut self, progress: Option<&ProgressBar>) {
        let mut k = 0;
        while k < self.slots.len() {
            let slot = &mut self.slots[k];
            while slot.game.outcome().is_none() {
                let side = slot.side_to_move();
                slot.game.legal_actions(&mut self.legal);
                if self.legal.len() > 1 && !matches!(self.players[side].brain, Brain::Random) {
                    break;
                }
                let x = self.legal[slot.rng.gen_range(0..self.legal.len())];
                slot.play(x);
            }
            if slot.game.outcome().is_some() {
                let slot = self.slots.swap_remove(k);
                self.results.push(finish(
                    self.game,
                    &self.start,
                    slot,
                    self.players[0],
                    self.players[1],
                ));
                if let Some(p) = progress {
                    p.inc(1);
                }
            } else {
                k += 1;
            }
        }
    }

    /// One search round of `side` over every game where it is to move (one evaluator call),
    /// then its move in every game whose search is complete.
    fn search_round(&mut self, side: usize) -> Result<(), EvalError> {
        let Some(cfg) = self.players[side].match_search() else {
            return Ok(());
        };
        let to_move = |slot: &Slot| slot.game.outcome().is_none() && slot.side_to_move() == side;
        let searches = self.slots.iter_mut().filter(|s| to_move(s)).map(|slot| {
            let root = &slot.game;
            let search =
                slot.searches[side].get_or_insert_with(|| Search::new(cfg.clone(), root.clone()));
            let want = cfg
                .visits
                .saturating_sub(search.root_visits())
                .clamp(1, cfg.batch as u32);
            (search, want as usize)
        });
        self.batch
            .round(searches, &mut self.evals[side])
            .map_err(|source| EvalError::Search {
                player: self.players[side].info.name.clone(),
                source,
            })?;
        for slot in self.slots.iter_mut().filter(|s| to_move(s)) {
            let search = slot.searches[side].as_mut().expect("searched above");
            if search.root_visits() > 0 {
                if self.opts.decline_swap {
                    search.exclude_at_root(Action::Swap);
                }
                // Once per decision, without self-play's noise.
                search.prepare_root(false, &mut slot.rng);
            }
            if search.root_visits() >= cfg.visits {
                let x = if slot.actions.len() < slot.opening_len + self.opts.sample_plies as usize {
                    sample_within(search, self.opts.sample_margin, &mut slot.rng)
                } else {
                    search.result().best()
                };
                slot.play(x);
            }
        }
        Ok(())
    }
}

/// A sampled ply: an action drawn in proportion to visits, among those whose value is within
/// `margin` of the search's choice (all visited actions without a margin).
fn sample_within(search: &Search<AnyGame>, margin: Option<f32>, rng: &mut ChaCha8Rng) -> Action {
    let mut result = search.result();
    let Some(margin) = margin else {
        return result.sample(1.0, rng);
    };
    let best = result.best();
    let values = search.analysis(1);
    let value_of = |a: Action| {
        values
            .iter()
            .find(|r| r.action == a)
            .map_or(-1.0, |r| r.value)
    };
    let floor = value_of(best) - margin;
    for child in &mut result.children {
        if child.0 != best && value_of(child.0) < floor {
            child.1 = 0;
        }
    }
    result.gumbel_action = None;
    result.sample(1.0, rng)
}

fn finish(
    config: &GameConfig,
    start: &AnyGame,
    slot: Slot,
    a: &Contestant,
    b: &Contestant,
) -> GameResult {
    let outcome = slot.game.outcome().expect("finished game");
    let score_a = match outcome.winner {
        None => 0.5,
        Some(w) if w == slot.a_colour => 1.0,
        Some(_) => 0.0,
    };
    let mut record = GameRecord::new(config.clone(), start, &slot.actions, &slot.game);
    let (black, white) = if slot.a_colour == Player::Black {
        (a, b)
    } else {
        (b, a)
    };
    let m = &mut record.meta;
    use serde_json::json;
    m.insert("index".into(), json!(slot.index));
    m.insert("a".into(), json!(a.info.name));
    m.insert("b".into(), json!(b.info.name));
    m.insert("black".into(), json!(black.info.name));
    m.insert("white".into(), json!(white.info.name));
    m.insert("a_colour".into(), json!(slot.a_colour));
    m.insert("opening_plies".into(), json!(slot.opening_len));
    m.insert("length".into(), json!(slot.actions.len()));
    m.insert("score_a".into(), json!(score_a));
    GameResult {
        index: slot.index,
        a_colour: slot.a_colour,
        score_a,
        record,
    }
}

/// A summary from A's point of view.
pub fn summarize(
    kind: &str,
    game: &GameConfig,
    a: &Contestant,
    b: &Contestant,
    results: &[GameResult],
    opts: &MatchOptions,
    games_file: Option<&Path>,
) -> MatchSummary {
    let wdl = tally(results);
    let e = elo_estimate(wdl);
    MatchSummary {
        kind: kind.into(),
        game: game.label(),
        a: a.info.clone(),
        b: b.info.clone(),
        wins: wdl.wins,
        draws: wdl.draws,
        losses: wdl.losses,
        games: wdl.games(),
        score: wdl.score(),
        elo: e.elo,
        elo_lo: e.lo,
        elo_hi: e.hi,
        seed: opts.seed,
        opening_plies: opts.opening_plies,
        games_file: games_file.map(|p| p.display().to_string()),
        time: now_secs(),
        sprt: None,
        sprt_status: None,
        promoted: None,
    }
}

/// Write the game records (atomically) of a finished match.
pub(crate) fn write_games(path: &Path, results: &[GameResult]) -> Result<(), EvalError> {
    let records: Vec<GameRecord> = results.iter().map(|r| r.record.clone()).collect();
    Ok(run::write_atomic_with(path, |out| {
        write_records_to(out, &records)
    })?)
}

/// Fail before playing when a match's results could not be written.
pub fn check_output(out: &MatchOutput) -> Result<(), EvalError> {
    for dir in [&out.games_file, &out.summary_file]
        .into_iter()
        .flatten()
        .filter_map(|p| p.parent())
    {
        run::check_writable(dir)?;
    }
    Ok(())
}

/// Play a whole match, write its games and append its summary where `out` says.
pub fn run_match(
    game: &GameConfig,
    a: &Contestant,
    b: &Contestant,
    opts: &MatchOptions,
    out: &MatchOutput,
) -> Result<MatchSummary, EvalError> {
    check_output(out)?;
    let bar = run::progress::bar(opts.games as u64, "games", opts.progress)
        .with_message(format!("{} vs {}", a.info.name, b.info.name));
    let results = play_games(game, a, b, 0, opts.games, opts, Some(&bar))?;
    bar.finish_and_clear();
    if let Some(p) = &out.games_file {
        write_games(p, &results)?;
    }
    let summary = summarize(
        "match",
        game,
        a,
        b,
        &results,
        opts,
        out.games_file.as_deref(),
    );
    if let Some(p) = &out.summary_file {
        append_summary(p, &summary)?;
    }
    Ok(summary)
}

/// One line for people: `A vs B: +W =D -L, score 72.5% [57.2%, 83.9%], Elo +168 [+95, +260]
/// (40 games)`, the score with its Wilson interval; an unbounded Elo end (4-0) prints as
/// `+inf`.
pub fn describe(s: &MatchSummary) -> String {
    let score = match crate::score::Estimate::score(s.wdl().points(), s.games) {
        Some(e) => format!(
            "{:.1}% [{:.1}%, {:.1}%]",
            100.0 * e.estimate,
            100.0 * e.lo,
            100.0 * e.hi
        ),
        None => "-".into(),
    };
    format!(
        "{} vs {}: +{} ={} -{}, score {score}, Elo {:+.0} [{}, {}] ({} games)",
        s.a.name,
        s.b.name,
        s.wins,
        s.draws,
        s.losses,
        s.elo,
        crate::elo::format_elo_end(s.elo_lo),
        crate::elo::format_elo_end(s.elo_hi),
        s.games
    )
}

/// The match of `a` against `b` with `opts.seed` from the run's results if it was played
/// already (a loop or benchmark killed after it, or run again), otherwise played now with its
/// games and summary written into the run: a rerun never counts a match twice.
pub fn run_match_once(
    run: &Path,
    game: &GameConfig,
    a: &Contestant,
    b: &Contestant,
    opts: &MatchOptions,
) -> Result<MatchSummary, EvalError> {
    let key = crate::results::MatchKey {
        kind: crate::results::MatchKind::Match,
        a: a.info.name.clone(),
        b: b.info.name.clone(),
        seed: opts.seed,
    };
    match key.find_played(run, opts.games)? {
        Some(s) => Ok(s),
        None => run_match(game, a, b, opts, &MatchOutput::in_run(run, a, b, "")),
    }
}
