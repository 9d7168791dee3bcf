//! `eval`: matches between players, the rating table of a run, and SPRT gating; the balance
//! studies (`balance`) and the endgame truth set (`endgames`). The command lines are this
//! binary's: each command's arguments become the library's plain values here, its run config
//! read and parsed once.

mod balance;
mod endgames;

use anyhow::{bail, Context, Result};
use burn::tensor::Device;
use clap::{Parser, Subcommand};
use engine::Game;
use eval::players::{resolve_checkpoint, Contestant, PlayerSpec};
use eval::ratings::{format_table, update_ratings, RatingOptions};
use eval::{MatchOptions, MatchOutput};
use net::model::parse_device;
use run::RunDir;
use selfplay::config::RunConfig;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "eval",
    about = "Matches, Elo ratings and SPRT gating for Lifeline Zero"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a match between two players: random, mcts:N, or a checkpoint directory with an
    /// optional visit count (runs/x/models/000120@64, runs/x/models/best).
    Match(MatchArgs),
    /// Maximum-likelihood Elo of every player in RUN/eval (random = 0), with 95% intervals:
    /// a table, RUN/eval/ratings.json and RUN/eval/ratings.svg.
    Ratings {
        #[arg(long)]
        run: PathBuf,
        /// Virtual draws added to every pair that played (keeps one-sided results finite).
        #[arg(long, default_value_t = 1.0)]
        prior_draws: f64,
    },
    /// The gatekeeper role, for a trainer started with `--promote gate`: gate the run's newest
    /// checkpoint against the best with the SPRT of `[eval]` whenever a newer one appears, and
    /// promote it if it passes; with --follow, keep watching until stopped. Holds the run's
    /// `gate` role; a gate already in the run's results is never played again.
    Gatekeeper(JudgeRole),
    /// The rating role: rate every checkpoint of the run the baselines have not met yet
    /// against `eval.rating_baselines` (`eval.rating_games` each, at `eval.rating_visits`),
    /// then refresh the rating table; with --follow, keep watching for new checkpoints until
    /// stopped. A match already in the run's results is never played again.
    Rate(JudgeRole),
    /// Gate a candidate against the best model with an SPRT ([eval] of the config).
    Gate(GateArgs),
    /// Answer a client on stdin/stdout with a GTP-like line protocol (`list_commands`; see
    /// docs/protocol.md): moves, analyses and positions from a network or mcts:N.
    Serve {
        /// The player: CHECKPOINT[@VISITS] or mcts:N.
        #[arg(long)]
        model: String,
        /// Run config: the game and [search] (default: the checkpoint's own game).
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "cpu", value_parser = parse_device)]
        device: Device,
        /// Serve a page to play and look at the analysis on this address (127.0.0.1:8080;
        /// port 0 picks a free one) instead of the protocol on stdin.
        #[arg(long)]
        http: Option<String>,
        /// Let --http listen on an address other machines can reach. Whoever reaches it
        /// drives the session: there is no login.
        #[arg(long)]
        allow_remote: bool,
        /// The memory one search tree may take, in MB: it bounds the visits of every search
        /// (`visits N` above it is refused).
        #[arg(long, default_value_t = 2048)]
        tree_memory_mb: usize,
    },
    /// SVG pictures of boards: every position of a game record (a .jsonl file of records,
    /// `--game` picks one), or one position (`{"game":…,"options":…,"position":{…}}`, the
    /// position as `showboard` of `eval serve` describes it), into --out.
    Render {
        input: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Which record of the file (0: the first).
        #[arg(long, default_value_t = 0)]
        game: usize,
    },
    /// Prove every class of Black's first turns exactly, as `engine solve openings` does (the
    /// same certificates, resumable the same way), with a network's priors as the solver's move
    /// order (MoHex's focused df-pn): the answers are the same, only the work changes.
    Solve {
        #[command(flatten)]
        args: engine::solve_openings::OpeningsArgs,
        /// The checkpoint whose priors order the moves (a directory, or a run's models/best).
        #[arg(long)]
        order: PathBuf,
        /// Ask the network only in positions with at most this many stones (the top of the
        /// tree, where the order matters most); below, the engine's capture order.
        #[arg(long)]
        order_stones: Option<usize>,
    },
    /// Balance studies: the first player's score, fair komi, the pie table (JSON, SVG and
    /// Markdown in --out).
    Balance {
        #[command(subcommand)]
        study: balance::Study,
    },
    /// Late positions of a player's own games proved exactly (a truth set with certificates),
    /// and a player's value-sign and best-move accuracy on them.
    Endgames {
        #[command(subcommand)]
        command: endgames::Endgames,
    },
}

