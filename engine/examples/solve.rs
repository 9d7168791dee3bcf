//! Solve a small Lifeline game from the empty board: the exact value for the first player,
//! the value of every first turn (up to symmetry), nodes and time.
//!
//! ```text
//! cargo run --release -p engine --example solve -- lifeline 3 strong
//! cargo run --release -p engine --example solve -- lifeline 3 komi --komi 2
//! cargo run --release -p engine --example solve -- lifeline 4 weak --seconds 3600
//! ```
//!
//! With a budget (`--seconds`, `--nodes`, `--turn-seconds` for each first turn) a turn not
//! solved in time is reported as unknown.
use anyhow::{bail, Context, Result};
use clap::Parser;
use engine::lifeline::{Balance, Lifeline, LifelineOptions};
use engine::solve::{Analysis, Limits, Solver, Value};
use engine::{Action, Game, Player};
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Exact value of a small Lifeline game from the empty board")]
struct Args {
    /// The game (only `lifeline` for now).
    game: String,
    /// Board side.
    size: usize,
    /// Balancing method: strong, weak or komi.
    balance: String,
    /// Komi points (with `komi`).
    #[arg(long, default_value_t = 0)]
    komi: u8,
    /// Give up after this many seconds (turns not solved by then are reported as unknown).
    #[arg(long)]
    seconds: Option<f64>,
    /// Give up after visiting this many positions.
    #[arg(long)]
    nodes: Option<u64>,
    /// Give up on one first turn after this many seconds and go on with the next.
    #[arg(long)]
    turn_seconds: Option<f64>,
    /// log2 of the number of table entries (16 bytes each).
    #[arg(long, default_value_t = 24)]
    table_log2: u32,
    /// Seconds between progress lines on stderr.
    #[arg(long, default_value_t = 10.0)]
    progress: f64,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.game != "lifeline" {
        bail!(
            "unknown game `{}` (this example solves `lifeline`)",
            args.game
        );
    }
    let balance = match args.balance.as_str() {
        "strong" => Balance::Strong,
        "weak" => Balance::Weak,
        "komi" => Balance::Komi,
        b => bail!("unknown balance `{b}` (expected strong, weak or komi)"),
    };
    if args.table_log2 > 34 {
        bail!("--table-log2 {} is too large (at most 34)", args.table_log2);
    }
    let opts = LifelineOptions {
        komi: args.komi,
        ..LifelineOptions::new(args.size, balance)
    };
    let game = Lifeline::new(opts).context("bad game options")?;
    let limits = Limits {
        nodes: args.nodes,
        time: args.seconds.map(Duration::from_secs_f64),
    };
    let every = Duration::from_secs_f64(args.progress.max(0.1));
    let mut solver = Solver::new(1usize << args.table_log2)
        .with_limits(limits)
        .with_turn_limits(Limits {
            nodes: None,
            time: args.turn_seconds.map(Duration::from_secs_f64),
        })
        .with_progress(every, |p| {
            let classes = if p.total > 0 {
                format!("first-turn classes solved {}/{}, ", p.done, p.total)
            } else {
                String::new()
            };
            eprintln!(
                "[{:7.1}s] {classes}{} nodes ({:.0}k/s), table {:.1}% full",
                p.seconds,
                p.nodes,
                p.nodes as f64 / p.seconds.max(1e-9) / 1e3,
                100.0 * p.table_fill
            )
        });
    let label = if balance == Balance::Komi {
        format!("lifeline side {} komi {}", args.size, args.komi)
    } else {
        format!("lifeline side {} {}", args.size, args.balance)
    };
    println!("{label}: solving from the empty board");
    let analysis = solver.analyse(&game);
    report(&game, &analysis, solver.table_fill());
    if balance != Balance::Komi {
        // Each swap decision gets the budget of one first turn.
        solver.set_limits(Limits {
            nodes: args.nodes,
            time: args
                .turn_seconds
                .or(args.seconds)
                .map(Duration::from_secs_f64),
        });
        swap_map(&game, &analysis, &mut solver);
    }
    Ok(())
}

/// For a pie opening: whether the reply's swap wins, i.e. whether the opening would win for the
/// player who made it if the swap were not there (the exact swap map).
fn swap_map(game: &Lifeline, a: &Analysis, solver: &mut Solver) {
    println!("swap map (each opening's value for Black were the swap not there; White swaps where it wins):");
    let (mut nodes, mut seconds) = (0, 0.0);
    let mut swap = Vec::new();
    for (t, decision) in a.turns.iter().zip(solver.swap_decisions(game, a)) {
        let Some(s) = decision else { continue };
        nodes += s.nodes;
        seconds += s.seconds;
        // The swap wins for White exactly where the opening wins for its maker without it.
        let opening = s.value;
        if opening == Some(Value::Win) {
            swap.push(turn_text(game, &t.actions));
        }
        println!(
            "  {:<12} {:<8} -> White {}",
            turn_text(game, &t.actions),
            value_text(opening),
            match s.value {
                Some(Value::Win) => "swaps",
                Some(_) => "plays on",
                None => "?",
            }
        );
    }
    println!(
        "openings that win for their player without the swap (one per class): {}",
        if swap.is_empty() {
            "none".into()
        } else {
            swap.join(", ")
        }
    );
    println!("swap map: nodes {nodes}, seconds {seconds:.2}");
}

fn turn_text(g: &Lifeline, turn: &[Action]) -> String {
    turn.iter()
        .map(|&a| g.action_to_string(a))
        .collect::<Vec<_>>()
        .join("+")
}

fn value_text(v: Option<Value>) -> String {
    v.map_or("unknown".into(), |v| v.to_string())
}

fn report(game: &Lifeline, a: &Analysis, table_fill: f64) {
    let s = &a.solved;
    let black = s.value.map(|v| v.for_player(game.to_move(), Player::Black));
    println!("value for Black (the first player): {}", value_text(black));
    println!(
        "first turns: {} sequences in {} classes (same position up to symmetry)",
        a.all_turns().count(),
        a.turns.len()
    );
    for t in &a.turns {
        println!(
            "  {:<12} {:<8} ({} equivalent)",
            turn_text(game, &t.actions),
            value_text(t.value),
            t.equivalent.len()
        );
    }
    let winning: Vec<String> = a
        .turns
        .iter()
        .filter(|t| t.value == Some(Value::Win))
        .map(|t| turn_text(game, &t.actions))
        .collect();
    println!(
        "winning first turns (one per class): {}",
        if winning.is_empty() {
            "none".into()
        } else {
            winning.join(", ")
        }
    );
    if a.turns.iter().any(|t| t.actions.len() > 1) {
        let firsts: Vec<String> = a
            .first_actions()
            .into_iter()
            .filter(|(_, v)| *v == Some(Value::Win))
            .map(|(x, _)| game.action_to_string(x))
            .collect();
        println!(
            "first stones that start a winning turn: {}",
            if firsts.is_empty() {
                "none".into()
            } else {
                firsts.join(" ")
            }
        );
    }
    println!(
        "nodes {}, seconds {:.2}, repetitions {}, table {:.1}% full",
        s.nodes,
        s.seconds,
        s.repetitions,
        100.0 * table_fill
    );
}
