//! The engine soak: uniformly random actions over every game and option set, and positions set
//! up from descriptions (those of reached positions, random ones that no game reaches, and
//! malformed ones), with the interface contract checked along the way.
//!
//! Game `i` of a soak with seed `s` is always the same game: its config is the `i`-th of
//! [`all_configs`] (cyclically) and its random numbers come from stream `i` of a ChaCha8
//! generator seeded with `s`, whichever thread plays it and however many games are played. A
//! failure names both, and `engine soak --seed S --game I` plays that game alone again.
//!
//! Checked for every game:
//! - after every action, the incremental hash equals the hash recomputed from scratch; a game
//!   that is not over has a legal action, a finished one has none;
//! - every `check_every` actions and at every game end, the whole contract of
//!   [`crate::testing::check_position`] (legality listing, policy indices and notation round
//!   trips, encoding and legal actions under every symmetry), and that an action outside the
//!   legal list is refused by [`Game::try_apply`] without changing the position;
//! - the game's record, written as a JSON line and read back, replays to the same position and
//!   result;
//! - positions sampled from the game, described and set up again, give the same description
//!   (and the same hash, except for Square Lifeline, whose description leaves out the repetition
//!   history), pass the contract and are played on to their end;
//! - random descriptions (random stones, counters and flags, extreme values included) are set
//!   up or refused; those accepted pass the same checks and are played on to their end;
//! - malformed descriptions (cells not on the board, a cell of both colours, unknown or missing
//!   fields, wrong types, negative or oversized numbers, a stone pending where there is none,
//!   truncated or random text) are refused with an error.
//!
//! A panic anywhere (a failed check or a bug) is caught and reported as a failure of that game;
//! the soak goes on with the next one.