// `eval match`'s arguments (a plain comment: clap would take a doc comment as the command's
// help, which the variant's gives).
#[derive(clap::Args)]
struct MatchArgs {
    a: String,
    b: String,
    #[arg(long, default_value_t = 20)]
    games: usize,
    /// Run config (game, [search] for default visits, [eval] for openings and games in flight).
    #[arg(long)]
    config: PathBuf,
    /// Run directory: games to RUN/eval/games-*.jsonl, the summary appended to RUN/eval/matches.jsonl.
    #[arg(long)]
    run: Option<PathBuf>,
    /// Write the game records here (instead of, or besides, the run directory).
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random plies before each pair of games (default: [eval] opening_plies).
    #[arg(long)]
    opening_plies: Option<u32>,
    /// Games played at once (default: [eval] games_in_flight).
    #[arg(long)]
    games_in_flight: Option<usize>,
    /// Device of the networks: cpu, or cuda[:N] in a build with the cuda feature.
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: Device,
}

// `eval gate`'s arguments.
#[derive(clap::Args)]
struct GateArgs {
    #[arg(long)]
    config: PathBuf,
    #[arg(long)]
    run: PathBuf,
    #[arg(long)]
    candidate: String,
    /// Default: RUN/models/best.
    #[arg(long)]
    best: Option<String>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: Device,
    /// If the candidate (a checkpoint) is promoted, point RUN/models/best at it.
    #[arg(long)]
    promote: bool,
}

/// What the roles that judge checkpoints in the background (gatekeeper, rater) are given.
#[derive(clap::Args)]
struct JudgeRole {
    #[arg(long)]
    config: PathBuf,
    /// The run: a directory, or `s3://BUCKET/PREFIX` (through a local mirror).
    #[arg(long)]
    run: run::RunLocation,
    /// Keep watching for new checkpoints until stopped.
    #[arg(long)]
    follow: bool,
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: Device,
}

impl JudgeRole {
    /// Open the run for `role` through the one door ([`run::Session`]), its config checked to
    /// play the run's game before the run is entered, and run `body` on it.
    fn run(
        self,
        role: run::Role,
        body: fn(&run::Session, eval::Judging, bool) -> Result<()>,
    ) -> Result<()> {
        let opening = self.run.open_role(role, &self.config)?;
        let judging = opening.name_objects(judging_of(
            opening.text(),
            &self.config,
            opening.run().root(),
            &self.device,
        ))?;
        let session = opening.enter()?;
        session.name_objects(body(&session, judging, self.follow))?;
        Ok(session.finish()?)
    }
}

