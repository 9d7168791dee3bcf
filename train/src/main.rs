//! `train`: fit the network on a run's self-play data, measure training speed.

use anyhow::{Context, Result};
use burn::tensor::Device;
use clap::{Parser, Subcommand};
use net::model::{parse_device, Model};
use run::RunLocation;
use run::{install_stop_handler, Role, RunDir};
use selfplay::config::RunConfig;
use std::path::{Path, PathBuf};
use std::time::Instant;
use train::config::{Promotion, TrainConfig};
use train::fit::Trainer;
use train::roles::{fit_locked, FitTarget, Fitting, TrainerRounds};
use train::status::RunReport;

#[derive(Parser)]
#[command(name = "train", about = "Fit Lifeline Zero networks on self-play data")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Train on the run's replay window for `train.steps` steps (or --steps), resuming from the
    /// newest checkpoint of the run, and write a checkpoint.
    Fit {
        #[arg(long)]
        config: PathBuf,
        /// The run: a directory, or `s3://BUCKET/PREFIX` (through a local mirror).
        #[arg(long)]
        run: RunLocation,
        /// Steps to train beyond the newest checkpoint (default: train.steps of the config).
        #[arg(long)]
        steps: Option<u64>,
        /// Train until the step counter reaches this value instead (what a rerun after a kill uses).
        #[arg(long, conflicts_with = "steps")]
        until: Option<u64>,
        /// `cpu`, or `cuda[:N]` (builds with the `cuda` feature).
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
    },
    /// The training role: fit `train.steps` steps whenever the run's shards allow it (at most
    /// --ratio samples trained per sample generated: it waits for data rather than
    /// overfitting), write a checkpoint and make it the best; for as long as it runs (or
    /// --until-step). Holds the run's `train` role; self-play workers feed it.
    Trainer {
        #[arg(long)]
        config: PathBuf,
        /// The run: a directory, or `s3://BUCKET/PREFIX` (through a local mirror).
        #[arg(long)]
        run: RunLocation,
        /// Samples trained per sample generated, at most.
        #[arg(long, default_value_t = 4.0)]
        ratio: f64,
        /// Stop once the step counter reaches this.
        #[arg(long)]
        until_step: Option<u64>,
        /// `cpu`, or `cuda[:N]` (builds with the `cuda` feature).
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
        /// `newest`: each checkpoint becomes the best at once; `gate`: a gatekeeper
        /// (`eval gatekeeper`) promotes those that pass its gate.
        #[arg(long, value_enum, default_value_t = Promotion::Newest)]
        promote: Promotion,
    },
    /// Whether a run directory is whole: one unbroken lineage, a best pointer that names a
    /// checkpoint, no temporary of a dead process, no shard or iteration counted twice. Exits
    /// with status 1 when an invariant is broken (for fault tests and after an incident).
    Check {
        /// The run directory (a bucket's run: check a mirror of it).
        #[arg(long)]
        run: PathBuf,
    },
    /// What a run is doing: the best and newest checkpoints, who holds its roles, and each
    /// self-play source (worker pid or loop) with its samples and rate over the last minutes,
    /// and the trainer's lag (samples trained against samples generated).
    Status {
        /// The run: a directory, or `s3://BUCKET/PREFIX` (read from the bucket: its listing, the
        /// config, the best pointer, the leases and each shard's metadata, not the shards).
        #[arg(long)]
        run: RunLocation,
        /// Sources seen within this many minutes count as active.
        #[arg(long, default_value_t = 10.0)]
        minutes: f64,
    },
    /// The whole pipeline: self-play with the best model, fit, gate, rate, repeat; resumable
    /// after a kill at any moment. Ends with the rating table of the run.
    Loop {
        #[arg(long)]
        config: PathBuf,
        /// The run: a directory, or `s3://BUCKET/PREFIX` (through a local mirror).
        #[arg(long)]
        run: RunLocation,
        /// Override loop.iterations (counted from the start of the run).
        #[arg(long)]
        iterations: Option<u32>,
        /// Override loop.minutes (for this invocation).
        #[arg(long)]
        minutes: Option<f64>,
        /// No progress bars (logs only).
        #[arg(long)]
        quiet: bool,
        /// Go on from a piece saved by `train piece` (a player's folder): a run directory
        /// without checkpoints starts from its checkpoint, rounds and sample counts, and refills
        /// its replay window by self-play before training; one with checkpoints resumes as it is.
        #[arg(long)]
        from: Option<PathBuf>,
    },
    /// Save what a run needs to go on from another machine (its newest checkpoint with the
    /// optimizer state, iterations.jsonl, the samples generated and its window) into --out,
    /// a folder to commit; `train loop --from OUT` goes on from it.
    Piece {
        #[arg(long)]
        config: PathBuf,
        #[arg(long)]
        run: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// The learning benchmark: train the config from scratch for --minutes (in OUT/run; the
    /// same command resumes), rate checkpoints along the way against a fixed ladder, and write
    /// OUT/learning.{json,md,svg} (Elo against wall-clock minutes).
    Learning(train::learning::LearningOptions),
    /// Export a checkpoint's weights as a .npz file (named arrays, metadata, and an example
    /// input with burn's outputs); `scripts/export_onnx.py` turns it into an ONNX model.
    Export {
        /// A checkpoint directory (or runs/NAME/models/best).
        #[arg(long)]
        model: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// npz (named arrays, metadata and an example), safetensors (PyTorch names and
        /// layouts) or onnx (built by scripts/export_onnx.py, which needs python3 with onnx
        /// and onnxruntime); default: the extension of --out.
        #[arg(long)]
        format: Option<ExportFormat>,
    },
    /// Training samples per second of the config's network at its batch size.
    Bench {
        #[arg(long)]
        config: PathBuf,
        /// `cpu`, or `cuda[:N]` (builds with the `cuda` feature).
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
        #[arg(long, default_value_t = 10)]
        steps: u64,
        /// Batch size (default: train.batch_size of the config).
        #[arg(long)]
        batch: Option<usize>,
        /// Also time the same step in JAX (scripts/bench_reference.py --mode train) and, where
        /// python3 can import torch, in PyTorch (--mode train-torch).
        #[arg(long)]
        reference: bool,
        /// With --reference: alternate ours and the references this many times and report
        /// every round's ratios and their medians (timings on a shared machine drift between
        /// runs).
        #[arg(long, default_value_t = 1)]
        rounds: usize,
    },
}

