//! `selfplay`: generate training data by self-play, and measure the network and the search.

use anyhow::{Context, Result};
use burn::module::Module;
use burn::tensor::Device;
use clap::{Parser, Subcommand};
use engine::{AnyGame, Game};
use net::amx::Precision;
use net::model::{parse_device, Model, NetEvaluator};
use rand::SeedableRng;
use run::{resolve_checkpoint, Role, RunLocation};
use selfplay::config::RunConfig;
use selfplay::roles::{Worker, WorkerOptions};
use selfplay::worker::SelfPlay;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "selfplay",
    about = "Self-play games and training samples for Lifeline Zero"
)]
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
        /// `random` (uniform priors, zero value) or a checkpoint directory.
        #[arg(long, default_value = "random")]
        model: String,
        #[arg(long, default_value_t = 16)]
        games: usize,
        /// Run directory; shards go to RUN/selfplay/. Default: runs/<config name>.
        #[arg(long)]
        run: Option<PathBuf>,
        /// Seed of the games (default: a new one each time, recorded in the shard's metadata).
        #[arg(long)]
        seed: Option<u64>,
        /// Threads (default: `selfplay.threads` of the config, 0 = one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// `cpu`, or `cuda[:N]` in a build with the `cuda` feature.
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
    },
    /// The self-play role: play batches of games with the run's best network for as long as
    /// it runs (or --batches), picking up each new best between batches; one shard per batch.
    /// Several workers may share a run; a killed one loses only its batch in flight.
    Worker {
        #[arg(long)]
        config: PathBuf,
        /// The run: a directory, or `s3://BUCKET/PREFIX` (through a local mirror).
        #[arg(long)]
        run: run::RunLocation,
        /// Games per batch (per shard).
        #[arg(long, default_value_t = 32)]
        games: usize,
        /// Stop after this many batches (default: until stopped).
        #[arg(long)]
        batches: Option<usize>,
        #[arg(long)]
        threads: Option<usize>,
        /// `cpu`, or `cuda[:N]` in a build with the `cuda` feature.
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
    },
    /// Positions per second of the config's network at batch sizes 1, 16, 64 and 256.
    BenchNet {
        #[arg(long)]
        config: PathBuf,
        /// `cpu`, or `cuda[:N]` in a build with the `cuda` feature.
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
        /// Seconds to measure each batch size.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
        batches: Vec<usize>,
        /// Also run scripts/bench_reference.py (onnxruntime, same architecture) and print the ratio.
        #[arg(long)]
        reference: bool,
        /// Time burn's own layers too (on the CPU the folded network of `net::fused` is
        /// what search uses; this shows what it gains).
        #[arg(long)]
        layers: bool,
        /// With --reference: alternate burn and onnxruntime this many times and print the
        /// median ratio per batch size (one run swings by ±30% on a busy machine); with --bf16,
        /// f32 and bf16 likewise.
        #[arg(long, default_value_t = 1)]
        rounds: usize,
        /// Time the network in bf16 against f32, alternating batch by batch, and print the median
        /// ratio per batch size: on the tile unit (Intel AMX), or on the vector unit's
        /// AVX512-BF16 with `LIFELINE_BF16_KERNEL=vector`; fails on a CPU without a bf16 unit.
        #[arg(long, conflicts_with_all = ["reference", "layers"])]
        bf16: bool,
    },
    /// Whether a device computes what the CPU computes: the same network (random weights of the
    /// config's size, or --model) evaluated on --positions positions by the CPU's folded network
    /// (what search uses there) and by burn's layers on --device; prints the largest
    /// difference of a prior and of a value, and fails when one exceeds --max-diff.
    Agree {
        #[arg(long)]
        config: PathBuf,
        /// `cpu` (burn's layers against the folded network), or `cuda[:N]` in a build with the
        /// `cuda` feature.
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
        #[arg(long, default_value_t = 1000)]
        positions: usize,
        /// `random` for a randomly initialised network, or a checkpoint directory.
        #[arg(long, default_value = "random")]
        model: String,
        /// The largest difference of a prior or a value (win minus loss) accepted.
        #[arg(long, default_value_t = 1e-3)]
        max_diff: f32,
        /// What the CPU's folded network computes in: `f32`, or `bf16` on the CPU's bf16 unit
        /// (`net::amx::kernel`; to see how far bf16 moves priors and values).
        #[arg(long, default_value = "f32")]
        precision: Precision,
    },
    /// Visits per second of self-play search with the config's network, and the share of time
    /// spent outside the network (search, rules, encoding).
    BenchSearch {
        #[arg(long)]
        config: PathBuf,
        /// `cpu`, or `cuda[:N]` in a build with the `cuda` feature.
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
        #[arg(long, default_value_t = 4)]
        games: usize,
        /// `random` for a randomly initialised network, or a checkpoint directory.
        #[arg(long, default_value = "random")]
        model: String,
        /// What the network computes in (`f32`, `bf16`); default: the config's
        /// `selfplay.precision`, as self-play.
        #[arg(long)]
        precision: Option<Precision>,
    },
}