fn read_config(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Refuse to add results of another game to a run (its ratings would mix games).
fn check_run_game(run: &Path, rc: &RunConfig, config: &Path) -> Result<()> {
    let frozen = RunDir::new(run).config();
    let Ok(text) = std::fs::read_to_string(&frozen) else {
        return Ok(());
    };
    let theirs =
        RunConfig::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", frozen.display()))?;
    if theirs.game != rc.game {
        bail!(
            "{} is a run of {} ({}), and {} is {}: its results would mix two games in one rating table",
            run.display(),
            theirs.game.label(),
            frozen.display(),
            config.display(),
            rc.game.label()
        );
    }
    Ok(())
}

fn refresh_ratings(run: &Path) {
    match update_ratings(run, RatingOptions::default()) {
        Ok(_) => println!(
            "ratings updated: {}",
            RunDir::new(run).ratings_json().display()
        ),
        Err(e) => eprintln!("warning: ratings not updated: {e}"),
    }
}

/// A stop someone asked for (SIGINT or SIGTERM) ends with its one line and the shell's status
/// for an interrupt, 130; any other error keeps anyhow's report (with a backtrace where
/// RUST_BACKTRACE asks for one), and status 1.
fn main() -> Result<std::process::ExitCode> {
    match run_command(Cli::parse().command) {
        Ok(()) => Ok(std::process::ExitCode::SUCCESS),
        Err(e) if is_requested_stop(&e) => {
            eprintln!("{e:#}");
            Ok(std::process::ExitCode::from(130))
        }
        Err(e) => Err(e),
    }
}

/// Whether `e` is, or was caused by, a stop the signal handler was asked for: a match or a
/// study cut short, not a failure.
fn is_requested_stop(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<eval::EvalError>(),
            Some(
                eval::EvalError::Interrupted
                    | eval::EvalError::Stopped { .. }
                    | eval::EvalError::StudyStopped { .. }
            )
        )
    })
}

fn run_command(command: Command) -> Result<()> {
    net::model::default_device_on_cpu();
    // Roles that write finish the write in progress on a first signal; the server writes
    // nothing, so a signal ends it at once (the default action).
    if !matches!(command, Command::Serve { .. }) {
        run::install_stop_handler();
    }
    match command {
        Command::Match(args) => play_match(args)?,
        Command::Ratings { run, prior_draws } => {
            if prior_draws.is_nan() || prior_draws < 0.0 {
                bail!("--prior-draws must not be negative");
            }
            let t = update_ratings(
                &run,
                RatingOptions {
                    prior_draws,
                    ..Default::default()
                },
            )?;
            print!("{}", format_table(&t));
            println!(
                "written: {} and {}",
                RunDir::new(&run).ratings_json().display(),
                RunDir::new(&run).ratings_svg().display()
            );
        }
        Command::Gate(args) => gate(args)?,
        Command::Gatekeeper(role) => role.run(run::Role::Gatekeeper, gatekeeper)?,
        Command::Rate(role) => role.run(run::Role::Rater, rate)?,
        Command::Serve {
            model,
            config,
            seed,
            device,
            http,
            allow_remote,
            tree_memory_mb,
        } => serve(
            &model,
            config.as_deref(),
            seed,
            &device,
            http.as_deref().map(|address| (address, allow_remote)),
            tree_memory_mb,
        )?,
        Command::Render { input, out, game } => render(&input, &out, game)?,
        Command::Balance { study } => print!("{}", balance::run(study)?),
        Command::Endgames { command } => print!("{}", endgames::run(command)?),
        Command::Solve {
            args,
            order,
            order_stones,
        } => solve(&args, &order, order_stones)?,
    }
    Ok(())
}

/// `eval solve`: the engine's solve with the network of `order` ordering the moves.
fn solve(
    args: &engine::solve_openings::OpeningsArgs,
    order: &Path,
    order_stones: Option<usize>,
) -> Result<()> {
    let (game, _) = args.options()?;
    let dir = resolve_checkpoint(order).context("--order")?;
    let (maker, evaluations) =
        eval::study::prior_order::order_maker(&dir, &game, order_stones, args.threads)
            .context("--order")?;
    args.run(Some(maker))?;
    println!(
        "network evaluations: {}",
        evaluations.load(std::sync::atomic::Ordering::Relaxed)
    );
    Ok(())
}

