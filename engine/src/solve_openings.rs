//! Every opening class of a game proved by df-pn ([`crate::dfpn`]), one certificate per class,
//! in pieces that resume: `engine solve openings`.
//!
//! A class is a first turn of Black's up to the board's symmetries. Where White may swap after
//! it (strong and weak pie), the position proved is the one after the swap: the swap wins for
//! White exactly where the opening, declined, would win for its maker, so its winner says
//! whether White should swap. Without a swap (komi pie) the position proved is the one after
//! the opening. Each proof is written to `OUT/NAME.proof` as soon as it is found (through a
//! rename, so a kill leaves no half file); a later run with the same `OUT` reads those headers
//! and proves only the rest, so a solve can be killed, resumed, or split across machines.

use crate::dfpn::{Dfpn, MoveOrder, StoneOrder, Strategy};
use crate::game::{Action, Game, Player};
use crate::games::{AnyGame, GameConfig};
use crate::proof::{self, Certificate, Header, ProofError, Search, FORMAT};
use crate::solve::{turn_classes, Limits};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One class of Black's first turns, and the position that decides it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpeningClass {
    /// The representative turn's actions joined by `+` (`c3` or `b2+d4`): a file name too.
    pub name: String,
    pub opening: Vec<Action>,
    /// Turns in the class (the representative and its images).
    pub members: usize,
    /// The actions to the position proved: the opening, then `swap` where White may swap.
    pub setup: Vec<Action>,
    /// `setup` in the game's notation.
    pub setup_names: Vec<String>,
}

/// Black's first-turn classes of `game` (its start), in the order of the legal actions.
pub fn opening_classes(game: &AnyGame) -> Vec<OpeningClass> {
    turn_classes(game)
        .into_iter()
        .map(|(members, after)| {
            let opening = members[0].clone();
            let mut setup = opening.clone();
            if after.outcome().is_none() && after.is_legal(Action::Swap) {
                setup.push(Action::Swap);
            }
            let names = |actions: &[Action]| -> Vec<String> {
                actions.iter().map(|&a| game.action_to_string(a)).collect()
            };
            OpeningClass {
                name: names(&opening).join("+"),
                setup_names: names(&setup),
                opening,
                members: members.len(),
                setup,
            }
        })
        .collect()
}

/// How a class's result was reached in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Proved by this run; its certificate written (and checked, unless told not to).
    Proved,
    /// Proved by an earlier run: its certificate was already in the output folder.
    Resumed,
    /// The class's budget ran out first.
    Unknown,
    /// Neither player wins by a strategy the search can prove (a draw by repetition or turn
    /// cap somewhere in every line).
    NoStrategy,
}

/// One class's line of the summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassResult {
    pub name: String,
    pub members: usize,
    pub setup: Vec<String>,
    pub status: Status,
    /// The winner of the position proved.
    pub winner: Option<Player>,
    /// Whether the opening wins for its maker with the swap declined (the class is one to
    /// swap) or, without a swap, wins for Black outright.
    pub opener_wins: Option<bool>,
    pub search: Search,
    /// The certificate's file name in the output folder.
    pub proof: Option<String>,
    pub proof_bytes: u64,
    pub moves: u64,
    /// What the checker saw (this run's proofs only, unless `--no-check`).
    pub checked: Option<proof::Checked>,
}

/// What `solve openings` found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub game: GameConfig,
    pub classes: Vec<ClassResult>,
    /// The answer for the whole game with perfect play, or why there is none yet.
    pub verdict: String,
    /// Classes White should swap (pie rules), as far as proved.
    pub swap: Vec<String>,
    /// Classes that win for Black outright (no swap), as far as proved.
    pub winning_openings: Vec<String>,
}

/// The options of [`solve_openings`].
#[derive(Clone, Debug)]
pub struct SolveOptions {
    pub out: PathBuf,
    pub threads: usize,
    /// The table of each thread.
    pub table_bytes: usize,
    /// Each class's budget (proof and strategy extraction together).
    pub class_limits: Limits,
    /// Verify each new certificate with the checker before counting it.
    pub check: bool,
    /// Only the classes of these names (all when empty).
    pub only: Vec<String>,
    /// Show progress bars.
    pub progress: bool,
    /// Makes each thread's move order; `None`: [`StoneOrder`].
    pub order: Option<OrderMaker>,
    /// New children start from their mobility ([`Dfpn::with_mobility`]).
    pub mobility: bool,
}

