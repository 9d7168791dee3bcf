//! `engine`: play and inspect games from the command line.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use engine::display::render;
use engine::games::{AnyGame, GameConfig};
use engine::record::GameRecord;
use engine::{Game, Player};
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "engine",
    about = "Rules of the Lifeline family: play random games, replay records"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Play one uniformly random game and print every move and the final board.
    Random {
        /// A game config, e.g. configs/lifeline-5-quick.toml (its `game` and `[options]`).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Game as JSON when no config is given.
        #[arg(long, default_value = r#"{"game":"lifeline","options":{"size":5}}"#)]
        game: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print the game record as a JSON line at the end.
        #[arg(long)]
        record: bool,
    },
    /// Replay every record of a JSON-lines file and report the results.
    Replay { file: PathBuf },
    /// Random actions over every game and option set, and positions set up from descriptions
    /// (valid, random, malformed), checking the interface contract all the way; reports
    /// actions per second and any failure with the seed and game that reproduce it.
    Soak {
        /// Stop starting games once this many actions have been applied.
        #[arg(long, default_value_t = 1_000_000)]
        actions: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Threads playing games (default: every core).
        #[arg(long)]
        threads: Option<usize>,
        /// Check the whole contract (symmetries, encoding, legality) every N actions of a
        /// game; the hash is checked after every action.
        #[arg(long, default_value_t = 10)]
        check_every: u64,
        /// Play only this game of the seed (to reproduce a failure).
        #[arg(long)]
        game: Option<u64>,
        /// The game configs the soak cycles through, one JSON per line, then exit.
        #[arg(long)]
        list: bool,
    },
    /// Prove positions exactly with proof-number search, and check the certificates.
    Solve {
        #[command(subcommand)]
        cmd: SolveCmd,
    },
}

#[derive(Subcommand)]
enum SolveCmd {
    /// Prove every class of Black's first turns (after White's swap, where the game has one),
    /// writing each class's certificate to OUT as soon as it is proved; run it again with the
    /// same OUT to resume, or on another machine with `--only`.
    Openings(engine::solve_openings::OpeningsArgs),
    /// How the cost of a proof grows with the moves left: random games walked back from their
    /// end, each position proved by df-pn until one takes longer than the budget; prints the
    /// nodes and seconds by the number of stones still to place (empty cells), the figures to
    /// extrapolate a whole board's solve from.
    Growth {
        /// A game config (its `game` and `[options]`).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Game as JSON when no config is given.
        #[arg(
            long,
            default_value = r#"{"game":"lifeline","options":{"size":4,"balance":"weak"}}"#
        )]
        game: String,
        /// Random games walked back.
        #[arg(long, default_value_t = 4)]
        games: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Give up on a game's walk after a position takes this long.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Each thread's table, in MiB.
        #[arg(long, default_value_t = 1024)]
        table_mib: usize,
        /// End every walk this many seconds after the start (0: no limit), so that a run of
        /// fixed length still prints its fit.
        #[arg(long, default_value_t = 0.0)]
        deadline_seconds: f64,
        /// Games walked at once, one solver and table each.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Plain df-pn (new positions at proof and disproof numbers of 1), to compare.
        #[arg(long)]
        no_mobility: bool,
        /// Also write growth.json (every row, the fits, the extrapolation) and growth.svg (the
        /// rows and the fitted lines) into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Walk nothing: fit the rows of earlier runs' output (this command's table, from
        /// one machine or several); repeatable.
        #[arg(long)]
        rows: Vec<PathBuf>,
    },
    /// Verify certificates without search, using only the rules.
    Check {
        #[arg(required = true)]
        proofs: Vec<PathBuf>,
    },
}

