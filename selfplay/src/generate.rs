//! A self-play run: play games with an evaluator on one or more threads, show progress, and
//! write a sample shard and a record file per board size into the run directory.
//!
//! This is what `selfplay run` and the training loop call. Each thread plays its share of the
//! games with its own evaluator (a network evaluator per thread: flex on 2 threads gains little
//! over one, so two single-threaded workers keep both cores busy), and finished games come back
//! to the calling thread, which owns the progress bar and the files.

use crate::config::RunConfig;
use crate::search::{Evaluator, EvaluatorCounts, Metered, SearchError};
use crate::shard::{write_shard, Sample, ShardError, ShardMeta};
use crate::worker::{FinishedGame, SelfPlay};
use engine::record::{write_records_to, GameRecord};
use engine::{AnyGame, Player};
use rand::SeedableRng;
use run::{write_atomic_with, RunDir, RunDirError};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

/// What a self-play run produced.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    pub games: usize,
    pub samples: usize,
    /// Decisions played, over all games.
    pub plies: usize,
    /// Wins of Black, wins of White, draws.
    pub black: usize,
    pub white: usize,
    pub draws: usize,
    pub resignations: usize,
    /// Games played out past a resignation the rules allowed, and how many of those the
    /// would-be resigner did not lose.
    pub resign_checks: usize,
    pub false_resignations: usize,
    pub seconds: f64,
    /// What the games asked of their evaluators, over all threads: calls and positions (the
    /// network batch self-play forms) and the seconds inside them.
    pub evaluator: EvaluatorCounts,
    /// The shards written (one per board size) and their record files, in the same order.
    pub shards: Vec<PathBuf>,
    pub records: Vec<PathBuf>,
}

impl RunSummary {
    fn add(&mut self, g: &FinishedGame) {
        self.games += 1;
        self.samples += g.samples.len();
        self.plies += g.record.actions.len();
        match g.record.result.and_then(|r| r.winner) {
            Some(Player::Black) => self.black += 1,
            Some(Player::White) => self.white += 1,
            None => self.draws += 1,
        }
        self.resignations += g.resigned.is_some() as usize;
        if let Some(wrong) = g.false_resignation {
            self.resign_checks += 1;
            self.false_resignations += wrong as usize;
        }
    }

    fn progress_message(&self) -> String {
        format!(
            "| {:.0} decisions/s | avg length {:.1} | black {} white {} draw {}",
            self.plies as f64 / self.seconds.max(1e-9),
            self.plies as f64 / self.games.max(1) as f64,
            self.black,
            self.white,
            self.draws
        )
    }

    /// One line for logs: games, samples, results, speed.
    pub fn line(&self) -> String {
        format!(
            "{} games, {} samples, black {} white {} draw {}, avg length {:.1}, {:.0} decisions/s, resigned {} (false {}/{}), mean network batch {:.0}",
            self.games,
            self.samples,
            self.black,
            self.white,
            self.draws,
            self.plies as f64 / self.games.max(1) as f64,
            self.plies as f64 / self.seconds.max(1e-9),
            self.resignations,
            self.false_resignations,
            self.resign_checks,
            self.evaluator.mean_batch()
        )
    }
}

/// Where and how a run writes.
pub struct RunOutput<'a> {
    /// Shards and records go to `run/selfplay/`.
    pub run: &'a RunDir,
    /// Name of the model that plays (a checkpoint name or `random`), kept in the shard metadata.
    pub model: &'a str,
    /// The loop iteration these games belong to (names the shard, see [`RunDir::new_stamp`]).
    pub iteration: Option<u32>,
    pub progress: bool,
    /// When to abandon the games in flight (those finished are written).
    pub stop: &'a run::Stop,
}

/// Errors of a self-play run.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("self-play with {model}: {source}")]
    Search {
        model: String,
        #[source]
        source: SearchError,
    },
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error("config: {0}")]
    Game(#[from] engine::GameError),
    #[error("config: {0}")]
    Config(String),
}

