//! A truth set of solved endgames, and a player's accuracy on it: `eval endgames build` and
//! `eval endgames score`. Where a whole board is out of the solver's reach (Lifeline side 4,
//! docs/solve/README.md), its late positions are not, and they say how often a reference
//! player's value and moves are right where the truth is known.
//!
//! **Build.** The player plays itself, its first decisions sampled among near-best moves as a
//! balance study's games are (so the games differ, and the positions are the ones its own play
//! reaches); from each game one position with a target number of empty cells is taken (the
//! targets cycle through `--empty`, so every count is represented), and df-pn proves it. The
//! winner's strategy is checked and written as a certificate beside the set. A position not
//! proved within `--seconds` is counted and left out, so the set leans towards the positions
//! df-pn finds easier; the report says how many were left out.
//!
//! **Score.** The player's match search at its visits on every position: whether its value has
//! the sign of the proved result, the same for its raw value head, and, in the positions whose
//! mover wins, whether the move it plays keeps the win.
//!
//! **What it trusts.** A position's winner: its certificate, checked by
//! [`engine::proof::check`] before it is written (and again by `engine solve check`; CI checks
//! a sample of the committed set). The best-move judgement: the certificate where its strategy
//! plays the player's move; elsewhere df-pn's answer on the position after that move, with no
//! certificate (each judged position says which).
//!
//! **Resumption.** `positions.json` is rewritten atomically after every position, each
//! certificate before its entry; the same command resumes a killed build where it stopped (the
//! games are functions of their index, so a game played again is the same game).

use crate::error::EvalError;
use crate::matches::{play_games, MatchOptions};
use crate::players::{Brain, Contestant, RolloutEvaluator};
use crate::results::PlayerInfo;
use crate::score::Estimate;
use engine::dfpn::{Dfpn, StoneOrder};
use engine::proof::{self, Certificate, Header, FORMAT};
use engine::solve::Limits;
use engine::{AnyGame, Game, GameConfig, Player};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The set's index, beside its certificates.
pub const SET_FILE: &str = "positions.json";

/// `eval endgames`.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum Endgames {
    /// Play the player against itself and prove one late position of each game: a set of
    /// positions with certificates (positions.json and one .proof each, in --out).
    Build(BuildArgs),
    /// The player's value-sign and best-move accuracy on a set (score.json, .md, .svg).
    Score(ScoreArgs),
    /// Prove again the positions of a set whose certificate is missing (the largest are not
    /// committed), each checked and compared with its entry: the same winner and df-pn nodes.
    Reprove(ReproveArgs),
}

#[derive(Clone, Debug, clap::Args)]
pub struct ReproveArgs {
    #[arg(long)]
    pub set: PathBuf,
    /// df-pn's budget per position (a slower machine needs more than the build's).
    #[arg(long, default_value_t = 600.0)]
    pub seconds: f64,
    #[arg(long, default_value_t = 128)]
    pub table_mib: usize,
}

#[derive(Clone, Debug, clap::Args)]
pub struct BuildArgs {
    /// Run config: the game, `[search]` for the player, `[eval]` for games in flight.
    #[arg(long)]
    pub config: PathBuf,
    /// The player whose games the positions come from: CHECKPOINT@VISITS (or mcts:N).
    #[arg(long)]
    pub player: String,
    /// Positions to prove (a resumed build goes on to this many).
    #[arg(long, default_value_t = 200)]
    pub positions: usize,
    /// Empty cells of the positions taken: a range `10..=18`.
    #[arg(long, default_value = "10..=18")]
    pub empty: String,
    /// Komi values the games cycle through, under the komi pie (`0..=12` or `0,4,8`).
    #[arg(long, default_value = "0..=12")]
    pub komi: String,
    /// df-pn's budget per position; a position it does not prove in time is left out.
    #[arg(long, default_value_t = 60.0)]
    pub seconds: f64,
    #[arg(long, default_value_t = 128)]
    pub table_mib: usize,
    /// Decisions sampled among near-best moves at the start of each game (variety).
    #[arg(long, default_value_t = 12)]
    pub sample_plies: u32,
    #[arg(long, default_value_t = 0.1)]
    pub sample_margin: f32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub games_in_flight: Option<usize>,
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    pub device: burn::tensor::Device,
}