fn symbol(g: &AnyGame, c: engine::Cell) -> char {
    let (black, white) = (g.stones(Player::Black), g.stones(Player::White));
    if black.contains(c as usize) {
        'X'
    } else if white.contains(c as usize) {
        'O'
    } else {
        '.'
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Random {
            config,
            game,
            seed,
            record,
        } => {
            let cfg = GameConfig::load(config.as_deref(), &game)?;
            let mut g = cfg.start().context("--game")?;
            let start = g.clone();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut legal = Vec::new();
            let mut actions = Vec::new();
            println!("{} (seed {seed}); X = black, O = white", cfg.label());
            while g.outcome().is_none() {
                g.legal_actions(&mut legal);
                let a = legal[rng.gen_range(0..legal.len())];
                println!(
                    "{:>4}. {:<5} {:<8} ({} legal)",
                    g.ply() + 1,
                    g.to_move().to_string(),
                    g.action_to_string(a),
                    legal.len()
                );
                g.apply(a);
                actions.push(a);
            }
            print!("{}", render(g.board(), |c| symbol(&g, c)));
            let o = g.outcome().unwrap();
            match o.winner {
                Some(w) => println!("{w} wins ({:?}) after {} actions", o.reason, actions.len()),
                None => println!("draw ({:?}) after {} actions", o.reason, actions.len()),
            }
            if record {
                println!(
                    "{}",
                    GameRecord::new(cfg, &start, &actions, &g).to_json_line()
                );
            }
        }
        Cmd::Soak {
            actions,
            seed,
            threads,
            check_every,
            game,
            list,
        } => {
            if list {
                for c in engine::soak::all_configs() {
                    println!("{}", serde_json::to_string(&c)?);
                }
                return Ok(());
            }
            let threads = threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            soak(&engine::soak::SoakOptions {
                actions,
                seed,
                threads,
                check_every,
                only_game: game,
            })?;
        }
        Cmd::Solve { cmd } => solve(cmd)?,
        Cmd::Replay { file } => {
            let records = engine::record::read_records(&file)?;
            for (i, r) in records.iter().enumerate() {
                let g = r
                    .replay()
                    .with_context(|| format!("{}: record {}", file.display(), i + 1))?;
                let result = g.outcome().map_or("unfinished".into(), |o| o.to_string());
                println!("record {}: {} actions, {result}", i + 1, r.actions.len());
            }
        }
    }
    Ok(())
}

fn solve(cmd: SolveCmd) -> Result<()> {
    match cmd {
        SolveCmd::Openings(args) => {
            args.run(None)?;
        }
        SolveCmd::Growth {
            config,
            game,
            games,
            seed,
            seconds,
            table_mib,
            deadline_seconds,
            threads,
            no_mobility,
            out,
            rows,
        } => {
            let cfg = GameConfig::load(config.as_deref(), &game)?;
            let start = cfg.start().context("--game")?;
            if !(seconds > 0.0 && seconds.is_finite()) {
                anyhow::bail!("--seconds must be a number of seconds above 0");
            }
            if !(deadline_seconds >= 0.0 && deadline_seconds.is_finite()) {
                anyhow::bail!("--deadline-seconds must be a number of seconds, 0 or more");
            }
            let walk = engine::solve_growth::Walk {
                games,
                seed,
                seconds,
                deadline: (deadline_seconds > 0.0)
                    .then(|| std::time::Duration::from_secs_f64(deadline_seconds)),
                threads: threads.max(1),
                table_bytes: table_mib.max(1) << 20,
                mobility: !no_mobility,
            };
            growth(&start, walk, &rows, out.as_deref())?;
        }
        SolveCmd::Check { proofs } => {
            let mut failed = 0;
            for path in &proofs {
                match engine::proof::check_file(path) {
                    Ok((h, c)) => println!(
                        "{}: valid, {} wins after {}; {} positions checked, {} of {} moves used, {:.2} s",
                        path.display(),
                        h.winner,
                        if h.setup.is_empty() { "the start".into() } else { h.setup.join(" ") },
                        c.positions,
                        c.moves_used,
                        h.moves,
                        c.seconds
                    ),
                    Err(e) => {
                        failed += 1;
                        println!("{}: REFUSED: {e}", path.display());
                    }
                }
            }
            if failed > 0 {
                anyhow::bail!("{failed} of {} certificates refused", proofs.len());
            }
        }
    }
    Ok(())
}