/// Play `games` games on `threads` threads (each with the evaluator `make(thread)` builds) and
/// write the samples and records. Seeds are `seed + thread`, so a run is reproducible for a
/// given thread count. A stop request (SIGINT/SIGTERM) abandons the games in flight and
/// writes the finished ones.
pub fn generate<E, F>(
    cfg: &RunConfig,
    make: F,
    games: usize,
    threads: usize,
    seed: u64,
    out: &RunOutput,
) -> Result<RunSummary, GenerateError>
where
    E: Evaluator<AnyGame>,
    F: Fn(usize) -> E + Sync,
{
    // Fail before playing, not after, when the results cannot be written.
    let sized = cfg
        .selfplay
        .sized_games(&cfg.game)
        .map_err(GenerateError::Config)?;
    for game in &sized {
        ShardMeta::new(game, out.model, seed)?;
    }
    run::check_writable(&out.run.selfplay())?;
    let t0 = Instant::now();
    let (mut summary, by_size) =
        play(cfg, make, games, threads, seed, out).map_err(|source| GenerateError::Search {
            model: out.model.to_string(),
            source,
        })?;
    summary.seconds = t0.elapsed().as_secs_f64();
    // One shard per board size (a shard holds one board); with several sizes the stamp
    // carries the size, so the shards of one call cannot share a name.
    let stamp = RunDir::new_stamp(out.iteration);
    for (size, (samples, records)) in by_size {
        let game = sized
            .iter()
            .find(|g| g.size() == size)
            .expect("every game's size is one of the sizes played");
        let meta = ShardMeta {
            samples: samples.len(),
            games: records.len(),
            ..ShardMeta::new(game, out.model, seed)?
        };
        let paths = match cfg.selfplay.sizes {
            Some(_) => out.run.shard(&format!("{stamp}-size{size}")),
            None => out.run.shard(&stamp),
        };
        // Records first: the shard is what marks the games as played (a kill between the two
        // leaves records without a shard, which a replayed loop iteration removes).
        write_atomic_with(&paths.records, |out| write_records_to(out, &records))?;
        write_shard(&paths.shard, &meta, &samples)?;
        summary.shards.push(paths.shard);
        summary.records.push(paths.records);
    }
    Ok(summary)
}

/// Finished games by board size: their samples and records.
type BySize = std::collections::BTreeMap<usize, (Vec<Sample>, Vec<GameRecord>)>;

type Played = (RunSummary, BySize);

/// Play the games on `threads` threads; finished games come back to this thread, which owns
/// the progress bar. One thread plays on the calling thread itself, so that its network calls
/// run on the rayon pool the caller is in (a piece's refill hands it every core that way,
/// `train::piece::refill`); more threads are spawned, and theirs run on rayon's global pool.
fn play<E, F>(
    cfg: &RunConfig,
    make: F,
    games: usize,
    threads: usize,
    seed: u64,
    out: &RunOutput,
) -> Result<Played, SearchError>
where
    E: Evaluator<AnyGame>,
    F: Fn(usize) -> E + Sync,
{
    let threads = threads.clamp(1, games.max(1));
    let bar = run::progress::bar(games as u64, "games", out.progress);
    let t0 = Instant::now();
    let mut summary = RunSummary::default();
    let mut by_size = BySize::new();
    let mut take = |g: FinishedGame| {
        summary.add(&g);
        summary.seconds = t0.elapsed().as_secs_f64();
        bar.set_message(summary.progress_message());
        bar.inc(1);
        let (samples, records) = by_size.entry(g.record.config.size()).or_default();
        samples.extend(g.samples);
        records.push(g.record);
    };
    // Thread `t`'s share of the games, each finished game handed to `done`.
    let play_share = |t: usize, done: &mut dyn FnMut(FinishedGame)| {
        let share = games / threads + usize::from(t < games % threads);
        let mut evaluator = Metered::new(make(t));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed.wrapping_add(t as u64));
        let sp = SelfPlay {
            game: &cfg.game,
            search: &cfg.search,
            selfplay: &cfg.selfplay,
            stop: out.stop,
        };
        sp.run(&mut evaluator, share, &mut rng, done)
            .map(|()| evaluator.counts)
    };
    let results = if threads == 1 {
        vec![play_share(0, &mut take)]
    } else {
        let (tx, rx) = mpsc::channel::<FinishedGame>();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let tx = tx.clone();
                    let play_share = &play_share;
                    scope.spawn(move || {
                        play_share(t, &mut |g| {
                            let _ = tx.send(g);
                        })
                    })
                })
                .collect();
            drop(tx);
            rx.into_iter().for_each(&mut take);
            workers
                .into_iter()
                .map(|w| w.join().expect("a self-play thread panicked"))
                .collect::<Vec<_>>()
        })
    };
    bar.finish_and_clear();
    for counts in results.into_iter().collect::<Result<Vec<_>, _>>()? {
        summary.evaluator.add(&counts);
    }
    Ok((summary, by_size))
}

/// Threads to use when a config says 0: the machine's cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