fn main() -> Result<()> {
    net::model::default_device_on_cpu();
    match Cli::parse().cmd {
        Cmd::Fit {
            config,
            run,
            steps,
            until,
            device,
        } => fit_role(&config, &run, steps, until, &device),
        Cmd::Check { run } => check(&run),
        Cmd::Status { run, minutes } => status(&run, minutes),
        Cmd::Trainer {
            config,
            run,
            ratio,
            until_step,
            device,
            promote,
        } => {
            let rounds = TrainerRounds {
                ratio,
                until_step,
                fitting: Fitting {
                    device,
                    progress: true,
                    // The session's own, set once the role is entered.
                    stop: run::Stop::on_signal(),
                },
                promote,
                anneal: None,
            };
            trainer_role(&config, &run, rounds)
        }
        Cmd::Piece { config, run, out } => piece(&config, &run, &out),
        Cmd::Bench {
            config,
            device,
            steps,
            batch,
            reference,
            rounds,
        } => bench(&config, &device, steps, batch, reference, rounds),
        Cmd::Learning(opts) => learning(opts),
        Cmd::Export { model, out, format } => export(&model, &out, format),
        Cmd::Loop {
            config,
            run,
            iterations,
            minutes,
            quiet,
            from,
        } => {
            let overrides = train::looping::Overrides {
                iterations,
                minutes,
            };
            train_loop(&config, &run, overrides, quiet, from.as_deref())
        }
    }
}

/// `train fit`: the `fit` role entered once the config, the target and the run's network are
/// checked, then one fit.
fn fit_role(
    config: &Path,
    run: &RunLocation,
    steps: Option<u64>,
    until: Option<u64>,
    device: &Device,
) -> Result<()> {
    let opening = run.open_role(Role::Fit, config)?;
    let (cfg, train, target) = opening.name_objects(check_fit(&opening, steps, until))?;
    let session = opening.enter()?;
    session.name_objects(fit(&session, &cfg, &train, target, device))?;
    Ok(session.finish()?)
}

/// `train check`: the run's invariants, the process failing when one does not hold.
fn check(run: &Path) -> Result<()> {
    let invariants = train::check::check(&RunDir::new(run))?;
    print!("{}", train::check::render(&invariants));
    if invariants.iter().any(|i| !i.held) {
        std::process::exit(1);
    }
    Ok(())
}