fn growth(
    start: &AnyGame,
    plan: engine::solve_growth::Walk,
    earlier: &[PathBuf],
    out: Option<&Path>,
) -> Result<()> {
    use engine::solve_growth::{walk, GrowthReport};
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let rows = if earlier.is_empty() {
        println!("game\tply\tempty\twinner\tnodes\tstrategy\tseconds\tnodes_per_s");
        walk(start, plan, |r| {
            let or_unknown = |v: Option<String>| v.unwrap_or_else(|| "unknown".into());
            println!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{:.2}\t{:.0}",
                r.game,
                r.ply,
                r.empty,
                or_unknown(r.winner.map(|w| w.to_string())),
                r.nodes,
                or_unknown(r.strategy.map(|s| s.to_string())),
                r.seconds,
                r.nodes as f64 / r.seconds.max(1e-9)
            );
        })
    } else {
        read_growth_rows(earlier)?
    };
    // The position after Black's first stone (and White's swap, where there is one).
    report_growth(GrowthReport::new(rows, start.board().num_cells() - 1), out)
}

/// The rows of earlier `solve growth` tables, each file named in its error.
fn read_growth_rows(paths: &[PathBuf]) -> Result<Vec<engine::solve_growth::GrowthRow>> {
    let mut rows = Vec::new();
    for path in paths {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let parsed = engine::solve_growth::parse_rows(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if parsed.is_empty() {
            anyhow::bail!("{}: no rows of `solve growth`'s table", path.display());
        }
        rows.extend(parsed);
    }
    Ok(rows)
}

fn report_growth(report: engine::solve_growth::GrowthReport, out: Option<&Path>) -> Result<()> {
    use engine::solve_growth::FIT_MIN_NODES;
    let (opening, rate) = (report.opening_empty, report.nodes_per_second);
    let years = |n: f64| n / rate / (365.25 * 86_400.0);
    match (report.fit.nodes, report.opening_nodes) {
        (Some(f), Some(n)) => println!(
            "nodes: x{:.2} per empty cell ({} positions of at least {FIT_MIN_NODES} nodes); at {opening} empty cells about {n:.1e} nodes, {:.1e} years of one thread at its {rate:.0} nodes/s",
            f.factor,
            f.points,
            years(n)
        ),
        _ => println!("nodes: too few positions to fit"),
    }
    match (report.fit.strategy, report.opening_strategy) {
        (Some(f), Some(n)) => println!(
            "strategy: x{:.2} per empty cell; at {opening} empty cells about {n:.1e} positions in a certificate",
            f.factor
        ),
        _ => println!("strategy: too few positions to fit"),
    }
    if let Some(dir) = out {
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
        };
        write("growth.json", serde_json::to_string_pretty(&report)?)?;
        write("growth.svg", report.svg())?;
        println!("wrote {}/growth.json and growth.svg", dir.display());
    }
    Ok(())
}

fn soak(opts: &engine::soak::SoakOptions) -> Result<()> {
    let configs = engine::soak::all_configs();
    println!(
        "soak: {} actions over {} game configs, seed {}, {} threads, full check every {} actions",
        opts.actions,
        configs.len(),
        opts.seed,
        opts.threads,
        opts.check_every
    );
    let start = std::time::Instant::now();
    let mut next_report = 10.0;
    let report = engine::soak::run(opts, |c| {
        let t = start.elapsed().as_secs_f64();
        if t >= next_report {
            next_report = t + 10.0;
            eprintln!(
                "  {:.0} s: {} actions ({:.0}/s), {} games",
                t,
                c.actions,
                c.actions as f64 / t,
                c.games
            );
        }
    });
    let c = &report.counts;
    println!(
        "{} actions in {:.1} s: {:.0} actions/s",
        c.actions,
        report.elapsed.as_secs_f64(),
        report.actions_per_second()
    );
    println!(
        "{:<16} {:>12} {:>8} {:>8} {:>10}",
        "game", "actions", "games", "set-ups", "checks"
    );
    for (name, g) in &report.by_game {
        println!(
            "{:<16} {:>12} {:>8} {:>8} {:>10}",
            name, g.actions, g.games, g.setup_games, g.checks
        );
    }
    println!(
        "{} games from the start, {} played on from set-ups; {} full checks; {} records replayed; \
         {} reached positions set up again; random descriptions: {} accepted, {} refused; \
         {} malformed descriptions refused",
        c.games,
        c.setup_games,
        c.checks,
        c.replays,
        c.setups,
        c.random_accepted,
        c.random_refused,
        c.malformed_refused
    );
    for f in &report.failures {
        println!("FAILED: {f}");
    }
    if report.failures.is_empty() {
        println!("no failures");
        Ok(())
    } else {
        anyhow::bail!("{} games failed", report.failures.len())
    }
}