use crate::board::Board;
use crate::game::{Action, EndReason, Game};
use crate::games::{AnyGame, GameConfig};
use crate::leblin::LeblinOptions;
use crate::lifeline::{Balance, LifelineOptions};
use crate::record::GameRecord;
use crate::square::{Incursions, SquareOptions};
use crate::testing::check_position;
use crate::vigilance::VigilanceOptions;
use crate::vigilance_boards::VigilanceBoard;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::cell::{Cell as StdCell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Every game and option set the soak plays, smallest boards first (so that a short soak
/// covers every game): Lifeline on sides 3 to 12 with `strong`, `weak` and `komi` (komi 0, 3
/// and 12), Square Lifeline on sides 5 to 19, Advanced and Basic, komi 0 and 2, Leblin on sides
/// 5 to 19 with (komi, handicap) (0, 0), (2, 0), (0, 3) and (1, 2), Vigilance on its 14 boards
/// with captures on and off, and a few games with a small turn cap.
pub fn all_configs() -> Vec<GameConfig> {
    let mut out = Vec::new();
    for size in 3..=12 {
        for balance in [Balance::Strong, Balance::Weak] {
            out.push(GameConfig::Lifeline(LifelineOptions::new(size, balance)));
        }
        for komi in [0, 3, 12] {
            out.push(GameConfig::Lifeline(LifelineOptions {
                komi,
                ..LifelineOptions::new(size, Balance::Komi)
            }));
        }
    }
    for size in 5..=19 {
        for incursions in [Incursions::Allowed, Incursions::Forbidden] {
            for komi in [0, 2] {
                out.push(GameConfig::SquareLifeline(SquareOptions {
                    size,
                    komi,
                    incursions,
                    max_turns: None,
                }));
            }
        }
        for (komi, handicap) in [(0, 0), (2, 0), (0, 3), (1, 2)] {
            out.push(GameConfig::Leblin(LeblinOptions {
                size,
                komi,
                handicap,
                max_turns: None,
            }));
        }
    }
    for board in VigilanceBoard::ALL {
        for captures in [true, false] {
            out.push(GameConfig::Vigilance(VigilanceOptions::new(
                board, captures,
            )));
        }
    }
    out.push(GameConfig::Lifeline(LifelineOptions {
        max_turns: Some(7),
        ..LifelineOptions::new(5, Balance::Strong)
    }));
    out.push(GameConfig::SquareLifeline(SquareOptions {
        max_turns: Some(5),
        ..SquareOptions::basic(7)
    }));
    out.push(GameConfig::Leblin(LeblinOptions {
        max_turns: Some(6),
        ..LeblinOptions::new(7)
    }));
    let mut vigilance = VigilanceOptions::new(VigilanceBoard::HexXs, true);
    vigilance.max_turns = Some(3);
    out.push(GameConfig::Vigilance(vigilance));
    // Stable sort: by number of cells, the order above within a size.
    out.sort_by_cached_key(|c| c.start().map_or(0, |g| g.board().num_cells()));
    out
}

/// What to soak.
#[derive(Clone, Debug)]
pub struct SoakOptions {
    /// Stop starting new games once this many actions have been applied (games in progress are
    /// finished, so the total is a little higher).
    pub actions: u64,
    pub seed: u64,
    /// Threads playing games (at least 1).
    pub threads: usize,
    /// The whole contract is checked every this many actions of a game (the hash after every
    /// one); 1 checks everything after every action (several times slower than 10, the
    /// default).
    pub check_every: u64,
    /// Play only this game (to reproduce a failure).
    pub only_game: Option<u64>,
}

impl Default for SoakOptions {
    fn default() -> Self {
        SoakOptions {
            actions: 1_000_000,
            seed: 1,
            threads: 1,
            check_every: 10,
            only_game: None,
        }
    }
}

/// Counters of a soak (or of one game).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SoakCounts {
    /// Actions applied, in games from the start and in games from set-up positions.
    pub actions: u64,
    /// Games played from the start.
    pub games: u64,
    /// Games played on from set-up positions (to their end).
    pub setup_games: u64,
    /// Full contract checks ([`check_position`]).
    pub checks: u64,
    /// Records written, read back and replayed.
    pub replays: u64,
    /// Descriptions of reached positions set up again.
    pub setups: u64,
    /// Random descriptions accepted.
    pub random_accepted: u64,
    /// Random descriptions refused.
    pub random_refused: u64,
    /// Malformed descriptions refused (every malformed one must be).
    pub malformed_refused: u64,
}

impl SoakCounts {
    fn add(&mut self, o: &SoakCounts) {
        self.actions += o.actions;
        self.games += o.games;
        self.setup_games += o.setup_games;
        self.checks += o.checks;
        self.replays += o.replays;
        self.setups += o.setups;
        self.random_accepted += o.random_accepted;
        self.random_refused += o.random_refused;
        self.malformed_refused += o.malformed_refused;
    }
}

/// One game of the soak that panicked or failed a check.
#[derive(Clone, Debug)]
pub struct SoakFailure {
    pub seed: u64,
    pub game: u64,
    pub config: GameConfig,
    /// What the game was doing: `play`, `record`, `set-up`, `random set-up`, `malformed`.
    pub phase: &'static str,
    /// The panic message, with its location, and the description or actions involved.
    pub message: String,
}

impl fmt::Display for SoakFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "game {} of seed {} ({}) failed in {}: {} (again: engine soak --seed {} --game {})",
            self.game,
            self.seed,
            serde_json::to_string(&self.config).unwrap_or_default(),
            self.phase,
            self.message,
            self.seed,
            self.game
        )
    }
}

/// The result of a soak.
#[derive(Clone, Debug, Default)]
pub struct SoakReport {
    pub counts: SoakCounts,
    /// Counters by game (`lifeline`, `square_lifeline`, `leblin`, `vigilance`).
    pub by_game: BTreeMap<String, SoakCounts>,
    pub failures: Vec<SoakFailure>,
    pub elapsed: Duration,
}