/// `eval serve`: the game comes from the config, or from the checkpoint itself. `http`: the
/// page's address, and whether it may be one other machines reach.
fn serve(
    model: &str,
    config: Option<&Path>,
    seed: u64,
    dev: &Device,
    http: Option<(&str, bool)>,
    tree_memory_mb: usize,
) -> Result<()> {
    if tree_memory_mb == 0 {
        bail!("--tree-memory-mb must be at least 1");
    }
    let tree_memory = tree_memory_mb.saturating_mul(1 << 20);
    let (game, search) = match config {
        Some(path) => {
            let (rc, _) = eval::config::load(path)?;
            (rc.game, rc.search)
        }
        None => match PlayerSpec::parse(model)? {
            PlayerSpec::Checkpoint { path, .. } => {
                let dir = resolve_checkpoint(&path)?;
                let m = net::model::Model::load(&dir, dev)?;
                (
                    m.meta.game.clone(),
                    selfplay::search::SearchConfig::default(),
                )
            }
            _ => bail!("--model {model} plays any game: give --config for the game"),
        },
    };
    let player = Contestant::load(model, &game, &search, search.visits, dev)
        .with_context(|| format!("--model {model}"))?;
    let mut session =
        eval::serve::protocol::Session::with_tree_memory(game, player, seed, tree_memory)
            .map_err(|why| anyhow::anyhow!("--model {model}: {why}"))?;
    if let Some((address, allow_remote)) = http {
        let listener = std::net::TcpListener::bind(address)
            .with_context(|| format!("--http {address}: cannot listen there"))?;
        let bound = listener.local_addr()?;
        if !bound.ip().is_loopback() {
            if !allow_remote {
                bail!("--http {address} can be reached from other machines, and whoever reaches it drives the session: listen on 127.0.0.1, or add --allow-remote");
            }
            eprintln!("warning: serving on {bound}, reachable from other machines, without a login (--allow-remote)");
        }
        // The address actually bound (port 0 picks one), for a browser or a test to read.
        println!("serving the page on http://{}/", listener.local_addr()?);
        std::io::Write::flush(&mut std::io::stdout())?;
        eval::serve::http::serve_http(session, listener)?;
        return Ok(());
    }
    let stdin = std::io::BufReader::new(std::io::stdin());
    eval::serve::protocol::serve(&mut session, stdin, std::io::stdout().lock())?;
    Ok(())
}

/// `eval render`: one SVG per position into `out`, named after the input file and the ply.
fn render(input: &Path, out: &Path, index: usize) -> Result<()> {
    let text = std::fs::read_to_string(input)
        .with_context(|| format!("cannot read {}", input.display()))?;
    let stem = input
        .file_stem()
        .map_or("board".into(), |s| s.to_string_lossy().into_owned());
    let first: serde_json::Value = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .transpose()
        .with_context(|| format!("{}: not JSON", input.display()))?
        .with_context(|| format!("{} is empty", input.display()))?;
    let pictures = if first.get("position").is_some() {
        let game: engine::GameConfig = serde_json::from_value(first.clone())
            .with_context(|| format!("{}: not a game and its options", input.display()))?;
        let position = game
            .setup(&first["position"].to_string())
            .with_context(|| format!("{}: position", input.display()))?;
        let marks = eval::render::Marks {
            title: game.label(),
            ..Default::default()
        };
        vec![(
            position.ply() as usize,
            eval::render::position_svg(&position, &marks),
        )]
    } else {
        let records = engine::record::read_records(input)
            .with_context(|| format!("{} holds no game records", input.display()))?;
        let count = records.len();
        let record = records.into_iter().nth(index).with_context(|| {
            format!("--game {index}: {} holds {count} records", input.display())
        })?;
        eval::render::record_svgs(&record)
            .map_err(|e| anyhow::anyhow!("{}, record {index}: {e}", input.display()))?
    };
    for (ply, svg) in &pictures {
        let path = out.join(format!("{stem}-{ply:03}.svg"));
        run::write_atomic(&path, svg.as_bytes())?;
    }
    println!("{} pictures in {}", pictures.len(), out.display());
    Ok(())
}

