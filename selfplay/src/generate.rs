//! A self-play run: play games with an evaluator on one or more threads, show progress, and
//! write one sample shard and one record file into the run directory.
//!
//! This is what `selfplay run` and the training loop call. Each thread plays its share of the
//! games with its own evaluator (a network evaluator per thread: flex on 2 threads gains little
//! over one, so two single-threaded workers keep both cores busy), and finished games come back
//! to the calling thread, which owns the progress bar and the files.

use crate::config::RunConfig;
use crate::search::Evaluator;
use crate::shard::{write_shard, Sample, ShardError, ShardMeta};
use crate::worker::{FinishedGame, SelfPlay};
use engine::record::{write_records, GameRecord};
use engine::{AnyGame, Game, Player};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand::SeedableRng;
use std::path::{Path, PathBuf};
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
    pub shard: Option<PathBuf>,
    pub records: Option<PathBuf>,
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

    /// One line for logs: games, samples, results, speed.
    pub fn line(&self) -> String {
        format!(
            "{} games, {} samples, black {} white {} draw {}, avg length {:.1}, {:.0} decisions/s, resigned {} (false {}/{})",
            self.games,
            self.samples,
            self.black,
            self.white,
            self.draws,
            self.plies as f64 / self.games.max(1) as f64,
            self.plies as f64 / self.seconds.max(1e-9),
            self.resignations,
            self.false_resignations,
            self.resign_checks
        )
    }
}

/// Where and how a run writes.
pub struct RunOutput<'a> {
    /// Run directory: shards and records go to `run/selfplay/`.
    pub run: &'a Path,
    /// Name of the model that plays (a checkpoint name or `random`), kept in the shard metadata.
    pub model: &'a str,
    pub progress: bool,
}

/// Play `games` games on `threads` threads (each with the evaluator `make(thread)` builds) and
/// write the samples and records. Seeds are `seed + thread`, so a run is reproducible for a
/// given thread count.
pub fn generate<E, F>(
    cfg: &RunConfig,
    make: F,
    games: usize,
    threads: usize,
    seed: u64,
    out: &RunOutput,
) -> Result<RunSummary, ShardError>
where
    E: Evaluator<AnyGame>,
    F: Fn(usize) -> E + Sync,
{
    let dir = out.run.join("selfplay");
    let io = |e: std::io::Error| ShardError::Io {
        path: dir.display().to_string(),
        msg: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let threads = threads.clamp(1, games.max(1));
    let bar = if out.progress {
        ProgressBar::new(games as u64)
    } else {
        ProgressBar::with_draw_target(Some(games as u64), ProgressDrawTarget::hidden())
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} games {msg}").expect("valid template"),
    );
    let t0 = Instant::now();
    let mut summary = RunSummary::default();
    let mut samples: Vec<Sample> = Vec::new();
    let mut records: Vec<GameRecord> = Vec::new();
    let (tx, rx) = mpsc::channel::<FinishedGame>();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let share = games / threads + usize::from(t < games % threads);
            let tx = tx.clone();
            let make = &make;
            scope.spawn(move || {
                let mut evaluator = make(t);
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed.wrapping_add(t as u64));
                let sp = SelfPlay {
                    game: &cfg.game,
                    search: &cfg.search,
                    selfplay: &cfg.selfplay,
                };
                sp.run(&mut evaluator, share, &mut rng, |g| {
                    let _ = tx.send(g);
                });
            });
        }
        drop(tx);
        for g in rx {
            summary.add(&g);
            summary.seconds = t0.elapsed().as_secs_f64();
            bar.set_message(format!(
                "| {:.0} decisions/s | avg length {:.1} | black {} white {} draw {}",
                summary.plies as f64 / summary.seconds.max(1e-9),
                summary.plies as f64 / summary.games as f64,
                summary.black,
                summary.white,
                summary.draws
            ));
            bar.inc(1);
            samples.extend(g.samples);
            records.push(g.record);
        }
    });
    bar.finish_and_clear();
    summary.seconds = t0.elapsed().as_secs_f64();

    let start = cfg.game.start().map_err(|e| ShardError::Invalid {
        path: "config".into(),
        msg: e.to_string(),
    })?;
    let b = start.board();
    let stamp = format!(
        "{}-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0),
        std::process::id()
    );
    let meta = ShardMeta {
        game: cfg.game.clone(),
        model: out.model.to_string(),
        planes: start.num_planes(),
        height: b.height(),
        width: b.width(),
        policy_len: start.policy_len(),
        samples: samples.len(),
        games: records.len(),
    };
    let shard = dir.join(format!("shard-{stamp}.npz"));
    write_shard(&shard, &meta, &samples)?;
    let rec = dir.join(format!("records-{stamp}.jsonl"));
    write_records(&rec, &records).map_err(|e| ShardError::Io {
        path: rec.display().to_string(),
        msg: e.to_string(),
    })?;
    summary.shard = Some(shard);
    summary.records = Some(rec);
    Ok(summary)
}

/// Threads to use when a config says 0: the machine's cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