impl SoakReport {
    /// Actions applied per second of wall-clock time.
    pub fn actions_per_second(&self) -> f64 {
        self.counts.actions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The game's name in configs (`lifeline`, `square_lifeline`, ...).
fn game_name(cfg: &GameConfig) -> String {
    serde_json::to_value(cfg)
        .ok()
        .and_then(|v| v.get("game").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

thread_local! {
    /// Where the last panic of this thread happened (set by the soak's panic hook).
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether this thread is inside a soak game (the hook stays quiet there).
    static IN_SOAK: StdCell<bool> = const { StdCell::new(false) };
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    };
    match PANIC_AT.with(|p| p.borrow_mut().take()) {
        Some(at) => format!("panicked at {at}: {text}"),
        None => format!("panicked: {text}"),
    }
}

/// Run a soak. A panic hook is installed for its duration: panics of soak games are recorded
/// (with their location) instead of printed; other panics go to the previous hook. Not meant
/// to run twice at once in one process (the hook is process-wide).
pub fn run(opts: &SoakOptions, mut progress: impl FnMut(&SoakCounts) + Send) -> SoakReport {
    let configs = all_configs();
    let previous = std::sync::Arc::new(std::panic::take_hook());
    let prev = previous.clone();
    std::panic::set_hook(Box::new(move |info| {
        if IN_SOAK.with(|s| s.get()) {
            let at = info.location().map(|l| l.to_string()).unwrap_or_default();
            PANIC_AT.with(|p| *p.borrow_mut() = Some(at));
        } else {
            prev(info);
        }
    }));
    let start = Instant::now();
    let next_game = AtomicU64::new(opts.only_game.unwrap_or(0));
    let done_actions = AtomicU64::new(0);
    let report = Mutex::new(SoakReport::default());
    let progress = Mutex::new(&mut progress);
    std::thread::scope(|scope| {
        for _ in 0..opts.threads.max(1) {
            scope.spawn(|| loop {
                if opts.only_game.is_none() && done_actions.load(Ordering::Relaxed) >= opts.actions
                {
                    break;
                }
                let i = next_game.fetch_add(1, Ordering::Relaxed);
                if opts.only_game.is_some_and(|g| g != i) {
                    break;
                }
                let cfg = &configs[(i % configs.len() as u64) as usize];
                let (counts, failure) = soak_game(cfg, opts, i);
                done_actions.fetch_add(counts.actions, Ordering::Relaxed);
                let mut r = report.lock().unwrap();
                r.counts.add(&counts);
                r.by_game.entry(game_name(cfg)).or_default().add(&counts);
                r.failures.extend(failure);
                let total = r.counts.clone();
                drop(r);
                (progress.lock().unwrap())(&total);
            });
        }
    });
    let _ = std::panic::take_hook();
    if let Ok(previous) = std::sync::Arc::try_unwrap(previous) {
        std::panic::set_hook(previous);
    }
    let mut report = report.into_inner().unwrap();
    report.elapsed = start.elapsed();
    report.failures.sort_by_key(|f| f.game);
    report
}

/// Play game `index` of the soak: its counters, and its failure if it had one.
pub fn soak_game(
    cfg: &GameConfig,
    opts: &SoakOptions,
    index: u64,
) -> (SoakCounts, Option<SoakFailure>) {
    guarded(cfg, opts, index, |s| s.game())
}

/// Run `body` on game `index`'s soak state, turning a panic into a failure.
fn guarded(
    cfg: &GameConfig,
    opts: &SoakOptions,
    index: u64,
    body: impl FnOnce(&mut Soak),
) -> (SoakCounts, Option<SoakFailure>) {
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    rng.set_stream(index);
    let mut soak = Soak {
        cfg,
        rng,
        check_every: opts.check_every.max(1),
        counts: SoakCounts::default(),
        phase: "play",
        context: String::new(),
    };
    IN_SOAK.with(|s| s.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| body(&mut soak)));
    IN_SOAK.with(|s| s.set(false));
    let failure = result.err().map(|payload| {
        let mut message = panic_message(payload.as_ref());
        if !soak.context.is_empty() {
            message.push_str(&format!(" [{}]", soak.context));
        }
        SoakFailure {
            seed: opts.seed,
            game: index,
            config: cfg.clone(),
            phase: soak.phase,
            message,
        }
    });
    (soak.counts, failure)
}

/// One soak game in progress.
struct Soak<'a> {
    cfg: &'a GameConfig,
    rng: ChaCha8Rng,
    check_every: u64,
    counts: SoakCounts,
    phase: &'static str,
    /// What a failure should show besides its message (a description, the actions so far).
    context: String,
}

impl Soak<'_> {
    fn game(&mut self) {
        self.phase = "play";
        let start = self.cfg.start().expect("every soak config is valid");
        let mut end = start.clone();
        let mut samples = Vec::new();
        let actions = self.play(&mut end, &mut samples);
        self.counts.games += 1;

        self.phase = "record";
        let record = GameRecord::new(self.cfg.clone(), &start, &actions, &end);
        let line = record.to_json_line();
        self.context = line.clone();
        let back: GameRecord = serde_json::from_str(&line).expect("a record reads back");
        let replayed = back.replay().expect("a record replays");
        assert_eq!(
            replayed.hash(),
            end.hash(),
            "the replay reaches another position"
        );
        assert_eq!(
            replayed.outcome(),
            end.outcome(),
            "the replay ends otherwise"
        );
        self.counts.replays += 1;

        samples.push(end);
        for g in &samples {
            self.phase = "set-up";
            self.setup_again(g);
            self.phase = "random set-up";
            self.random_setup(g);
            self.phase = "malformed";
            self.malformed(g);
        }
        self.context.clear();
    }

