//! `selfplay`: generate training data by self-play.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use engine::record::write_records;
use engine::{Game, Player};
use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use selfplay::config::RunConfig;
use selfplay::search::UniformEvaluator;
use selfplay::shard::{write_shard, ShardMeta};
use selfplay::worker::SelfPlay;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "selfplay", about = "Self-play games and training samples for Lifeline Zero")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Play games with a model and write sample shards and game records into the run directory.
    Run {
        #[arg(long)]
        config: PathBuf,
        /// `random` (uniform priors, zero value) or a checkpoint (not available yet).
        #[arg(long, default_value = "random")]
        model: String,
        #[arg(long, default_value_t = 16)]
        games: usize,
        /// Run directory; shards go to RUN/selfplay/. Default: runs/<config name>.
        #[arg(long)]
        run: Option<PathBuf>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

fn main() -> Result<()> {
    let Cmd::Run { config, model, games, run, seed } = Cli::parse().cmd;
    let cfg = RunConfig::load(&config).map_err(anyhow::Error::msg)?;
    if model != "random" {
        bail!("--model {model}: only `random` is available until the network lands (issue 5)");
    }
    let run = run.unwrap_or_else(|| PathBuf::from("runs").join(config.file_stem().unwrap_or_default()));
    let dir = run.join("selfplay");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let start = cfg.game.start()?;
    let b = start.board();
    let stamp = format!("{}-{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis(), std::process::id());

    let bar = ProgressBar::new(games as u64);
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} games {msg}").unwrap());
    let t0 = Instant::now();
    let (mut samples, mut records) = (Vec::new(), Vec::new());
    let (mut wins, mut plies) = ([0usize; 3], 0usize);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let sp = SelfPlay { game: &cfg.game, search: &cfg.search, selfplay: &cfg.selfplay };
    sp.run(&mut UniformEvaluator, games, &mut rng, |g| {
        plies += g.record.actions.len();
        let k = match g.record.result.and_then(|r| r.winner) {
            Some(Player::Black) => 0,
            Some(Player::White) => 1,
            None => 2,
        };
        wins[k] += 1;
        samples.extend(g.samples);
        records.push(g.record);
        let n = records.len();
        bar.set_message(format!(
            "| {:.0} positions/s | avg length {:.1} | black {} white {} draw {}",
            plies as f64 / t0.elapsed().as_secs_f64(),
            plies as f64 / n as f64,
            wins[0],
            wins[1],
            wins[2]
        ));
        bar.inc(1);
    });
    bar.finish();
    let meta = ShardMeta {
        game: cfg.game.clone(),
        model,
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
    write_records(&rec, &records)?;
    println!("{} games, {} samples -> {}, {}", records.len(), samples.len(), shard.display(), rec.display());
    Ok(())
}
