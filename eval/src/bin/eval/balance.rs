//! `eval balance`: the studies' command lines, turned into the library's setups. The run
//! config is read and parsed here, once, and `--komi` turned into its values (before the
//! config for the komi study and the pie table, after it for the practical study: the order
//! their errors have always come in); the library takes plain values.

use burn::tensor::Device;
use eval::study::balance::{parse_komis, BalanceSetup};
use eval::study::practical::PracticalSetup;
use eval::study::{first_player, komi, pie_table, practical, swapmap};
use eval::EvalError;
use std::path::PathBuf;

/// What every study takes from the command line.
#[derive(Clone, Debug, clap::Args)]
pub struct StudyArgs {
    /// Run config: the game and its options, `[search]` for network players, `[eval]` for games
    /// in flight.
    #[arg(long)]
    config: PathBuf,
    /// A player: mcts:N or CHECKPOINT@VISITS; repeat it to compare strengths side by side.
    #[arg(long = "player", required = true)]
    players: Vec<String>,
    /// Games per opening class played out (and from the empty board), per game, komi and
    /// player.
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Directory the JSON, SVG and Markdown go to.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Plies after the decisions measured (Black's first turn, White's swap) chosen in
    /// proportion to the search's visits among near-best actions, for variety. None by
    /// default: a sampled ply is a move the player would not choose, and on small boards those
    /// are its mistakes (a side-3 network's fair komi fell from 3.5 to 2.5 with 2 of them), so
    /// a network plays each opening's best line once and its figures say "deterministic".
    #[arg(long, default_value_t = 0)]
    sample_plies: u32,
    /// Sampled plies choose among actions whose search value is within this of the best.
    #[arg(long, default_value_t = 0.1)]
    sample_margin: f32,
    /// Opening classes whose search value is more than this (in [-1, 1]) from the best
    /// class's are pruned, not played out.
    #[arg(long, default_value_t = 0.5)]
    margin: f64,
    /// At most this many opening classes are played out (the best by search value).
    #[arg(long, default_value_t = 8)]
    max_classes: usize,
    /// Lifeline sides also solved exactly: the exact result beside every estimate, and any
    /// estimate whose interval excludes it flagged.
    #[arg(long, value_delimiter = ',')]
    exact_sides: Vec<usize>,
    /// Budget of each solver call in seconds (a game not solved in time is "unknown").
    #[arg(long, default_value_t = 600.0)]
    exact_seconds: f64,
    /// Games played at once (default: `[eval]` games_in_flight of the config).
    #[arg(long)]
    games_in_flight: Option<usize>,
    /// Device of network players: cpu, or `cuda[:N]` in a build with the cuda feature.
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    device: Device,
}

/// The studies.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum Study {
    /// The first player's score from the empty board (and, under a pie rule, how often the
    /// swap was taken and the score with and without it).
    FirstPlayer {
        #[command(flatten)]
        args: StudyArgs,
    },
    /// Black's score at each komi of a range, the fitted logistic curve, and the fair komi.
    Komi {
        #[command(flatten)]
        args: StudyArgs,
        /// Komi values: a range `0..=6` or a list `0,2,4`.
        #[arg(long, default_value = "0..=6")]
        komi: String,
    },
    /// The value of every opening (first stone, or first pair under strong pie) for the player
    /// who made it, by search, as a heat map with the openings White should swap marked.
    SwapMap {
        #[command(flatten)]
        args: StudyArgs,
        /// Also play this many games from each opening (one per symmetry orbit) and report
        /// Black's score beside the search's value.
        #[arg(long, default_value_t = 0)]
        check_games: usize,
    },
    /// Practical balance by a named reference player (docs/studies.md, "Practical balance:
    /// definitions"): every opening class played out by sampled games, swap categories, the
    /// pooled komi model with bootstrap intervals, the value head beside the games, verdicts.
    Practical {
        #[command(flatten)]
        args: PracticalArgs,
    },
    /// A finished practical study's verdicts and convergence recomputed from its own games
    /// under today's definitions (no game replayed); its files rewritten, the JSON keeping the
    /// command that played the games and the verdicts it replaced.
    Rejudge {
        /// The study's folder (holding `practical.json`).
        dir: PathBuf,
    },
    /// Finished practical studies of one game, played the same way (each a player or a few
    /// of a ladder), judged again from their games and written as one study whose convergence
    /// is read over all their players (no game replayed).
    Combine {
        /// The folder the combined study's JSON, Markdown and SVG go to.
        #[arg(long)]
        out: PathBuf,
        /// Only this player of the studies (as its study names it, e.g. `name@64`);
        /// repeatable. Without it every player of every study is combined.
        #[arg(long = "player")]
        players: Vec<String>,
        /// The studies' folders (each holding `practical.json`), at least two.
        #[arg(required = true, num_args = 2..)]
        dirs: Vec<PathBuf>,
    },
    /// Lifeline: the first player's score under strong, weak and komi pie for several sides.
    PieTable {
        #[command(flatten)]
        args: StudyArgs,
        #[arg(long, value_delimiter = ',', default_value = "4,5,6,7")]
        sides: Vec<usize>,
        /// Komi values of the komi-pie curve of each side.
        #[arg(long, default_value = "0..=6")]
        komi: String,
    },
}