/// Makes one solver thread's move order (each thread needs its own: an order may keep state,
/// such as a network and its cache of priors).
#[derive(Clone)]
pub struct OrderMaker(pub Arc<dyn Fn() -> Box<dyn MoveOrder<AnyGame>> + Send + Sync>);

impl std::fmt::Debug for OrderMaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OrderMaker")
    }
}

/// The command line of a solve (`engine solve openings`, and `eval solve`, which adds a
/// network's move order): one definition for both binaries.
#[derive(clap::Args, Debug)]
pub struct OpeningsArgs {
    /// A game config, e.g. configs/lifeline-5-quick.toml (its `game` and `[options]`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Game as JSON when no config is given.
    #[arg(long, default_value = r#"{"game":"lifeline","options":{"size":3}}"#)]
    pub game: String,
    /// The folder of the certificates, summary.json and summary.md.
    #[arg(long)]
    pub out: PathBuf,
    /// Classes proved at once, one solver and table each.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Memory for the tables of all threads together, in MiB.
    #[arg(long, default_value_t = 1024)]
    pub table_mib: usize,
    /// Give up on a class after this many seconds (0: no limit).
    #[arg(long, default_value_t = 0.0)]
    pub class_seconds: f64,
    /// Prove only these classes (names as in the summary, e.g. b2+d4); repeatable.
    #[arg(long)]
    pub only: Vec<String>,
    /// Write certificates without checking them first.
    #[arg(long)]
    pub no_check: bool,
    /// Start new positions at proof and disproof numbers of 1 (plain df-pn) instead of their
    /// mobility: the solver before mobility, to compare.
    #[arg(long)]
    pub no_mobility: bool,
}

impl OpeningsArgs {
    /// The game and the options these arguments ask for (with [`StoneOrder`]).
    pub fn options(&self) -> anyhow::Result<(GameConfig, SolveOptions)> {
        let game = GameConfig::load(self.config.as_deref(), &self.game)?;
        if !(self.class_seconds >= 0.0 && self.class_seconds.is_finite()) {
            anyhow::bail!("--class-seconds must be a number of seconds, 0 or more");
        }
        let opts = SolveOptions {
            out: self.out.clone(),
            threads: self.threads.max(1),
            table_bytes: self.table_mib.max(1) << 20,
            class_limits: Limits {
                nodes: None,
                time: (self.class_seconds > 0.0)
                    .then(|| Duration::from_secs_f64(self.class_seconds)),
            },
            check: !self.no_check,
            only: self.only.clone(),
            progress: true,
            order: None,
            mobility: !self.no_mobility,
        };
        Ok((game, opts))
    }

    /// Solve with `order` (`None`: [`StoneOrder`]) and print the summary and the verdict.
    pub fn run(&self, order: Option<OrderMaker>) -> anyhow::Result<Summary> {
        let (game, opts) = self.options()?;
        let opts = SolveOptions { order, ..opts };
        let summary = solve_openings(&game, &opts)?;
        let md = opts.out.join("summary.md");
        let text =
            std::fs::read_to_string(&md).map_err(|source| ProofError::Io { path: md, source })?;
        print!("{text}");
        println!("{}", summary.verdict);
        Ok(summary)
    }
}

/// Prove every opening class of `config` (resuming from the certificates already in
/// `opts.out`) and write `summary.json` and `summary.md` there.
pub fn solve_openings(config: &GameConfig, opts: &SolveOptions) -> Result<Summary, ProofError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ProofError::Io { path, source }
    };
    std::fs::create_dir_all(&opts.out).map_err(io(&opts.out))?;
    let start = config
        .start()
        .map_err(|e| ProofError::Setup(e.to_string()))?;
    let classes: Vec<OpeningClass> = opening_classes(&start)
        .into_iter()
        .filter(|c| opts.only.is_empty() || opts.only.contains(&c.name))
        .collect();
    let mut results: Vec<Option<ClassResult>> = Vec::with_capacity(classes.len());
    for class in &classes {
        results.push(resumed(config, class, &opts.out)?);
    }
    let todo: Vec<usize> = (0..classes.len())
        .filter(|&i| results[i].is_none())
        .collect();
    let bar = progress_bar(opts.progress, classes.len(), classes.len() - todo.len());
    let found = prove_classes(config, &classes, &todo, opts, &bar)?;
    bar.finish_and_clear();
    for (i, r) in found {
        results[i] = Some(r);
    }
    let summary = summarise(config, results.into_iter().flatten().collect());
    let json = serde_json::to_string_pretty(&summary).expect("summaries serialise");
    let path = opts.out.join("summary.json");
    replace(&path, (json + "\n").as_bytes()).map_err(io(&path))?;
    let path = opts.out.join("summary.md");
    replace(&path, markdown(&summary).as_bytes()).map_err(io(&path))?;
    Ok(summary)
}