    /// Play `g` to its end with random actions, checking as it goes; with probability 1/16 an
    /// action's position joins `samples` (at most 2). Returns the actions.
    fn play(&mut self, g: &mut AnyGame, samples: &mut Vec<AnyGame>) -> Vec<Action> {
        let mut legal = Vec::new();
        let mut actions = Vec::new();
        self.check(g);
        while g.outcome().is_none() {
            g.legal_actions(&mut legal);
            assert!(
                !legal.is_empty(),
                "a game that is not over has no legal action"
            );
            let a = legal[self.rng.gen_range(0..legal.len())];
            g.apply(a);
            actions.push(a);
            self.counts.actions += 1;
            if g.hash() != g.recompute_hash() {
                let names: Vec<String> = actions.iter().map(|&a| format!("{a:?}")).collect();
                self.context = names.join(" ");
                panic!("incremental hash differs from the recomputed one");
            }
            if self.counts.actions.is_multiple_of(self.check_every) {
                self.check(g);
            }
            if samples.len() < 2 && self.rng.gen_ratio(1, 16) {
                samples.push(g.clone());
            }
        }
        g.legal_actions(&mut legal);
        assert!(legal.is_empty(), "a finished game has legal actions");
        self.check(g);
        actions
    }

    /// The whole contract on `g`, and an action outside its legal list refused.
    fn check(&mut self, g: &AnyGame) {
        check_position(g);
        self.counts.checks += 1;
        let i = self.rng.gen_range(0..g.policy_len());
        let Some(a) = g.action_of_policy_index(i) else {
            return;
        };
        if !g.is_legal(a) {
            let mut h = g.clone();
            assert!(h.try_apply(a).is_err(), "illegal {a:?} accepted");
            assert_eq!(h.hash(), g.hash(), "a refused action changed the position");
        }
    }

    /// Describe `g`, set the description up, and play on from it.
    fn setup_again(&mut self, g: &AnyGame) {
        let description = g.describe().to_string();
        self.context = description.clone();
        let h = self
            .cfg
            .setup(&description)
            .unwrap_or_else(|e| panic!("the description of a reached position is refused: {e}"));
        assert_eq!(
            h.describe(),
            g.describe(),
            "the description does not round-trip"
        );
        if !matches!(g, AnyGame::SquareLifeline(_)) {
            assert_eq!(h.hash(), g.hash(), "the set-up position hashes otherwise");
        }
        // A description holds no outcome and no history, so three end rules cannot be seen by
        // a set-up: Square Lifeline's repetition (the description leaves out the history),
        // Leblin's annihilation (a consequence of a turn that removed stones) and Vigilance's
        // blocked space (judged for the player who just acted). Each game's from_position
        // sets such a position up as one that goes on.
        let by_history = g.outcome().is_some_and(|o| {
            matches!(
                o.reason,
                EndReason::Repetition | EndReason::Annihilation | EndReason::BlockedSpace
            )
        });
        if !by_history {
            assert_eq!(
                h.outcome(),
                g.outcome(),
                "the set-up position ends otherwise"
            );
        }
        self.counts.setups += 1;
        self.play_on(h);
    }

    /// Play on from a set-up position, checking as in [`Soak::play`].
    fn play_on(&mut self, mut h: AnyGame) {
        let mut none = Vec::new();
        self.play(&mut h, &mut none);
        self.counts.setup_games += 1;
    }

    /// A random description built on `g`'s: random stones, counters and flags.
    fn random_setup(&mut self, g: &AnyGame) {
        let v = random_description(&g.describe(), g.board(), &mut self.rng);
        let text = v.to_string();
        self.context = text.clone();
        match self.cfg.setup(&text) {
            Ok(h) => {
                self.counts.random_accepted += 1;
                // A description of an accepted position sets up the same position.
                let again = self
                    .cfg
                    .setup(&h.describe().to_string())
                    .unwrap_or_else(|e| panic!("the description of a set-up is refused: {e}"));
                assert_eq!(again.describe(), h.describe(), "set-up descriptions differ");
                assert_eq!(again.hash(), h.hash(), "set-up positions hash otherwise");
                self.play_on(h);
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                self.counts.random_refused += 1;
            }
        }
    }