#[derive(Clone, Debug, clap::Args)]
pub struct ScoreArgs {
    /// The set: a folder made by `eval endgames build`.
    #[arg(long)]
    pub set: PathBuf,
    /// Run config: `[search]` for the player (each position keeps its own game and komi).
    #[arg(long)]
    pub config: PathBuf,
    /// The player judged: CHECKPOINT@VISITS (or mcts:N).
    #[arg(long)]
    pub player: String,
    /// df-pn's budget for the position after the player's move (best-move accuracy).
    #[arg(long, default_value_t = 60.0)]
    pub seconds: f64,
    #[arg(long, default_value_t = 128)]
    pub table_mib: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    pub device: burn::tensor::Device,
}

/// One proved position of a set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TruthPosition {
    /// The game (its komi included) and the actions from its start, in its notation.
    pub game: GameConfig,
    pub setup: Vec<String>,
    pub empty: usize,
    pub to_move: Player,
    pub winner: Player,
    /// The certificate's file, beside `positions.json`.
    pub proof: String,
    pub nodes: u64,
    pub seconds: f64,
    /// Moves of the winner's strategy (what the certificate holds).
    pub strategy: u64,
    /// The build's game it was taken from.
    pub source_game: usize,
}

/// A position the solver did not prove in its budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unproved {
    pub source_game: usize,
    pub empty: usize,
    pub seconds: f64,
}

/// `positions.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TruthSet {
    pub player: PlayerInfo,
    pub weights: Option<String>,
    /// The targets of empty cells, inclusive.
    pub empty: [usize; 2],
    pub seconds_per_position: f64,
    pub positions: Vec<TruthPosition>,
    pub unproved: Vec<Unproved>,
    pub command: String,
}

impl TruthSet {
    fn has_game(&self, index: usize) -> bool {
        self.positions.iter().any(|p| p.source_game == index)
            || self.unproved.iter().any(|u| u.source_game == index)
    }