/// Write `path` through a temporary file and a rename: a killed solve leaves the summary it
/// had, never half of a new one.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

fn progress_bar(show: bool, total: usize, done: usize) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} classes proved  {msg}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar.set_position(done as u64);
    bar
}

/// The class's result from an earlier run's certificate, if there is one.
fn resumed(
    config: &GameConfig,
    class: &OpeningClass,
    out: &Path,
) -> Result<Option<ClassResult>, ProofError> {
    let file = format!("{}.proof", class.name);
    let path = out.join(&file);
    if !path.exists() {
        return Ok(None);
    }
    let header = proof::read_header_of(&path)?;
    if &header.game != config {
        return Err(ProofError::Format {
            path,
            why: "it proves a position of another game or option set; use another --out".into(),
        });
    }
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut r = class_result(class, Status::Resumed, Some(header.winner));
    r.search = header.search.clone();
    r.proof = Some(file);
    r.proof_bytes = bytes;
    r.moves = header.moves;
    Ok(Some(r))
}

fn class_result(class: &OpeningClass, status: Status, winner: Option<Player>) -> ClassResult {
    // The opening's maker is Black; after a swap White holds its stones and wins exactly
    // where the declined opening would have won for its maker.
    let swapped = class.setup.last() == Some(&Action::Swap);
    let opener_wins = winner.map(|w| (w == Player::White) == swapped);
    ClassResult {
        name: class.name.clone(),
        members: class.members,
        setup: class.setup_names.clone(),
        status,
        winner,
        opener_wins,
        search: Search::default(),
        proof: None,
        proof_bytes: 0,
        moves: 0,
        checked: None,
    }
}

/// Prove the classes `todo` on `opts.threads` threads, each with its own solver and table.
fn prove_classes(
    config: &GameConfig,
    classes: &[OpeningClass],
    todo: &[usize],
    opts: &SolveOptions,
    bar: &indicatif::ProgressBar,
) -> Result<Vec<(usize, ClassResult)>, ProofError> {
    let next = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    let threads = opts.threads.clamp(1, todo.len().max(1));
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<(), ProofError> {
                    let current = Arc::new(Mutex::new(String::new()));
                    let mut dfpn = new_solver(opts, threads, bar.clone(), current.clone());
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = todo.get(k) else {
                            return Ok(());
                        };
                        classes[i]
                            .name
                            .clone_into(&mut current.lock().expect("not poisoned"));
                        let r = prove_class(config, &classes[i], opts, &mut dfpn)?;
                        if matches!(r.status, Status::Proved) {
                            bar.inc(1);
                        }
                        found
                            .lock()
                            .expect("no thread panics holding it")
                            .push((i, r));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("solver threads do not panic"))
    })?;
    Ok(found.into_inner().expect("no thread panics holding it"))
}

/// A thread's solver; its progress reports name the class it works on (`current`).
fn new_solver(
    opts: &SolveOptions,
    threads: usize,
    bar: indicatif::ProgressBar,
    current: Arc<Mutex<String>>,
) -> Dfpn<AnyGame> {
    let order = opts.order.as_ref().map_or_else(
        || Box::new(StoneOrder) as Box<dyn MoveOrder<AnyGame>>,
        |m| (m.0)(),
    );
    Dfpn::new(opts.table_bytes / threads)
        .with_order(order)
        .with_mobility(opts.mobility)
        .with_limits(opts.class_limits)
        .with_progress(Duration::from_secs(1), move |p| {
            let rate = p.nodes as f64 / p.seconds.max(1e-9);
            let class = current.lock().expect("not poisoned").clone();
            bar.set_message(format!(
                "{class}: {} nodes in {:.0} s, {rate:.0}/s, table {:.0}% full",
                p.nodes,
                p.seconds,
                100.0 * p.table_fill
            ));
        })
}