/// `eval balance practical`: its command line.
#[derive(Clone, Debug, clap::Args)]
pub struct PracticalArgs {
    /// Run config: the game (its balancing method decides the study: a pie's classes, or
    /// the komi pie over `--komi`), `[search]` for network players, `[eval]` for games in flight.
    #[arg(long)]
    config: PathBuf,
    /// The player measured, CHECKPOINT@VISITS (or mcts:N); repeat it for the players whose
    /// figures must agree to converge (two budget doublings, two seeds).
    #[arg(long = "player", required = true)]
    players: Vec<String>,
    /// The anchors a reference player must beat (score's 95% lower bound above one half).
    #[arg(
        long = "anchor",
        value_delimiter = ',',
        default_value = "mcts:100,mcts:1000"
    )]
    anchors: Vec<String>,
    #[arg(long, default_value_t = 20)]
    anchor_games: usize,
    /// Distinct games wanted per class (and komi); a clear class stops earlier.
    #[arg(long, default_value_t = 64)]
    games: usize,
    /// Most games played per class (and komi), repeated ones included.
    #[arg(long, default_value_t = 256)]
    max_games: usize,
    /// Games between two looks of the sequential test.
    #[arg(long, default_value_t = 16)]
    batch_games: usize,
    #[arg(long, default_value_t = 6)]
    sample_plies: u32,
    #[arg(long, default_value_t = 0.1)]
    sample_margin: f32,
    /// At most this many classes, closest to even by search value first (0: all).
    #[arg(long, default_value_t = 0)]
    max_classes: usize,
    /// Only these classes, named by their representative turn as the study's tables print
    /// them (`b2`, `a1+c2`); a class chosen from an earlier study is measured afresh with
    /// another `--seed`.
    #[arg(long, value_delimiter = ',')]
    classes: Vec<String>,
    /// Komi values of a komi-pie study: a range `0..=12` or a list `0,2,4`.
    #[arg(long, default_value = "0..=12")]
    komi: String,
    /// Solve the game exactly where it is Lifeline of one of these sides, and put the solver's
    /// result beside every class.
    #[arg(long, value_delimiter = ',')]
    exact_sides: Vec<usize>,
    #[arg(long, default_value_t = 600.0)]
    exact_seconds: f64,
    /// Read the solver's results instead of solving: a folder of `engine solve openings`
    /// outputs named `strong`, `weak` and `komi-K` (docs/solve/lifeline-3 holds side 3's,
    /// proved by df-pn with certificates), each `summary.json` checked against the game.
    #[arg(long, conflicts_with = "exact_sides")]
    exact_from: Option<PathBuf>,
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    games_in_flight: Option<usize>,
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    device: Device,
}