    /// Read a set, an error naming the file.
    pub fn read(dir: &Path) -> Result<TruthSet, EvalError> {
        let path = dir.join(SET_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| EvalError::Io {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| EvalError::Json { path, source })
    }
}

/// Parse `lo..=hi` (or a single number) of empty cells.
pub fn parse_empty(text: &str) -> Result<[usize; 2], EvalError> {
    let bad = || {
        EvalError::Config(format!(
            "--empty `{text}`: expected a range such as 10..=18, low end at most the high end"
        ))
    };
    let num = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
    let (lo, hi) = match text.split_once("..=") {
        Some((a, b)) => (num(a)?, num(b)?),
        None => (num(text)?, num(text)?),
    };
    if lo > hi {
        return Err(bad());
    }
    Ok([lo, hi])
}

/// Empty cells of a position.
pub fn empty_cells(g: &AnyGame) -> usize {
    let stones = (g.stones(Player::Black) | g.stones(Player::White)).len();
    g.board().num_cells() - stones
}

/// The position of a game's line to prove: the first not yet over with exactly `target` empty
/// cells, else the one closest to it (the earlier on a tie). `line[i]` is the position after
/// `i` actions; returns its index.
pub fn pick(line: &[AnyGame], target: usize) -> Option<usize> {
    line.iter()
        .enumerate()
        .filter(|(_, g)| g.outcome().is_none())
        .min_by_key(|(i, g)| (empty_cells(g).abs_diff(target), *i))
        .map(|(i, _)| i)
}

/// df-pn as every proof of this module runs it: the engine's stone order, `seconds` per call.
fn solver(seconds: f64, table_bytes: usize) -> Dfpn<AnyGame> {
    Dfpn::new(table_bytes)
        .with_order(StoneOrder)
        .with_limits(Limits {
            nodes: None,
            time: Some(Duration::from_secs_f64(seconds)),
        })
}

/// The winner of `g` proved by df-pn within `seconds`, with a checked certificate; `None` when
/// the budget ran out (or no winner exists: a draw).
pub fn prove(
    g: &AnyGame,
    game: &GameConfig,
    setup: &[String],
    seconds: f64,
    table_bytes: usize,
) -> Result<Option<Certificate>, EvalError> {
    let mut dfpn = solver(seconds, table_bytes);
    let proved = dfpn.prove(g);
    let Some(wins) = proved.wins else {
        return Ok(None);
    };
    let winner = if wins {
        g.to_move()
    } else {
        g.to_move().opponent()
    };
    let Ok(strategy) = dfpn.strategy(g, winner) else {
        return Ok(None);
    };
    let certificate = Certificate {
        header: Header {
            format: FORMAT.into(),
            game: game.clone(),
            setup: setup.to_vec(),
            winner,
            moves: strategy.moves.len() as u64,
            search: proof::Search {
                nodes: proved.nodes,
                seconds: proved.seconds,
                repetitions: proved.repetitions,
                reproved: strategy.reproved,
            },
        },
        moves: strategy.moves,
    };
    proof::check(g, winner, &certificate.moves).map_err(|e| {
        EvalError::Config(format!(
            "df-pn's certificate after {} did not check (a solver bug): {e}",
            setup.join(" ")
        ))
    })?;
    Ok(Some(certificate))
}

/// Whether `g`'s player to move wins, by df-pn within `seconds` (`None`: not proved).
fn mover_wins(g: &AnyGame, seconds: f64, table_bytes: usize) -> Option<bool> {
    if let Some(o) = g.outcome() {
        return Some(o.winner == Some(g.to_move()));
    }
    solver(seconds, table_bytes).prove(g).wins
}

fn weights_of(player: &Contestant) -> Option<String> {
    match &player.brain {
        Brain::Net { model, .. } => model.meta.weights_checksum.clone(),
        _ => None,
    }
}

/// `eval endgames build`: returns a one-line summary.
pub fn build(args: &BuildArgs) -> Result<String, EvalError> {
    let (config, eval) = crate::study::studies::load_configs(&args.config)?;
    let base = &config.game;
    let player = Contestant::load(
        &args.player,
        base,
        &config.search,
        config.search.visits,
        &args.device,
    )?;
    let empty = parse_empty(&args.empty)?;
    if !(args.seconds > 0.0) {
        return Err(EvalError::Config(
            "--seconds: must be a number of seconds above 0".into(),
        ));
    }
    let games: Vec<GameConfig> = match base.komi() {
        Some(_) if !crate::study::openings::has_swap(base) => {
            crate::study::studies::parse_komis(&args.komi)?
                .into_iter()
                .map(|k| crate::study::balance::with_komi(base, k))
                .collect::<Result<_, _>>()?
        }
        _ => vec![base.clone()],
    };
    run::check_writable(&args.out)?;
    let mut set = match TruthSet::read(&args.out) {
        Ok(set) => {
            if set.weights != weights_of(&player) || set.player.name != player.info.name {
                return Err(EvalError::Config(format!(
                    "{}: this set was built by {} ({}), not by {}: use another --out",
                    args.out.join(SET_FILE).display(),
                    set.player.name,
                    set.weights.as_deref().unwrap_or("no weights"),
                    player.info.name
                )));
            }
            set
        }
        Err(EvalError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            TruthSet {
                player: player.info.clone(),
                weights: weights_of(&player),
                empty,
                seconds_per_position: args.seconds,
                positions: Vec::new(),
                unproved: Vec::new(),
                command: crate::study::studies::command_line(),
            }
        }
        Err(e) => return Err(e),
    };
    let batch = args.games_in_flight.unwrap_or(eval.games_in_flight).max(1);
    let bar = crate::matches::progress_bar(args.positions as u64, true, "positions proved");
    bar.set_position(set.positions.len() as u64);
    let targets: Vec<usize> = (empty[0]..=empty[1]).collect();
    let table_bytes = args.table_mib << 20;
    for round in 0.. {
        if set.positions.len() >= args.positions {
            break;
        }
        // A budget too small for the cells asked for would leave every position out, forever.
        if set.unproved.len() > args.positions {
            return Err(EvalError::Config(format!(
                "{}: df-pn left out {} positions (not proved in {} s) for {} proved: give it more --seconds or fewer --empty cells",
                args.out.join(SET_FILE).display(),
                set.unproved.len(),
                args.seconds,
                set.positions.len()
            )));
        }
        let first = round * batch;
        if (first..first + batch).all(|i| set.has_game(i)) {
            continue;
        }
        let game = &games[round % games.len()];
        let opts = MatchOptions {
            games: batch,
            opening_plies: 0,
            games_in_flight: batch,
            seed: args.seed,
            sample_plies: args.sample_plies,
            sample_margin: Some(args.sample_margin),
            ..MatchOptions::default()
        };
        let results = play_games(game, &player, &player, first, batch, &opts, None)?;
        for r in results {
            let index = r.index;
            if set.has_game(index) || set.positions.len() >= args.positions {
                continue;
            }
            let target = targets[index % targets.len()];
            let line = line_of(game, &r.record.actions)?;
            let Some(at) = pick(&line, target) else {
                continue;
            };
            let g = &line[at];
            let setup = r.record.actions[..at].to_vec();
            bar.set_message(format!(
                "positions proved (game {index}, {} empty)",
                empty_cells(g)
            ));
            match prove(g, game, &setup, args.seconds, table_bytes)? {
                Some(certificate) => {
                    let file = format!("p{:04}.proof", set.positions.len());
                    certificate
                        .write(&args.out.join(&file), g)
                        .map_err(|e| EvalError::Config(e.to_string()))?;
                    set.positions.push(TruthPosition {
                        game: game.clone(),
                        setup,
                        empty: empty_cells(g),
                        to_move: g.to_move(),
                        winner: certificate.header.winner,
                        proof: file,
                        nodes: certificate.header.search.nodes,
                        seconds: certificate.header.search.seconds,
                        strategy: certificate.header.moves,
                        source_game: index,
                    });
                    bar.inc(1);
                }
                None => set.unproved.push(Unproved {
                    source_game: index,
                    empty: empty_cells(g),
                    seconds: args.seconds,
                }),
            }
            write_set(&args.out, &set)?;
        }
    }
    bar.finish_and_clear();
    Ok(format!(
        "{} positions proved ({} left out: not proved in {} s) from the games of {}, in {}\n",
        set.positions.len(),
        set.unproved.len(),
        args.seconds,
        set.player.name,
        args.out.display()
    ))
}

/// `eval endgames reprove`: returns a one-line summary.
pub fn reprove(args: &ReproveArgs) -> Result<String, EvalError> {
    let set = TruthSet::read(&args.set)?;
    let missing: Vec<&TruthPosition> = set
        .positions
        .iter()
        .filter(|p| !args.set.join(&p.proof).exists())
        .collect();
    let bar = crate::matches::progress_bar(missing.len() as u64, true, "certificates remade");
    for p in &missing {
        let line = line_of(&p.game, &p.setup)?;
        let g = line.last().expect("a line holds its start");
        let table = args.table_mib << 20;
        let certificate = prove(g, &p.game, &p.setup, args.seconds, table)?.ok_or_else(|| {
            EvalError::Config(format!("{}: not proved in {} s", p.proof, args.seconds))
        })?;
        // df-pn is deterministic: the same position gives the same proof, whatever the clock.
        let header = &certificate.header;
        if header.winner != p.winner || header.search.nodes != p.nodes {
            return Err(EvalError::Config(format!(
                "{}: proved again, {} wins in {} nodes, where the set says {} in {}",
                p.proof, header.winner, header.search.nodes, p.winner, p.nodes
            )));
        }
        certificate
            .write(&args.set.join(&p.proof), g)
            .map_err(|e| EvalError::Config(e.to_string()))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(format!(
        "{} certificates remade, each the same winner and nodes as its entry, in {}\n",
        missing.len(),
        args.set.display()
    ))
}

fn write_set(dir: &Path, set: &TruthSet) -> Result<(), EvalError> {
    let text = serde_json::to_string_pretty(set).expect("a set serialises") + "\n";
    Ok(run::write_atomic(&dir.join(SET_FILE), text.as_bytes())?)
}

/// The positions of a game: `line[i]` after its first `i` actions.
fn line_of(game: &GameConfig, actions: &[String]) -> Result<Vec<AnyGame>, EvalError> {
    let mut g = game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
    let mut line = vec![g.clone()];
    for text in actions {
        let bad = |e: engine::GameError| EvalError::Config(format!("action `{text}`: {e}"));
        let a = g.parse_action(text).map_err(bad)?;
        g.try_apply(a).map_err(bad)?;
        line.push(g.clone());
    }
    Ok(line)
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
    args: &ScoreArgs,
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
        keeps_win(g, best, p, args)?
    } else {
        (None, None)
    };
    Ok(Judged {
        proof: p.proof.clone(),
        empty: p.empty,
        mover_wins,
        value: result.value as f64,
        // The value head's value is Black's.
        value_head: crate::study::practical::value_head(g, player).map(|v| match g.to_move() {
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
    args: &ScoreArgs,
) -> Result<(Option<bool>, Option<Settled>), EvalError> {
    // A set may lack its largest certificates (`eval endgames reprove` makes them again):
    // df-pn settles the move then.
    let path = args.set.join(&p.proof);
    if path.exists() {
        let (certificate, _) =
            Certificate::read(&path).map_err(|e| EvalError::Config(e.to_string()))?;
        if certificate.moves.get(&g.hash()) == Some(&best) {
            return Ok((Some(true), Some(Settled::Certificate)));
        }
    }
    let mut after = g.clone();
    after.apply(best);
    let keeps = mover_wins_after(&after, p.to_move, args.seconds, args.table_mib << 20);
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
pub fn score(args: &ScoreArgs) -> Result<String, EvalError> {
    let (config, _) = crate::study::studies::load_configs(&args.config)?;
    let set = TruthSet::read(&args.set)?;
    let player = Contestant::load_for(
        &args.player,
        None,
        &config.search,
        config.search.visits,
        &args.device,
    )?;
    if !(args.seconds > 0.0) {
        return Err(EvalError::Config(
            "--seconds: must be a number of seconds above 0".into(),
        ));
    }
    run::check_writable(&args.out)?;
    let bar = crate::matches::progress_bar(set.positions.len() as u64, true, "positions judged");
    let mut judged = Vec::with_capacity(set.positions.len());
    for (i, p) in set.positions.iter().enumerate() {
        judged.push(judge(p, &player, args, args.seed.wrapping_add(i as u64))?);
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
        set: args.set.display().to_string(),
        set_player: set.player.name.clone(),
        all,
        by_empty,
        judged,
        intervals: INTERVALS.into(),
        command: crate::study::studies::command_line(),
    };
    let md = markdown(&score, &set);
    let json = serde_json::to_string_pretty(&score).expect("a score serialises") + "\n";
    run::write_atomic(&args.out.join("score.json"), json.as_bytes())?;
    run::write_atomic(&args.out.join("score.md"), md.as_bytes())?;
    run::write_atomic(&args.out.join("score.svg"), svg(&score).as_bytes())?;
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

    fn lifeline(size: usize) -> GameConfig {
        serde_json::from_str(&format!(
            r#"{{"game":"lifeline","options":{{"size":{size},"balance":"komi","komi":3}}}}"#
        ))
        .unwrap()
    }

    /// A side-3 position with 8 empty cells, not over, from the first random game (by seed)
    /// that reaches one.
    fn late_side_3_position() -> (GameConfig, AnyGame, Vec<String>) {
        let game = lifeline(3);
        let mut legal = Vec::new();
        for seed in 0.. {
            let mut g = game.start().unwrap();
            let mut setup = Vec::new();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            while empty_cells(&g) > 8 && g.outcome().is_none() {
                g.legal_actions(&mut legal);
                let a = legal[rand::Rng::gen_range(&mut rng, 0..legal.len())];
                setup.push(g.action_to_string(a));
                g.apply(a);
            }
            if g.outcome().is_none() {
                return (game, g, setup);
            }
        }
        unreachable!("some random game reaches 8 empty cells")
    }

    // Fails if a reversed or malformed range is accepted (a build would take no position).
    #[test]
    fn empty_ranges_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_empty("10..=18").unwrap(), [10, 18]);
        assert_eq!(parse_empty("12").unwrap(), [12, 12]);
        assert!(parse_empty("18..=10").is_err());
        assert!(parse_empty("a..=3").is_err());
    }

    // Fails if the pick ignores the target, takes a finished position, or prefers a later
    // position among equally close ones.
    #[test]
    fn the_pick_is_the_first_position_closest_to_the_target() {
        let game = lifeline(3);
        let mut g = game.start().unwrap();
        let mut line = vec![g.clone()];
        let mut legal = Vec::new();
        while g.outcome().is_none() {
            g.legal_actions(&mut legal);
            g.apply(legal[0]);
            line.push(g.clone());
        }
        let at = pick(&line, 10).unwrap();
        assert!(line[at].outcome().is_none());
        let best = line
            .iter()
            .filter(|g| g.outcome().is_none())
            .map(|g| empty_cells(g).abs_diff(10))
            .min()
            .unwrap();
        assert_eq!(empty_cells(&line[at]).abs_diff(10), best);
        assert!(line[..at]
            .iter()
            .all(|g| g.outcome().is_some() || empty_cells(g).abs_diff(10) > best));
        // Past the start's empty cells, the start itself.
        assert_eq!(pick(&line, 1000), Some(0));
    }

    // Fails if a position's certificate does not check, or names another winner than the
    // alpha-beta solver finds (the two solvers share only the rules).
    #[test]
    fn a_late_side_3_position_is_proved_with_a_certificate_that_agrees_with_alpha_beta() {
        let (game, g, setup) = late_side_3_position();
        let cert = prove(&g, &game, &setup, 60.0, 1 << 20).unwrap().unwrap();
        proof::check(&g, cert.header.winner, &cert.moves).unwrap();
        let solved = engine::solve::Solver::new(1 << 16).solve(&g);
        let ab_winner = match solved.value.unwrap() {
            engine::solve::Value::Win => g.to_move(),
            engine::solve::Value::Loss => g.to_move().opponent(),
            engine::solve::Value::Draw => panic!("no draws expected on side 3"),
        };
        assert_eq!(cert.header.winner, ab_winner);
    }

    // Fails if a missing certificate is not remade, or is remade with another strategy than
    // the one the build wrote (the committed set relies on remaking its largest certificates).
    #[test]
    fn a_missing_certificate_is_remade_with_the_same_strategy() {
        let (game, g, setup) = late_side_3_position();
        let cert = prove(&g, &game, &setup, 60.0, 1 << 20).unwrap().unwrap();
        let dir = std::env::temp_dir().join(format!("endgames-reprove-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let set = TruthSet {
            player: crate::players::Contestant::random().info,
            weights: None,
            empty: [8, 8],
            seconds_per_position: 60.0,
            positions: vec![TruthPosition {
                game: game.clone(),
                setup: setup.clone(),
                empty: empty_cells(&g),
                to_move: g.to_move(),
                winner: cert.header.winner,
                proof: "p0000.proof".into(),
                nodes: cert.header.search.nodes,
                seconds: cert.header.search.seconds,
                strategy: cert.header.moves,
                source_game: 0,
            }],
            unproved: Vec::new(),
            command: String::new(),
        };
        write_set(&dir, &set).unwrap();
        let args = ReproveArgs {
            set: dir.clone(),
            seconds: 60.0,
            table_mib: 1,
        };
        reprove(&args).unwrap();
        let (again, _) = Certificate::read(&dir.join("p0000.proof")).unwrap();
        assert_eq!(again.header.winner, cert.header.winner);
        assert_eq!(again.moves, cert.moves);
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