/// `eval match`: a match between two players, into a run's results or a file.
fn play_match(args: MatchArgs) -> Result<()> {
    let MatchArgs {
        a,
        b,
        games,
        config,
        run,
        out,
        seed,
        opening_plies,
        games_in_flight,
        device,
    } = args;
    let (rc, ec) = eval::config::load(&config)?;
    if let Some(r) = &run {
        check_run_game(r, &rc, &config)?;
    }
    let pa = Contestant::load(&a, &rc.game, &rc.search, rc.search.visits, &device)
        .context("player A")?;
    let pb = Contestant::load(&b, &rc.game, &rc.search, rc.search.visits, &device)
        .context("player B")?;
    if games == 0 {
        bail!("--games must be at least 1");
    }
    if opening_plies.is_some_and(|n| n > eval::config::MAX_OPENING_PLIES) {
        bail!(
            "--opening-plies must be at most {} (as eval.opening_plies)",
            eval::config::MAX_OPENING_PLIES
        );
    }
    let opts = MatchOptions {
        games,
        opening_plies: opening_plies.unwrap_or(ec.opening_plies),
        games_in_flight: games_in_flight.unwrap_or(ec.games_in_flight).max(1),
        seed,
        progress: true,
        sample_plies: 0,
        prefix: Vec::new(),
        ..Default::default()
    };
    let mut output = match &run {
        Some(r) => MatchOutput::in_run(r, &pa, &pb, ""),
        None => MatchOutput::default(),
    };
    if out.is_some() {
        output.games_file = out;
    }
    let s = eval::run_match(&rc.game, &pa, &pb, &opts, &output)?;
    println!("{}", eval::matches::describe(&s));
    println!("{}", serde_json::to_string(&s)?);
    if let Some(p) = &output.games_file {
        println!("games: {}", p.display());
    }
    if let Some(r) = &run {
        println!(
            "summary appended to {}",
            eval::results::matches_file(r).display()
        );
        refresh_ratings(r);
    }

    Ok(())
}

/// `eval gate`: a candidate gated against the best through the gatekeeper, promoted on a pass
/// when asked.
fn gate(args: GateArgs) -> Result<()> {
    let GateArgs {
        config,
        run,
        candidate,
        best,
        seed,
        device,
        promote,
    } = args;
    let mut judging = judging(&config, &run, &device)?;
    judging.progress = true;
    let ec = judging.eval.clone();
    let rundir = RunDir::new(&run);
    // Only one process may move a run's best pointer at a time.
    let _gate_lock = promote.then(|| rundir.lock(run::Lock::Gate)).transpose()?;
    if let (true, PlayerSpec::Checkpoint { path, .. }) = (promote, PlayerSpec::parse(&candidate)?) {
        // Refused before the games: a promotion could not be written anyway.
        rundir
            .owned_checkpoint(&resolve_checkpoint(&path)?)
            .context("--promote")?;
    }
    let gatekeeper = eval::Gatekeeper::new(judging);
    let best = best.unwrap_or_else(|| rundir.best_pointer().display().to_string());
    let pc = gatekeeper.player(&candidate).context("candidate")?;
    let pb = gatekeeper.player(&best).context("best")?;
    let g = gatekeeper.play(&run, &pc, &pb, seed)?;
    println!("{}", eval::matches::describe(&g.summary));
    println!(
        "SPRT elo0 {} elo1 {} alpha {} beta {}: LLR {:.3} in [{:.3}, {:.3}] -> {:?} (decided by {})",
        ec.elo0, ec.elo1, ec.alpha, ec.beta, g.status.llr, g.status.lower, g.status.upper, g.status.decision, g.decided_by
    );
    println!(
        "{}",
        if g.promoted {
            "candidate PROMOTED"
        } else {
            "candidate rejected"
        }
    );
    if g.promoted && promote {
        match PlayerSpec::parse(&candidate)? {
            PlayerSpec::Checkpoint { path, .. } => {
                let dir = resolve_checkpoint(&path)?;
                eval::judge::promote(&rundir, &dir, None)?;
                println!(
                    "{} now points at {}",
                    rundir.best_pointer().display(),
                    dir.display()
                );
            }
            _ => println!("the candidate is not a checkpoint: no best pointer written"),
        }
    }
    refresh_ratings(&run);

    Ok(())
}