/// The model `spec` names, ready for inference in the config's `selfplay.precision`.
fn load_model(spec: &str, cfg: &RunConfig, device: &Device) -> Result<Model> {
    if spec == "random" {
        let m = Model::random(&cfg.game, &cfg.network, device, 0).map_err(anyhow::Error::msg)?;
        return Ok(m.for_inference_in(cfg.selfplay.precision));
    }
    let dir = resolve_checkpoint(Path::new(spec))?;
    selfplay::roles::load_checkpoint(&dir, cfg, device)
}

fn main() -> Result<()> {
    net::model::default_device_on_cpu();
    match Cli::parse().cmd {
        Cmd::Run {
            config,
            model,
            games,
            run,
            seed,
            threads,
            device,
        } => {
            let location = RunLocation::Dir(run.unwrap_or_else(|| {
                PathBuf::from("runs").join(config.file_stem().unwrap_or_default())
            }));
            let seed = seed.unwrap_or_else(selfplay::roles::fresh_seed);
            let opening = location.open_role(Role::SelfPlayRun, &config)?;
            let cfg = RunConfig::parse_from(opening.text(), &config).map_err(anyhow::Error::msg)?;
            // The shard names the checkpoint itself (`best` is resolved), as the loop's do.
            let dir = match model.as_str() {
                "random" => None,
                spec => Some(resolve_checkpoint(Path::new(spec))?),
            };
            // Checked before the run is entered: a network that cannot play the config's game
            // is refused as such.
            let opts = WorkerOptions {
                games,
                threads,
                device,
            };
            let mut worker = Worker::playing(cfg, &opts, dir.as_deref())
                .with_context(|| format!("--model {model}"))?;
            // Every process of a run plays one config, as a worker's (frozen, or checked).
            let session = opening.enter()?;
            worker.progress = true;
            worker.stop = session.stop().clone();
            let summary = worker.step(session.run(), None, seed)?;
            session.finish()?;
            println!("{} (seed {seed})", summary.line());
            if summary.shards.is_empty() {
                println!("no game finished: nothing written");
            }
            for (shard, records) in summary.shards.iter().zip(&summary.records) {
                println!("-> {}, {}", shard.display(), records.display());
            }
        }
        Cmd::Worker {
            config,
            run,
            games,
            batches,
            threads,
            device,
        } => {
            let opts = WorkerOptions {
                games,
                threads,
                device,
            };
            selfplay::roles::self_play_worker(&config, &run, &opts, |done| {
                batches.is_none_or(|b| done < b)
            })?;
        }
        Cmd::BenchNet {
            config,
            device,
            seconds,
            batches,
            reference,
            layers,
            rounds,
            bf16,
        } => {
            let variants = if bf16 {
                Variants::Bf16
            } else if layers {
                Variants::Layers
            } else {
                Variants::Fused
            };
            bench_net(
                &config, &device, seconds, &batches, reference, variants, rounds,
            )?
        }
        Cmd::BenchSearch {
            config,
            device,
            games,
            model,
            precision,
        } => bench_search(&config, &device, games, &model, precision)?,
        Cmd::Agree {
            config,
            device,
            positions,
            model,
            max_diff,
            precision,
        } => agree(&config, &device, positions, &model, max_diff, precision)?,
    }
    Ok(())
}

/// Positions from random games of the config, for benchmarks.
fn sample_positions(start: &AnyGame, n: usize) -> Vec<AnyGame> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        engine::testing::random_game(start, &mut rng, |before, _, _| {
            if out.len() < n {
                out.push(before.clone());
            }
        });
    }
    out
}

/// What `bench-net` times beside each other.
#[derive(Clone, Copy, PartialEq)]
enum Variants {
    /// The inference backend search uses (in the config's precision).
    Fused,
    /// It and burn's own layers.
    Layers,
    /// The folded network in f32 and in bf16, alternating.
    Bf16,
}

