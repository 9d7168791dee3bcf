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
//! **Score** ([`accuracy`]). The player's match search at its visits on every position: whether
//! its value has the sign of the proved result, the same for its raw value head, and, in the
//! positions whose mover wins, whether the move it plays keeps the win.
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

pub mod accuracy;

use crate::config::EvalConfig;
use crate::error::EvalError;
use crate::matches::{play_games, GameResult, MatchOptions};
use crate::players::{Brain, Contestant};
use crate::results::PlayerInfo;
use crate::study::balance::{parse_komis, with_komi};
use crate::study::openings::has_swap;
use crate::study::report::command_line;
use burn::tensor::Device;
use engine::dfpn::{Dfpn, StoneOrder};
use engine::proof::{self, Certificate, Header, FORMAT};
use engine::solve::Limits;
use engine::{AnyGame, Game, GameConfig, Player};
use indicatif::ProgressBar;
use selfplay::config::RunConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The set's index, beside its certificates.
pub const SET_FILE: &str = "positions.json";

/// What `eval endgames build` is given: its run config, read and parsed once by the caller,
/// and the build's budgets (each field is the option of the same name).
#[derive(Clone, Debug)]
pub struct BuildSetup {
    /// The game, `[search]` for the player.
    pub config: RunConfig,
    /// `[eval]`: games in flight.
    pub eval: EvalConfig,
    /// The player whose games the positions come from: CHECKPOINT@VISITS (or mcts:N).
    pub player: String,
    /// Positions to prove (a resumed build goes on to this many).
    pub positions: usize,
    /// Empty cells of the positions taken, as written: a range `10..=18`.
    pub empty: String,
    /// Komi values the games cycle through under the komi pie, as written: `0..=12` or `0,4,8`.
    pub komi: String,
    /// df-pn's budget per position; a position it does not prove in time is left out.
    pub seconds: f64,
    pub table_mib: usize,
    /// Decisions sampled among near-best moves at the start of each game (variety).
    pub sample_plies: u32,
    pub sample_margin: f32,
    pub seed: u64,
    /// Games played at once; `None`: `[eval]` games_in_flight.
    pub games_in_flight: Option<usize>,
    /// The folder of the set.
    pub out: PathBuf,
    /// Device of a network player.
    pub device: Device,
}

