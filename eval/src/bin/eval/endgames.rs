//! `eval endgames`: the command lines of the truth set's build, score and reprove, turned
//! into the library's setups (the run config read and parsed here, once).

use burn::tensor::Device;
use eval::study::endgames::accuracy::{self, ScoreSetup};
use eval::study::endgames::{self, BuildSetup, ReproveSetup};
use eval::EvalError;
use std::path::PathBuf;

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
    set: PathBuf,
    /// df-pn's budget per position (a slower machine needs more than the build's).
    #[arg(long, default_value_t = 600.0)]
    seconds: f64,
    #[arg(long, default_value_t = 128)]
    table_mib: usize,
}

#[derive(Clone, Debug, clap::Args)]
pub struct BuildArgs {
    /// Run config: the game, `[search]` for the player, `[eval]` for games in flight.
    #[arg(long)]
    config: PathBuf,
    /// The player whose games the positions come from: CHECKPOINT@VISITS (or mcts:N).
    #[arg(long)]
    player: String,
    /// Positions to prove (a resumed build goes on to this many).
    #[arg(long, default_value_t = 200)]
    positions: usize,
    /// Empty cells of the positions taken: a range `10..=18`.
    #[arg(long, default_value = "10..=18")]
    empty: String,
    /// Komi values the games cycle through, under the komi pie (`0..=12` or `0,4,8`).
    #[arg(long, default_value = "0..=12")]
    komi: String,
    /// df-pn's budget per position; a position it does not prove in time is left out.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    #[arg(long, default_value_t = 128)]
    table_mib: usize,
    /// Decisions sampled among near-best moves at the start of each game (variety).
    #[arg(long, default_value_t = 12)]
    sample_plies: u32,
    #[arg(long, default_value_t = 0.1)]
    sample_margin: f32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    games_in_flight: Option<usize>,
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    device: Device,
}

#[derive(Clone, Debug, clap::Args)]
pub struct ScoreArgs {
    /// The set: a folder made by `eval endgames build`.
    #[arg(long)]
    set: PathBuf,
    /// Run config: `[search]` for the player (each position keeps its own game and komi).
    #[arg(long)]
    config: PathBuf,
    /// The player judged: CHECKPOINT@VISITS (or mcts:N).
    #[arg(long)]
    player: String,
    /// df-pn's budget for the position after the player's move (best-move accuracy).
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    #[arg(long, default_value_t = 128)]
    table_mib: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    device: Device,
}

/// Run an `eval endgames` command; returns what it prints.
pub fn run(command: Endgames) -> Result<String, EvalError> {
    match command {
        Endgames::Build(args) => endgames::build(&args.setup()?),
        Endgames::Score(args) => accuracy::score(&args.setup()?),
        Endgames::Reprove(args) => endgames::reprove(&ReproveSetup {
            set: args.set,
            seconds: args.seconds,
            table_mib: args.table_mib,
        }),
    }
}

impl BuildArgs {
    /// The library's setup of these arguments, their config read and parsed.
    fn setup(self) -> Result<BuildSetup, EvalError> {
        let (config, eval) = eval::config::load(&self.config)?;
        Ok(BuildSetup {
            config,
            eval,
            player: self.player,
            positions: self.positions,
            empty: self.empty,
            komi: self.komi,
            seconds: self.seconds,
            table_mib: self.table_mib,
            sample_plies: self.sample_plies,
            sample_margin: self.sample_margin,
            seed: self.seed,
            games_in_flight: self.games_in_flight,
            out: self.out,
            device: self.device,
        })
    }
}

impl ScoreArgs {
    /// The library's setup of these arguments, their config read and parsed (its `[search]`
    /// kept).
    fn setup(self) -> Result<ScoreSetup, EvalError> {
        let (config, _) = eval::config::load(&self.config)?;
        Ok(ScoreSetup {
            set: self.set,
            search: config.search,
            player: self.player,
            seconds: self.seconds,
            table_mib: self.table_mib,
            seed: self.seed,
            out: self.out,
            device: self.device,
        })
    }
}