    /// Every kind of malformed description built on `g`'s, each refused with an error.
    fn malformed(&mut self, g: &AnyGame) {
        let good = g.describe();
        for kind in Malformed::ALL {
            let Some(text) = kind.make(&good, g.board(), &mut self.rng) else {
                continue;
            };
            self.context = format!("{kind:?}: {text}");
            match self.cfg.setup(&text) {
                Ok(_) => panic!("a malformed description ({kind:?}) was accepted"),
                Err(e) => assert!(!e.to_string().is_empty(), "an empty error message"),
            }
            self.counts.malformed_refused += 1;
        }
    }
}

/// Names of every cell of `b`.
fn cell_names(b: &Board) -> Vec<String> {
    b.cells().iter().map(|&c| b.cell_name(c)).collect()
}

/// A description like `desc` with random stones (each cell black, white or empty, with a
/// random density), a random player to move, and each counter, flag and optional cell replaced
/// at random (sometimes by an extreme value).
pub fn random_description(desc: &Value, b: &Board, rng: &mut impl Rng) -> Value {
    let mut v = desc.clone();
    let Some(obj) = v.as_object_mut() else {
        return v;
    };
    let density = rng.gen_range(0.0..0.6);
    let (mut black, mut white) = (Vec::new(), Vec::new());
    for name in cell_names(b) {
        if rng.gen_bool(density) {
            if rng.gen_bool(0.5) {
                black.push(name);
            } else {
                white.push(name);
            }
        }
    }
    let stones: Vec<String> = black.iter().chain(&white).cloned().collect();
    let mover = if rng.gen_bool(0.5) { "black" } else { "white" };
    let own = if mover == "black" { &black } else { &white };
    for (key, value) in obj.iter_mut() {
        *value = match key.as_str() {
            "black" => json!(black),
            "white" => json!(white),
            "to_move" => json!(mover),
            _ => match value {
                Value::Bool(_) => json!(rng.gen_bool(0.5)),
                Value::Number(n) => random_count(n.as_u64().unwrap_or(0), rng),
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|n| random_count(n.as_u64().unwrap_or(0), rng))
                        .collect(),
                ),
                // An optional cell (a pending stone, the stone chosen to slide).
                _ => match rng.gen_range(0..6) {
                    0..=2 => Value::Null,
                    3 => own.choose(rng).map_or(Value::Null, |n| json!(n)),
                    4 => stones.choose(rng).map_or(Value::Null, |n| json!(n)),
                    _ => json!(b.cell_name(*b.cells().choose(rng).unwrap())),
                },
            },
        };
    }
    v
}

/// A random counter near `v`: kept, small, or extreme.
fn random_count(v: u64, rng: &mut impl Rng) -> Value {
    match rng.gen_range(0..16) {
        0..=7 => json!(v),
        8..=13 => json!(rng.gen_range(0..=(2 * v).max(6))),
        14 => json!(crate::game::MAX_DESCRIBED_COUNT - rng.gen_range(0..3)),
        _ => json!(u32::MAX - rng.gen_range(0..3)),
    }
}

/// Ways a description can be malformed (each must be refused).
#[derive(Clone, Copy, Debug)]
pub enum Malformed {
    /// A stone on a cell name that is not a cell of the board.
    NotACell,
    /// One cell in both colours.
    BothColours,
    /// A field the description does not have.
    UnknownField,
    /// A required field left out.
    MissingField,
    /// A number where a list or a player is expected, a string where a number is.
    WrongType,
    /// A negative, fractional or oversized counter.
    BadNumber,
    /// A player that is neither black nor white.
    BadPlayer,
    /// A pending stone (or a stone chosen to slide) on an empty cell.
    PendingOnEmpty,
    /// The description's text cut short.
    Truncated,
    /// Text that is not a description at all.
    NotAnObject,
}

impl Malformed {
    pub const ALL: [Malformed; 10] = [
        Malformed::NotACell,
        Malformed::BothColours,
        Malformed::UnknownField,
        Malformed::MissingField,
        Malformed::WrongType,
        Malformed::BadNumber,
        Malformed::BadPlayer,
        Malformed::PendingOnEmpty,
        Malformed::Truncated,
        Malformed::NotAnObject,
    ];