/// What `eval endgames reprove` is given.
#[derive(Clone, Debug)]
pub struct ReproveSetup {
    /// The set: a folder made by a build.
    pub set: PathBuf,
    /// df-pn's budget per position (a slower machine needs more than the build's).
    pub seconds: f64,
    pub table_mib: usize,
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
pub fn build(setup: &BuildSetup) -> Result<String, EvalError> {
    let base = &setup.config.game;
    let search = &setup.config.search;
    let player = Contestant::load(&setup.player, base, search, search.visits, &setup.device)?;
    let empty = parse_empty(&setup.empty)?;
    if !(setup.seconds > 0.0) {
        return Err(EvalError::Config(
            "--seconds: must be a number of seconds above 0".into(),
        ));
    }
    let games = games_of(base, &setup.komi)?;
    run::check_writable(&setup.out)?;
    let mut set = open_set(setup, &player, empty)?;
    let batch = setup
        .games_in_flight
        .unwrap_or(setup.eval.games_in_flight)
        .max(1);
    let bar = run::progress::bar(setup.positions as u64, "positions proved", true);
    bar.set_position(set.positions.len() as u64);
    let targets: Vec<usize> = (empty[0]..=empty[1]).collect();
    for round in 0.. {
        if set.positions.len() >= setup.positions {
            break;
        }
        check_left_out(setup, &set)?;
        let first = round * batch;
        if (first..first + batch).all(|i| set.has_game(i)) {
            continue;
        }
        let game = &games[round % games.len()];
        let opts = MatchOptions {
            games: batch,
            opening_plies: 0,
            games_in_flight: batch,
            seed: setup.seed,
            sample_plies: setup.sample_plies,
            sample_margin: Some(setup.sample_margin),
            ..MatchOptions::default()
        };
        for r in play_games(game, &player, &player, first, batch, &opts, None)? {
            if set.has_game(r.index) || set.positions.len() >= setup.positions {
                continue;
            }
            let target = targets[r.index % targets.len()];
            take_position(setup, &mut set, game, &r, target, &bar)?;
        }
    }
    bar.finish_and_clear();
    Ok(format!(
        "{} positions proved ({} left out: not proved in {} s) from the games of {}, in {}\n",
        set.positions.len(),
        set.unproved.len(),
        setup.seconds,
        set.player.name,
        setup.out.display()
    ))
}

/// The games a build cycles through: under the komi pie, the base game at every komi of
/// `komi`; otherwise the base game alone.
fn games_of(base: &GameConfig, komi: &str) -> Result<Vec<GameConfig>, EvalError> {
    match base.komi() {
        Some(_) if !has_swap(base) => parse_komis(komi)?
            .into_iter()
            .map(|k| with_komi(base, k))
            .collect(),
        _ => Ok(vec![base.clone()]),
    }
}

/// The set in `out` to go on with, refused if another player built it; a new one where there
/// is none.
fn open_set(
    setup: &BuildSetup,
    player: &Contestant,
    empty: [usize; 2],
) -> Result<TruthSet, EvalError> {
    match TruthSet::read(&setup.out) {
        Ok(set) => {
            if set.weights != weights_of(player) || set.player.name != player.info.name {
                return Err(EvalError::Config(format!(
                    "{}: this set was built by {} ({}), not by {}: use another --out",
                    setup.out.join(SET_FILE).display(),
                    set.player.name,
                    set.weights.as_deref().unwrap_or("no weights"),
                    player.info.name
                )));
            }
            Ok(set)
        }
        Err(EvalError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(TruthSet {
                player: player.info.clone(),
                weights: weights_of(player),
                empty,
                seconds_per_position: setup.seconds,
                positions: Vec::new(),
                unproved: Vec::new(),
                command: command_line(),
            })
        }
        Err(e) => Err(e),
    }
}

/// A budget too small for the cells asked for would leave every position out, forever: the
/// build stops once more positions were left out than it is to prove.
fn check_left_out(setup: &BuildSetup, set: &TruthSet) -> Result<(), EvalError> {
    if set.unproved.len() > setup.positions {
        return Err(EvalError::Config(format!(
            "{}: df-pn left out {} positions (not proved in {} s) for {} proved: give it more --seconds or fewer --empty cells",
            setup.out.join(SET_FILE).display(),
            set.unproved.len(),
            setup.seconds,
            set.positions.len()
        )));
    }
    Ok(())
}

/// The position of game `r` closest to `target` empty cells, proved into `set` (its
/// certificate written first) or left out of it; then the set is written.
fn take_position(
    setup: &BuildSetup,
    set: &mut TruthSet,
    game: &GameConfig,
    r: &GameResult,
    target: usize,
    bar: &ProgressBar,
) -> Result<(), EvalError> {
    let index = r.index;
    let line = line_of(game, &r.record.actions)?;
    let Some(at) = pick(&line, target) else {
        return Ok(());
    };
    let g = &line[at];
    let actions = r.record.actions[..at].to_vec();
    bar.set_message(format!("(game {index}, {} empty)", empty_cells(g)));
    match prove(g, game, &actions, setup.seconds, setup.table_mib << 20)? {
        Some(certificate) => {
            let file = format!("p{:04}.proof", set.positions.len());
            certificate
                .write(&setup.out.join(&file), g)
                .map_err(|e| EvalError::Config(e.to_string()))?;
            set.positions.push(TruthPosition {
                game: game.clone(),
                setup: actions,
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
            seconds: setup.seconds,
        }),
    }
    write_set(&setup.out, set)
}

/// `eval endgames reprove`: returns a one-line summary.
pub fn reprove(setup: &ReproveSetup) -> Result<String, EvalError> {
    let set = TruthSet::read(&setup.set)?;
    let missing: Vec<&TruthPosition> = set
        .positions
        .iter()
        .filter(|p| !setup.set.join(&p.proof).exists())
        .collect();
    let bar = run::progress::bar(missing.len() as u64, "certificates remade", true);
    for p in &missing {
        let line = line_of(&p.game, &p.setup)?;
        let g = line.last().expect("a line holds its start");
        let table = setup.table_mib << 20;
        let certificate = prove(g, &p.game, &p.setup, setup.seconds, table)?.ok_or_else(|| {
            EvalError::Config(format!("{}: not proved in {} s", p.proof, setup.seconds))
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
            .write(&setup.set.join(&p.proof), g)
            .map_err(|e| EvalError::Config(e.to_string()))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(format!(
        "{} certificates remade, each the same winner and nodes as its entry, in {}\n",
        missing.len(),
        setup.set.display()
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

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
        let args = ReproveSetup {
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
}