impl StudyArgs {
    /// The library's setup of these arguments, their config read and parsed.
    fn setup(self) -> Result<BalanceSetup, EvalError> {
        let (config, eval) = eval::config::load(&self.config)?;
        Ok(BalanceSetup {
            config_path: self.config,
            config,
            eval,
            players: self.players,
            games: self.games,
            out: self.out,
            seed: self.seed,
            sample_plies: self.sample_plies,
            sample_margin: self.sample_margin,
            margin: self.margin,
            max_classes: self.max_classes,
            exact_sides: self.exact_sides,
            exact_seconds: self.exact_seconds,
            games_in_flight: self.games_in_flight,
            device: self.device,
        })
    }
}

impl PracticalArgs {
    /// The library's setup of these arguments, their config read and parsed, then `--komi`.
    fn setup(self) -> Result<PracticalSetup, EvalError> {
        let (config, eval) = eval::config::load(&self.config)?;
        let komis = parse_komis(&self.komi)?;
        Ok(PracticalSetup {
            config,
            eval,
            players: self.players,
            anchors: self.anchors,
            anchor_games: self.anchor_games,
            games: self.games,
            max_games: self.max_games,
            batch_games: self.batch_games,
            sample_plies: self.sample_plies,
            sample_margin: self.sample_margin,
            max_classes: self.max_classes,
            classes: self.classes,
            komis,
            exact_sides: self.exact_sides,
            exact_seconds: self.exact_seconds,
            exact_from: self.exact_from,
            out: self.out,
            seed: self.seed,
            games_in_flight: self.games_in_flight,
            device: self.device,
        })
    }
}

/// Run a study and write its files; returns the Markdown summary.
pub fn run(study: Study) -> Result<String, EvalError> {
    let out = match &study {
        Study::Practical { args } => args.out.clone(),
        Study::Rejudge { dir } => dir.clone(),
        Study::Combine { out, .. } => out.clone(),
        Study::FirstPlayer { args }
        | Study::Komi { args, .. }
        | Study::SwapMap { args, .. }
        | Study::PieTable { args, .. } => args.out.clone(),
    };
    run_study(study).map_err(|e| kept_on_stop(e, &out))
}

/// A stop (SIGINT or SIGTERM) inside a study ends the match or the games in progress with
/// their own error, which says nothing of the study: its finished pieces are on disk and the
/// same command goes on from them, which is what the reader needs to know.
fn kept_on_stop(e: EvalError, out: &std::path::Path) -> EvalError {
    match e {
        EvalError::Interrupted | EvalError::Stopped { .. } => EvalError::StudyStopped {
            pieces: eval::study::resume::pieces_dir(out),
        },
        e => e,
    }
}

fn run_study(study: Study) -> Result<String, EvalError> {
    match study {
        Study::FirstPlayer { args } => first_player::run(&args.setup()?),
        Study::Komi { args, komi } => {
            let komis = parse_komis(&komi)?;
            komi::run(&args.setup()?, &komis)
        }
        Study::SwapMap { args, check_games } => swapmap::run(&args.setup()?, check_games),
        Study::Practical { args } => practical::run(&args.setup()?),
        Study::Rejudge { dir } => practical::rejudge::rejudge(&dir),
        Study::Combine { out, players, dirs } => practical::rejudge::combine(&dirs, &out, &players),
        Study::PieTable { args, sides, komi } => {
            let komis = parse_komis(&komi)?;
            pie_table::run(&args.setup()?, &sides, &komis)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a stop inside a study kept the match's "nothing of it was written" (the pieces
    /// are written) or stopped naming where they are, or if another error were taken for a stop.
    #[test]
    fn a_stopped_study_names_its_kept_pieces_and_other_errors_pass_through() {
        let out = std::path::Path::new("docs/balance/some-study");
        for stop in [
            EvalError::Interrupted,
            EvalError::Stopped {
                what: "the swap map".into(),
            },
        ] {
            let said = kept_on_stop(stop, out).to_string();
            assert!(said.contains("docs/balance/some-study/.resume"), "{said}");
            assert!(said.contains("the same command goes on"), "{said}");
        }
        let other = kept_on_stop(EvalError::Config("--games must be positive".into()), out);
        assert_eq!(other.to_string(), "--games must be positive");
    }
}