/// `eval gatekeeper`: see the command's help.
fn gatekeeper(session: &run::Session, judging: eval::Judging, follow: bool) -> Result<()> {
    let gatekeeper = eval::Gatekeeper::new(judging);
    loop {
        if let Some(held) = session.lost() {
            bail!(
                "another gatekeeper ({}) took the run's `gate` role over (this one stalled past \
                 its lease, or its lease was removed): it goes on, this one stops",
                held.holder_now().as_deref().unwrap_or("holder unknown")
            );
        }
        if finished_unless_stopped(gatekeeper.step(session.run()), "gatekeeper")?.is_none() {
            return Ok(());
        }
        if !follow || session.stop().requested() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// `eval rate`: every checkpoint of the run against the rating baselines, once.
fn rate(session: &run::Session, judging: eval::Judging, follow: bool) -> Result<()> {
    let rater =
        eval::Rater::new(judging).with_context(|| session.config().display().to_string())?;
    let (run, stop) = (session.run(), session.stop());
    loop {
        let Some(rated) = finished_unless_stopped(rater.rate_all(run, stop), "rater")? else {
            refresh_ratings(run.root());
            return Ok(());
        };
        if rated > 0 || !follow {
            refresh_ratings(run.root());
        }
        if !follow || stop.requested() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
}

/// A judging role asked to stop (SIGINT or SIGTERM) in the middle of a match ends as asked,
/// not as a failure: the match returns [`eval::EvalError::Interrupted`] having written nothing,
/// and the same command plays it again. `None` for that stop; every other error passes through.
fn finished_unless_stopped<T>(
    step: Result<T, eval::EvalError>,
    role: &str,
) -> Result<Option<T>, eval::EvalError> {
    match step {
        Err(eval::EvalError::Interrupted) => {
            eprintln!(
                "{role} stopped: the match in progress was not written, and the same command \
                 plays it again"
            );
            Ok(None)
        }
        other => other.map(Some),
    }
}

/// What the judging roles of the run at `run` play with, from `config` (which must be a config
/// of the run's game) and `device`.
fn judging(config: &Path, run: &Path, device: &Device) -> Result<eval::Judging> {
    judging_of(&read_config(config)?, config, run, device)
}

/// [`judging`] of config `text`, read from `config`.
fn judging_of(text: &str, config: &Path, run: &Path, device: &Device) -> Result<eval::Judging> {
    let (rc, ec) = eval::config::parse(text, config)?;
    check_run_game(run, &rc, config)?;
    Ok(eval::Judging {
        game: rc.game,
        search: rc.search,
        eval: ec,
        device: device.clone(),
        progress: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a stop in the middle of a match still ended a judging role as a failure (the
    /// error "interrupted" and a failing status), or if another error or a finished step were
    /// taken for a stop.
    #[test]
    fn a_judging_role_stopped_in_a_match_ends_as_asked() {
        let stopped = finished_unless_stopped::<usize>(Err(eval::EvalError::Interrupted), "rater");
        assert!(matches!(stopped, Ok(None)), "{stopped:?}");
        assert!(matches!(
            finished_unless_stopped(Ok(3), "rater"),
            Ok(Some(3))
        ));
        let other =
            finished_unless_stopped::<usize>(Err(eval::EvalError::Config("bad".into())), "x");
        assert_eq!(other.unwrap_err().to_string(), "bad");
    }
}