    /// The malformed text built on the good description `good`; `None` where this kind does
    /// not apply (no empty cell, no pending field).
    pub fn make(self, good: &Value, b: &Board, rng: &mut impl Rng) -> Option<String> {
        let mut v = good.clone();
        let obj = v.as_object_mut()?;
        let colour = if rng.gen_bool(0.5) { "black" } else { "white" };
        match self {
            Malformed::NotACell => {
                let names = [
                    "z99",
                    "a0",
                    "",
                    "a",
                    "1",
                    "A1",
                    "\u{e4}1",
                    "a1x",
                    "aaa1",
                    "a99999999999",
                    "zz1",
                    "a-1",
                    " a1",
                    "a1 ",
                    "\u{1F600}",
                ];
                let bad = *names.choose(rng)?;
                push_name(obj, colour, bad);
            }
            Malformed::BothColours => {
                let name = b.cell_name(*b.cells().choose(rng)?);
                push_name(obj, "black", &name);
                push_name(obj, "white", &name);
            }
            Malformed::UnknownField => {
                obj.insert("colour".into(), json!("black"));
            }
            Malformed::MissingField => {
                obj.remove("to_move");
            }
            Malformed::WrongType => {
                let keys: Vec<String> = obj.keys().cloned().collect();
                let key = keys.choose(rng)?.clone();
                let wrong = match &obj[&key] {
                    Value::Number(_) | Value::Bool(_) => json!("3"),
                    Value::Array(_) => json!(3),
                    _ => json!([1]),
                };
                obj.insert(key, wrong);
            }
            Malformed::BadNumber => {
                let keys: Vec<String> = obj
                    .iter()
                    .filter(|(_, v)| v.is_u64())
                    .map(|(k, _)| k.clone())
                    .collect();
                let key = keys.choose(rng)?.clone();
                let bad = [json!(-1), json!(1.5), json!(1u64 << 40), json!(1e300)];
                obj.insert(key, bad.choose(rng)?.clone());
            }
            Malformed::BadPlayer => {
                obj.insert(
                    "to_move".into(),
                    json!(["red", "Black", "", "none"].choose(rng)),
                );
            }
            Malformed::PendingOnEmpty => {
                let key = ["pending", "slide_from"]
                    .into_iter()
                    .find(|k| obj.contains_key(*k))?;
                let occupied: Vec<&str> = ["black", "white"]
                    .iter()
                    .flat_map(|c| obj[*c].as_array().into_iter().flatten())
                    .filter_map(Value::as_str)
                    .collect();
                let empty: Vec<String> = cell_names(b)
                    .into_iter()
                    .filter(|n| !occupied.contains(&n.as_str()))
                    .collect();
                obj.insert(key.into(), json!(empty.choose(rng)?));
            }
            Malformed::Truncated => {
                let text = good.to_string();
                let cuts: Vec<usize> = (0..text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                return Some(text[..*cuts.choose(rng)?].to_string());
            }
            Malformed::NotAnObject => {
                let texts = [
                    "",
                    "null",
                    "[]",
                    "42",
                    "\"black\"",
                    "{",
                    "}",
                    "{\"to_move\":}",
                    "\u{0}",
                ];
                return Some(texts.choose(rng)?.to_string());
            }
        }
        Some(v.to_string())
    }
}

fn push_name(obj: &mut serde_json::Map<String, Value>, colour: &str, name: &str) {
    let list = obj.entry(colour).or_insert_with(|| json!([]));
    if let Some(items) = list.as_array_mut() {
        items.push(json!(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_failure_naming_the_seed_game_and_phase() {
        let cfg = GameConfig::Lifeline(LifelineOptions::new(3, Balance::Strong));
        let opts = SoakOptions {
            seed: 7,
            ..Default::default()
        };
        let (counts, failure) = guarded(&cfg, &opts, 12, |s| {
            s.counts.actions = 5;
            s.phase = "set-up";
            s.context = "the description".into();
            panic!("boom {}", 42);
        });
        assert_eq!(
            counts.actions, 5,
            "the counts made before the panic are kept"
        );
        let f = failure.expect("the panic is a failure");
        assert_eq!((f.seed, f.game, f.phase), (7, 12, "set-up"));
        assert!(f.message.contains("boom 42"), "{}", f.message);
        assert!(f.message.contains("the description"), "{}", f.message);
        let text = f.to_string();
        assert!(text.contains("--seed 7 --game 12"), "{text}");
        assert!(text.contains("\"game\":\"lifeline\""), "{text}");
        let (_, none) = guarded(&cfg, &opts, 12, |s| s.counts.actions = 1);
        assert!(none.is_none());
    }

    #[test]
    fn a_game_is_the_same_whatever_else_is_played() {
        let cfg = &all_configs()[3];
        let opts = SoakOptions::default();
        assert_eq!(soak_game(cfg, &opts, 3).0, soak_game(cfg, &opts, 3).0);
    }
}