/// `train status`: what the run holds and who works on it, read where it lives.
fn status(run: &RunLocation, minutes: f64) -> Result<()> {
    if !(minutes > 0.0 && minutes.is_finite()) {
        anyhow::bail!("--minutes must be a positive number of minutes (got {minutes})");
    }
    let report = match run {
        RunLocation::Dir(dir) => RunReport::of_dir(&RunDir::new(dir))?,
        RunLocation::Bucket { url } => {
            let _log = run::logging::init("status");
            let cache = run::location::cache_dir(url).join("status-shards.json");
            RunReport::of_bucket(url, &cache)?
        }
    };
    print!("{}", report.render(minutes));
    Ok(())
}

/// `train trainer`: the `train` role entered, then its rounds, heeding the session's stop.
fn trainer_role(config: &Path, run: &RunLocation, mut rounds: TrainerRounds) -> Result<()> {
    let opening = run.open_role(Role::Trainer, config)?;
    let name = config.display().to_string();
    let (cfg, train) = opening.name_objects(train::config::run_and_train(opening.text(), &name))?;
    let session = opening.enter()?;
    rounds.fitting.stop = session.stop().clone();
    session.name_objects(trainer(&session, &cfg, &train, &rounds))?;
    Ok(session.finish()?)
}

/// `train piece`: what a run piece carries to the next machine, written to `out`.
fn piece(config: &Path, run: &Path, out: &Path) -> Result<()> {
    let (cfg, train) = load_config(config)?;
    let s = train::piece::save(&RunDir::new(run), &cfg.games(), &train, out)?;
    println!(
        "{}: step {}, {} samples generated, a window of {} (train loop --from {} goes on from it)",
        out.display(),
        s.step,
        s.samples,
        s.window,
        out.display()
    );
    Ok(())
}

/// `train learning`: the learning benchmark, its table printed and its files written.
fn learning(mut opts: train::learning::LearningOptions) -> Result<()> {
    install_stop_handler();
    opts.command = eval::study::report::command_line();
    let report = train::learning::run(&opts)?;
    print!("{}", train::learning::markdown(&report));
    if let Some(r) = report.final_against("mcts:1000") {
        println!(
            "final model {} against mcts:1000: score {} ({} games)",
            report.rows.last().map_or("-", |r| r.checkpoint.as_str()),
            r.score.show(),
            r.games
        );
    }
    println!(
        "written: {}",
        opts.out.join("learning.{json,md,svg}").display()
    );
    Ok(())
}

/// `train loop`: the loop through its door ([`train::looping::enter_loop`], going on from a
/// piece when `from` names one), then its final match and the ratings.
fn train_loop(
    config: &Path,
    location: &RunLocation,
    overrides: train::looping::Overrides,
    quiet: bool,
    from: Option<&Path>,
) -> Result<()> {
    if let (Some(from), RunLocation::Bucket { url }) = (from, location) {
        anyhow::bail!(
            "--from {} takes a run directory, not {url}: start the piece in a directory",
            from.display()
        );
    }
    let (session, cfg) = train::looping::enter_loop(location, config, overrides, |run| {
        let Some(from) = from else { return Ok(()) };
        if let Some(s) = train::piece::start(run, from)? {
            println!(
                "going on from {}: step {}, {} samples generated before, a window of {} to refill",
                from.display(),
                s.step,
                s.samples,
                s.window
            );
        }
        Ok(())
    })?;
    let run = session.run();
    let t0 = Instant::now();
    let done = session.name_objects(train::looping::run_loop(&session, &cfg, !quiet, |s| {
        println!("{}", s.line())
    }))?;
    println!(
        "{} iterations in {:.1} min",
        done.len(),
        t0.elapsed().as_secs_f64() / 60.0
    );
    // Played before the ratings are refreshed, so that the table counts it too.
    let last = match train::looping::final_match(&cfg, run.root(), !quiet) {
        _ if session.stop().requested() => None,
        result => result?,
    };
    match eval::update_ratings(run.root(), eval::RatingOptions::default()) {
        Ok(table) => {
            println!("{}", eval::ratings::format_table(&table));
            println!(
                "ratings: {} and {}",
                run.ratings_json().display(),
                run.ratings_svg().display()
            );
        }
        Err(e) => println!("no ratings yet: {e}"),
    }
    if let Some(s) = last {
        println!("final model: {}", eval::matches::describe(&s));
    }
    Ok(session.finish()?)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ExportFormat {
    Npz,
    Safetensors,
    Onnx,
}

fn export(model: &Path, out: &Path, format: Option<ExportFormat>) -> Result<()> {
    // The file is written beside and renamed over `out`: a device or a directory there would
    // be replaced, not written to.
    if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
        anyhow::bail!(
            "--out {}: not a regular file (the export writes a file; give a path)",
            out.display()
        );
    }
    let format = match format {
        Some(f) => f,
        None => match out.extension().and_then(|e| e.to_str()) {
            Some("npz") => ExportFormat::Npz,
            Some("safetensors") => ExportFormat::Safetensors,
            Some("onnx") => ExportFormat::Onnx,
            _ => anyhow::bail!(
                "{}: give --format npz, safetensors or onnx (the extension does not say)",
                out.display()
            ),
        },
    };
    let dir = eval::players::resolve_checkpoint(model)?;
    let m = Model::load(&dir, &parse_device("cpu")?)?;
    m.check_finite(&m.meta.game, &dir)?;
    let n = match format {
        ExportFormat::Npz => train::export::export(&m, out),
        ExportFormat::Safetensors => train::export::export_safetensors(&m, out),
        ExportFormat::Onnx => export_onnx(&m, out),
    }
    .map_err(anyhow::Error::msg)?;
    println!(
        "{n} tensors of {} (step {}) -> {}",
        dir.display(),
        m.meta.step,
        out.display()
    );
    Ok(())
}