/// Prove one class, write its certificate and (if asked) check it.
fn prove_class(
    config: &GameConfig,
    class: &OpeningClass,
    opts: &SolveOptions,
    dfpn: &mut Dfpn<AnyGame>,
) -> Result<ClassResult, ProofError> {
    let mut position = config
        .start()
        .map_err(|e| ProofError::Setup(e.to_string()))?;
    class.setup.iter().for_each(|&a| position.apply(a));
    // The table is kept between classes: its entries are facts about positions, and openings
    // share much of their play.
    let proved = dfpn.prove(&position);
    let mut search = Search {
        nodes: proved.nodes,
        seconds: proved.seconds,
        repetitions: proved.repetitions,
        reproved: 0,
    };
    let Some(mover_wins) = proved.wins else {
        let mut r = class_result(class, Status::Unknown, None);
        r.search = search;
        return Ok(r);
    };
    let mover = position.to_move();
    let winner = if mover_wins { mover } else { mover.opponent() };
    let strategy = match dfpn.strategy(&position, winner) {
        Ok(s) => s,
        Err(e) => {
            let status = match e {
                crate::dfpn::StrategyError::Budget => Status::Unknown,
                crate::dfpn::StrategyError::NoStrategy | crate::dfpn::StrategyError::Repeats => {
                    Status::NoStrategy
                }
            };
            let mut r = class_result(class, status, None);
            r.search = search;
            return Ok(r);
        }
    };
    search.reproved = strategy.reproved;
    write_certificate(config, class, &position, strategy, search, opts)
}

fn write_certificate(
    config: &GameConfig,
    class: &OpeningClass,
    position: &AnyGame,
    strategy: Strategy,
    search: Search,
    opts: &SolveOptions,
) -> Result<ClassResult, ProofError> {
    let mut r = class_result(class, Status::Proved, Some(strategy.winner));
    let cert = Certificate {
        header: Header {
            format: FORMAT.into(),
            game: config.clone(),
            setup: r.setup.clone(),
            winner: strategy.winner,
            moves: strategy.moves.len() as u64,
            search: search.clone(),
        },
        moves: strategy.moves,
    };
    if opts.check {
        r.checked = Some(proof::check(position, cert.header.winner, &cert.moves)?);
    }
    let file = format!("{}.proof", class.name);
    r.proof_bytes = cert.write(&opts.out.join(&file), position)?;
    r.proof = Some(file);
    r.moves = cert.moves.len() as u64;
    r.search = search;
    Ok(r)
}

fn summarise(config: &GameConfig, classes: Vec<ClassResult>) -> Summary {
    let pie = classes
        .iter()
        .any(|c| c.setup.last().is_some_and(|a| a == "swap"));
    let names = |want: bool| -> Vec<String> {
        classes
            .iter()
            .filter(|c| c.opener_wins == Some(want))
            .map(|c| c.name.clone())
            .collect()
    };
    let (winning, losing) = (names(true), names(false));
    let open = classes.len() - winning.len() - losing.len();
    let verdict = if pie && open == 0 {
        "white wins: every opening is lost for its maker once White swaps or declines the swap"
            .to_string()
    } else if pie {
        format!("unknown: {open} of {} classes not proved", classes.len())
    } else if let Some(first) = winning.first() {
        format!("black wins, with {first} (and every opening listed as winning)")
    } else if open == 0 {
        "white wins: every opening is lost for Black".to_string()
    } else {
        format!(
            "unknown: no winning opening among the proved; {open} of {} classes not proved",
            classes.len()
        )
    };
    Summary {
        game: config.clone(),
        verdict,
        swap: if pie { winning.clone() } else { Vec::new() },
        winning_openings: if pie { Vec::new() } else { winning },
        classes,
    }
}

fn markdown(s: &Summary) -> String {
    let mut out = format!(
        "# Opening classes proved by df-pn\n\nGame: `{}`\n\n**{}**\n\n",
        serde_json::to_string(&s.game).expect("configs serialise"),
        s.verdict
    );
    out += "| class | turns | position proved | status | winner | opener wins | nodes | seconds | proof bytes |\n|---|---|---|---|---|---|---|---|---|\n";
    for c in &s.classes {
        let show = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        out += &format!(
            "| {} | {} | {} | {:?} | {} | {} | {} | {:.1} | {} |\n",
            c.name,
            c.members,
            c.setup.join(" "),
            c.status,
            show(c.winner.map(|w| w.to_string())),
            show(c.opener_wins.map(|w| w.to_string())),
            c.search.nodes,
            c.search.seconds,
            c.proof_bytes
        );
    }
    out
}