fn bench_net(
    config: &Path,
    device: &Device,
    seconds: f64,
    batches: &[usize],
    reference: bool,
    variants: Variants,
    rounds: usize,
) -> Result<()> {
    anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
    let cfg = RunConfig::load(config).map_err(anyhow::Error::msg)?;
    let model = load_model("random", &cfg, device)?;
    let alternate = variants == Variants::Bf16;
    let variants: Vec<(&str, Model)> = match variants {
        Variants::Fused => vec![("burn", model)],
        Variants::Layers => vec![
            ("burn", model.for_inference()),
            ("burn-layers", model.on_burn_layers()),
        ],
        Variants::Bf16 => {
            let bf16 = model.for_inference_in(Precision::Bf16);
            anyhow::ensure!(
                bf16.backend_name() == "fused-cpu-bf16",
                "--bf16: no bf16 unit here (no AMX-BF16 tile unit granted by Linux, and no LIFELINE_BF16_KERNEL=vector on an AVX512-BF16 CPU), so bf16 would run as {}",
                bf16.backend_name()
            );
            vec![
                ("f32", model.for_inference_in(Precision::F32)),
                ("bf16", bf16),
            ]
        }
    };
    let start = cfg.game.start()?;
    let b = start.board();
    let (planes, h, w) = (start.num_planes(), b.height(), b.width());
    let n = cfg.network.clone();
    println!(
        "network {}x{} (head {}, value hidden {}, pool every {}), input {planes}x{h}x{w}, device {device:?}",
        n.blocks, n.channels, n.head_channels, n.value_hidden, n.pool_every
    );
    let max = batches.iter().copied().max().unwrap_or(1);
    let positions = sample_positions(&start, max);
    let mut inputs = vec![0f32; max * planes * h * w];
    for (g, chunk) in positions.iter().zip(inputs.chunks_mut(planes * h * w)) {
        g.encode(ndarray::ArrayViewMut3::from_shape((planes, h, w), chunk)?);
    }
    let mut mask = vec![0f32; h * w];
    for &c in b.cells() {
        mask[b.grid_index(c)] = 1.0;
    }
    let time = |model: &Model, batch: usize| {
        let x = &inputs[..batch * planes * h * w];
        model.run(x.to_vec(), &mask, batch, h, w); // warm-up
        let t0 = Instant::now();
        let mut done = 0usize;
        while t0.elapsed().as_secs_f64() < seconds || done == 0 {
            model.run(x.to_vec(), &mask, batch, h, w);
            done += batch;
        }
        done as f64 / t0.elapsed().as_secs_f64()
    };
    if alternate {
        // f32 then bf16 at each batch, so that both see the same machine.
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); batches.len()];
        for round in 1..=rounds {
            for (&batch, r) in batches.iter().zip(&mut ratios) {
                let (a, b) = (time(&variants[0].1, batch), time(&variants[1].1, batch));
                println!(
                    "round {round} batch {batch:>4}: f32 {a:>9.0} bf16 {b:>9.0} positions/s ({:.2})",
                    b / a
                );
                r.push(b / a);
            }
        }
        for (batch, mut r) in batches.iter().zip(ratios) {
            println!(
                "bf16 / f32 at batch {batch:>4}: {}",
                selfplay::bench::median_of_rounds(&mut r)
            );
        }
        return Ok(());
    }
    for (label, model) in &variants {
        for &batch in batches {
            println!(
                "{label:<11} batch {batch:>4}: {:>9.0} positions/s",
                time(model, batch)
            );
        }
    }
    if !reference {
        return Ok(());
    }
    // The ratio to onnxruntime is for the first variant, what search uses, timed again in
    // each round right before the reference so that both see the same machine.
    let shape = selfplay::bench::Shape {
        planes,
        height: h,
        width: w,
        policy_len: start.policy_len(),
    };
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); batches.len()];
    for round in 1..=rounds {
        let ours: Vec<f64> = batches.iter().map(|&b| time(&variants[0].1, b)).collect();
        let text = selfplay::bench::run_reference("infer", shape, &n, batches, seconds)
            .map_err(anyhow::Error::msg)?;
        let mut line = format!("round {round}:");
        for ((&batch, rate), r) in batches.iter().zip(&ours).zip(&mut ratios) {
            let theirs =
                selfplay::bench::rate_at(&text, "onnxruntime", batch).ok_or_else(|| {
                    anyhow::anyhow!(
                        "no 'onnxruntime batch {batch}' line in the reference output:\n{text}"
                    )
                })?;
            line += &format!(
                " batch {batch} burn {rate:.0} onnxruntime {theirs:.0} ({:.2})",
                rate / theirs
            );
            r.push(rate / theirs);
        }
        println!("{line}");
    }
    for (batch, mut r) in batches.iter().zip(ratios) {
        println!(
            "burn / onnxruntime at batch {batch:>4}: {}",
            selfplay::bench::median_of_rounds(&mut r)
        );
    }
    Ok(())
}