/// The ONNX graph is built in Python (burn writes no ONNX): the weights go through a
/// temporary .npz, which `scripts/export_onnx.py` turns into `out` and checks against burn's
/// outputs on the file's example. The scripts are part of the binary and written to a
/// temporary folder beside `out`, so that an installed binary exports without the source tree.
fn export_onnx(m: &Model, out: &Path) -> Result<usize, String> {
    const SCRIPTS: [(&str, &str); 2] = [
        (
            "export_onnx.py",
            include_str!("../../scripts/export_onnx.py"),
        ),
        (
            "lifeline_net.py",
            include_str!("../../scripts/lifeline_net.py"),
        ),
    ];
    let tmp = out.with_extension(format!("tmp-{}", std::process::id()));
    let result = (|| {
        std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        for (name, text) in SCRIPTS {
            std::fs::write(tmp.join(name), text).map_err(|e| format!("{}: {e}", tmp.display()))?;
        }
        let npz = tmp.join("weights.npz");
        let n = train::export::export(m, &npz)?;
        let o = std::process::Command::new("python3")
            .arg(tmp.join("export_onnx.py"))
            .arg(&npz)
            .arg(out)
            .output()
            .map_err(|e| format!("cannot run python3 (scripts/export_onnx.py): {e}"))?;
        if !o.status.success() {
            return Err(format!(
                "scripts/export_onnx.py failed (it needs python3 with numpy, onnx and onnxruntime):\n{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        Ok(n)
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// The run and `[train]` tables of the config at `path`, for the commands that enter no role
/// (a role's config is read once by its `run::Session`).
fn load_config(path: &Path) -> Result<(RunConfig, TrainConfig)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    train::config::run_and_train(&text, &path.display().to_string())
}

/// What `train fit` checks before it enters the run: the config's tables, the fit's target,
/// and that the run's newest network plays the config's game (refused as such, leaving no
/// config frozen in a run that has none).
fn check_fit(
    opening: &run::Opening,
    steps: Option<u64>,
    until: Option<u64>,
) -> Result<(RunConfig, TrainConfig, FitTarget)> {
    let name = opening.config().display().to_string();
    let (cfg, train) = train::config::run_and_train(opening.text(), &name)?;
    let target = match until {
        Some(step) => FitTarget::Until(step),
        None => FitTarget::Steps(steps.unwrap_or(train.steps)),
    };
    if let Some(dir) = opening.run().newest_checkpoint() {
        net::model::read_meta(&dir)?.check_plays(&cfg.game, &dir)?;
    }
    Ok((cfg, train, target))
}

/// `train fit`: one fit to its target, in the run entered.
fn fit(
    session: &run::Session,
    cfg: &RunConfig,
    train: &TrainConfig,
    target: FitTarget,
    device: &Device,
) -> Result<()> {
    let run = session.run();
    let mut tb = train::roles::tensorboard(run)?;
    let fitting = Fitting {
        device: device.clone(),
        progress: true,
        stop: session.stop().clone(),
    };
    fit_locked(run, cfg, train, target, &fitting, &mut tb)?;
    Ok(())
}

/// `train trainer`: fit rounds as the data allows, each checkpoint made the best at once. A
/// trainer that stalled past its lease while another machine took the role stops, naming it.
fn trainer(
    session: &run::Session,
    cfg: &RunConfig,
    train: &TrainConfig,
    rounds: &TrainerRounds,
) -> Result<()> {
    let lost = || session.lost().is_some();
    rounds.run(session.run(), cfg, train, || !lost(), |_, _| Ok(()))?;
    if let Some(held) = session.lost() {
        anyhow::bail!(
            "another trainer ({}) took the run's `train` role over (this one stalled past its \
             lease, or its lease was removed): it goes on, this one stops",
            held.holder_now().as_deref().unwrap_or("holder unknown")
        );
    }
    Ok(())
}

fn bench(
    config: &Path,
    device: &Device,
    steps: u64,
    batch: Option<usize>,
    reference: bool,
    rounds: usize,
) -> Result<()> {
    anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
    let (cfg, mut train) = load_config(config)?;
    if let Some(b) = batch {
        train.batch_size = b;
    }
    // A window of real positions: a few uniform self-play games.
    let (window, _) = train::machine::sample_window(&cfg, &train, None, 4)?;
    let model = Model::random(&cfg.game, &cfg.network, device, 0).map_err(anyhow::Error::msg)?;
    let mut t = Trainer::new(model, train.clone());
    let kernels = t.kernels_name();
    let b = window.batch(train.batch_size, 0, 0, true);
    t.step(&b); // warm-up
    let mut time_burn = || {
        let t0 = Instant::now();
        for _ in 0..steps {
            t.step(&b);
        }
        (steps as usize * train.batch_size) as f64 / t0.elapsed().as_secs_f64()
    };
    let rate = time_burn();
    let n = &cfg.network;
    let board = &window.boards[0];
    println!(
        "network {}x{}, input {}x{}x{}, batch {}, {:?}",
        n.blocks,
        n.channels,
        board.planes,
        board.board.height(),
        board.board.width(),
        train.batch_size,
        train.optimizer
    );
    println!(
        "machine: {} ({} cores)",
        train::machine::cpu_name(),
        train::machine::available_cores()
    );
    println!(
        "{kernels} train batch {:>4}: {rate:>9.1} samples/s",
        train.batch_size
    );
    if !reference {
        return Ok(());
    }
    let shape = selfplay::bench::Shape {
        planes: board.planes,
        height: board.board.height(),
        width: board.board.width(),
        policy_len: board.policy_len,
    };
    use std::fmt::Write as _;
    // JAX always; PyTorch where python3 can import it.
    let mut references = vec![("train", "jax train")];
    if selfplay::bench::python_has("torch") {
        references.push(("train-torch", "torch train"));
    } else {
        println!("(PyTorch not importable by python3: JAX only)");
    }
    let mut ratios = vec![Vec::new(); references.len()];
    for round in 0..rounds {
        let ours = if round == 0 { rate } else { time_burn() };
        let mut line = format!("round {}: {kernels} {ours:.1}", round + 1);
        for ((mode, label), ratios) in references.iter().zip(&mut ratios) {
            let text = selfplay::bench::run_reference(mode, shape, n, &[train.batch_size], 10.0)
                .map_err(anyhow::Error::msg)?;
            let theirs =
                selfplay::bench::rate_at(&text, label, train.batch_size).ok_or_else(|| {
                    anyhow::anyhow!(
                        "no '{label} batch {}' line in the reference output:\n{text}",
                        train.batch_size
                    )
                })?;
            let name = label.trim_end_matches(" train");
            let _ = write!(line, ", {name} {theirs:.1} ({:.2}x)", ours / theirs);
            ratios.push(ours / theirs);
        }
        println!("{line} samples/s");
    }
    for ((_, label), ratios) in references.iter().zip(&mut ratios) {
        let name = label.trim_end_matches(" train");
        println!(
            "{kernels} / {name}: {}",
            selfplay::bench::median_of_rounds(ratios)
        );
    }
    Ok(())
}