fn agree(
    config: &Path,
    device: &Device,
    n: usize,
    model: &str,
    max_diff: f32,
    precision: Precision,
) -> Result<()> {
    use selfplay::search::{Evaluation, Evaluator};
    let cfg = RunConfig::load(config).map_err(anyhow::Error::msg)?;
    // The same weights twice: the CPU's inference model (folded, in `precision`), and its
    // network moved to `device` and run by burn's layers.
    let cpu = load_model(model, &cfg, &Device::flex())?.for_inference_in(precision);
    let (net, meta, _) = load_model(model, &cfg, &Device::flex())?.into_parts();
    let on_device = Model::new(net.to_device(device), meta, device.clone());
    let start = cfg.game.start()?;
    let positions = sample_positions(&start, n);
    let legal: Vec<Vec<engine::Action>> = positions
        .iter()
        .map(|g| {
            let mut l = Vec::new();
            g.legal_actions(&mut l);
            l
        })
        .collect();
    let eval = |m: &Model| {
        let mut out: Vec<Evaluation> = Vec::new();
        let mut all = Vec::with_capacity(n);
        let mut ev = NetEvaluator::new(m);
        for (ps, ls) in positions.chunks(256).zip(legal.chunks(256)) {
            ev.evaluate(ps, ls, &mut out);
            all.append(&mut out);
        }
        all
    };
    let (a, b) = (eval(&cpu), eval(&on_device));
    let mut prior = 0f32;
    let mut value = 0f32;
    for (x, y) in a.iter().zip(&b) {
        value = value.max((x.value - y.value).abs());
        for (p, q) in x.priors.iter().zip(&y.priors) {
            prior = prior.max((p - q).abs());
        }
    }
    println!(
        "{n} positions, network {}x{}: {} on {device:?} against the CPU's {}: largest difference of a prior {prior:.2e}, of a value {value:.2e}",
        cfg.network.blocks,
        cfg.network.channels,
        on_device.backend_name(),
        cpu.backend_name()
    );
    anyhow::ensure!(
        prior <= max_diff && value <= max_diff,
        "{device:?} disagrees with the CPU by more than --max-diff {max_diff}"
    );
    Ok(())
}

fn bench_search(
    config: &Path,
    device: &Device,
    games: usize,
    model: &str,
    precision: Option<Precision>,
) -> Result<()> {
    let mut cfg = RunConfig::load(config).map_err(anyhow::Error::msg)?;
    if let Some(p) = precision {
        cfg.selfplay.precision = p;
    }
    let net = load_model(model, &cfg, device)?;
    let mut ev = NetEvaluator::new(&net);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let sp = SelfPlay {
        game: &cfg.game,
        search: &cfg.search,
        selfplay: &cfg.selfplay,
        stop: &run::Stop::on_signal(),
    };
    let t0 = Instant::now();
    let mut visits = 0u64;
    let mut decisions = 0u64;
    sp.run(&mut ev, games, &mut rng, |g| {
        decisions += g.record.moves.len() as u64;
        visits += g.record.moves.iter().map(|m| m.visits as u64).sum::<u64>();
    })?;
    let total = t0.elapsed().as_secs_f64();
    let s = ev.stats;
    println!(
        "{games} games, {decisions} decisions, {} games in flight, search batch {}: mean network batch {:.1}",
        cfg.selfplay.games_in_flight,
        cfg.search.batch,
        s.positions as f64 / s.calls.max(1) as f64
    );
    println!(
        "search    {:>9.0} visits/s (root visits, tree reuse included)",
        visits as f64 / total
    );
    println!(
        "network   {:>9.0} positions/s inside the search",
        s.positions as f64 / s.net_seconds.max(1e-9)
    );
    println!(
        "time: network {:.1}%, encoding and priors {:.1}%, search and rules {:.1}% (of {total:.1} s)",
        100.0 * s.net_seconds / total,
        100.0 * s.encode_seconds / total,
        100.0 * (total - s.net_seconds - s.encode_seconds) / total
    );
    println!(
        "outside the network: {:.1}% (target < 15%)",
        100.0 * (total - s.net_seconds) / total
    );
    Ok(())
}
