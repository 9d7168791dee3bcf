//! `eval balance <study>`: runs a balance study ([`crate::balance`]) for every player given and
//! writes `OUT/<study>.json`, `OUT/<study>.svg` and `OUT/<study>.md`, each with the command
//! that made it.

use crate::balance::{self, Estimate, FirstPlayer, KomiCurve, PieRow, StudyOptions};
use crate::players::Contestant;
use crate::EvalError;
use engine::{Game, GameConfig};
use selfplay::config::RunConfig;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What every study takes from the command line.
#[derive(Clone, Debug, clap::Args)]
pub struct StudyArgs {
    /// Run config: the game and its options, [search] for network players, [eval] for games
    /// in flight.
    #[arg(long)]
    pub config: PathBuf,
    /// A player: mcts:N or CHECKPOINT@VISITS; repeat it to compare strengths side by side.
    #[arg(long = "player", required = true)]
    pub players: Vec<String>,
    /// Games per figure (per game, komi and player).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// Directory the JSON, SVG and Markdown go to.
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Decisions at the start of each game chosen in proportion to the search's visits rather
    /// than the most visited: a network would otherwise play the same game every time.
    #[arg(long, default_value_t = 2)]
    pub sample_plies: u32,
    /// Games played at once (default: [eval] games_in_flight of the config).
    #[arg(long)]
    pub games_in_flight: Option<usize>,
    /// Device of network players: cpu, or cuda[:N] in a build with the cuda feature.
    #[arg(long, default_value = "cpu")]
    pub device: String,
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
    /// Lifeline: the first player's score under strong, weak and komi pie for several sides.
    PieTable {
        #[command(flatten)]
        args: StudyArgs,
        #[arg(long, value_delimiter = ',', default_value = "4,5,6,7")]
        sides: Vec<usize>,
        /// Komi values of the komi-pie curve of each side.
        #[arg(long, default_value = "0..=6")]
        komi: String,
        /// Sides also solved exactly (strong, weak, and komi pie at each komi): the result
        /// for Black with perfect play, the winning first turns and the openings to swap.
        #[arg(long, value_delimiter = ',')]
        exact_sides: Vec<usize>,
        /// Budget of each solver call in seconds (a game not solved in time is "unknown").
        #[arg(long, default_value_t = 600.0)]
        exact_seconds: f64,
    },
}

/// Parse `0..=6`, `0..7` or `0,2,4`.
pub fn parse_komis(text: &str) -> Result<Vec<u32>, EvalError> {
    let bad = || {
        EvalError::Config(format!(
            "--komi `{text}`: expected a range such as 0..=6 or a list such as 0,2,4"
        ))
    };
    let num = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
    let values: Vec<u32> = if let Some((a, b)) = text.split_once("..=") {
        (num(a)?..=num(b)?).collect()
    } else if let Some((a, b)) = text.split_once("..") {
        (num(a)?..num(b)?).collect()
    } else {
        text.split(',').map(num).collect::<Result<_, _>>()?
    };
    if values.is_empty() {
        return Err(bad());
    }
    Ok(values)
}

/// The command line as a reader can paste it back into a shell.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

struct Loaded {
    run: RunConfig,
    players: Vec<Contestant>,
    opts: StudyOptions,
}

/// The config and players of a study, checkpoints checked against the config's game.
fn load(args: &StudyArgs) -> Result<Loaded, EvalError> {
    load_players(args, false)
}

/// [`load`]; with `any_game`, checkpoints are checked against their own game rather than the
/// config's (the pie table plays several sizes and methods, each game checked as it is played).
fn load_players(args: &StudyArgs, any_game: bool) -> Result<Loaded, EvalError> {
    let run = RunConfig::load(&args.config).map_err(EvalError::Config)?;
    let eval = crate::EvalConfig::from_table(&run.table)
        .map_err(|e| EvalError::Config(format!("{}: {e}", args.config.display())))?;
    let device = selfplay::model::parse_device(&args.device)?;
    let players = args
        .players
        .iter()
        .map(|p| {
            let game = (!any_game).then_some(&run.game);
            Contestant::load_for(p, game, &run.search, run.search.visits, &device)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let opts = StudyOptions {
        games: args.games,
        sample_plies: args.sample_plies,
        games_in_flight: args.games_in_flight.unwrap_or(eval.games_in_flight).max(1),
        seed: args.seed,
        progress: true,
    };
    selfplay::generate::check_writable(&args.out)?;
    Ok(Loaded { run, players, opts })
}

/// Run a study and write its files; returns the Markdown summary.
pub fn run(study: &Study) -> Result<String, EvalError> {
    match study {
        Study::FirstPlayer { args } => {
            let l = load(args)?;
            let results = l
                .players
                .iter()
                .map(|p| balance::first_player(&l.run.game, p, &l.opts))
                .collect::<Result<Vec<_>, _>>()?;
            let svg = crate::charts::first_player_svg(&results).map_err(EvalError::Config)?;
            write(
                &args.out,
                "first-player",
                serde_json::json!({ "results": results }),
                &svg,
                &first_player_md(&results),
            )
        }
        Study::Komi { args, komi } => {
            let komis = parse_komis(komi)?;
            let l = load(args)?;
            let curves = l
                .players
                .iter()
                .map(|p| balance::komi_study(&l.run.game, p, &komis, &l.opts))
                .collect::<Result<Vec<_>, _>>()?;
            let svg = crate::charts::komi_svg(&curves).map_err(EvalError::Config)?;
            write(
                &args.out,
                "komi",
                serde_json::json!({ "curves": curves }),
                &svg,
                &komi_md(&curves),
            )
        }
        Study::SwapMap { args, check_games } => {
            let l = load(args)?;
            let maps = l
                .players
                .iter()
                .map(|p| crate::swapmap::swap_map(&l.run.game, p, *check_games, &l.opts))
                .collect::<Result<Vec<_>, _>>()?;
            let board = l
                .run
                .game
                .start()
                .map_err(|e| EvalError::Config(e.to_string()))?
                .board()
                .clone();
            let svg = side_by_side(
                maps.iter()
                    .map(|m| crate::swapmap::swap_map_svg(&board, m))
                    .collect(),
            );
            write(
                &args.out,
                "swap-map",
                serde_json::json!({ "maps": maps }),
                &svg,
                &swap_map_md(&maps),
            )
        }
        Study::PieTable {
            args,
            sides,
            komi,
            exact_sides,
            exact_seconds,
        } => {
            let komis = parse_komis(komi)?;
            if !(*exact_seconds > 0.0 && exact_seconds.is_finite()) {
                return Err(EvalError::Config(format!(
                    "--exact-seconds must be a positive number of seconds (got {exact_seconds})"
                )));
            }
            let l = load_players(args, true)?;
            let GameConfig::Lifeline(base) = &l.run.game else {
                return Err(EvalError::Config(format!(
                    "the pie table is Lifeline's; {} is {}",
                    args.config.display(),
                    l.run.game.label()
                )));
            };
            // A searcher (mcts:N) fills a table of its own; trained networks fill one table
            // together, each cell played by the first network trained for it (one network per
            // balancing method, or per size).
            let (nets, searchers): (Vec<&Contestant>, Vec<&Contestant>) = l
                .players
                .iter()
                .partition(|p| matches!(p.brain, crate::players::Brain::Net { .. }));
            let mut tables = Vec::new();
            for p in searchers {
                tables.push((
                    p.info.name.clone(),
                    balance::pie_table(base, sides, &komis, &[p], &l.opts)?,
                ));
            }
            if !nets.is_empty() {
                let name = nets
                    .iter()
                    .map(|p| p.info.name.as_str())
                    .collect::<Vec<_>>();
                tables.push((
                    name.join(" + "),
                    balance::pie_table(base, sides, &komis, &nets, &l.opts)?,
                ));
            }
            let exact = solve_exact(base, exact_sides, &komis, *exact_seconds)?;
            // One picture per player, the first one shown; all are in the JSON.
            let svg = crate::charts::pie_table_svg(&tables[0].0, &tables[0].1)
                .map_err(EvalError::Config)?;
            let json = serde_json::json!({
                "tables": tables.iter().map(|(p, rows)| serde_json::json!({"player": p, "rows": rows})).collect::<Vec<_>>(),
                "exact": exact,
            });
            let md = pie_table_md(&tables) + &exact_md(&exact);
            write(&args.out, "pie-table", json, &svg, &md)
        }
    }
}

/// The exact rows of the pie table, with a progress bar (each can take minutes).
fn solve_exact(
    base: &engine::lifeline::LifelineOptions,
    sides: &[usize],
    komis: &[u32],
    seconds: f64,
) -> Result<Vec<crate::exact::ExactRow>, EvalError> {
    if sides.is_empty() {
        return Ok(Vec::new());
    }
    let bar = indicatif::ProgressBar::new((sides.len() * (2 + komis.len())) as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} solved {elapsed} {msg}")
            .expect("valid template"),
    );
    bar.set_message("(exact values)");
    let rows = crate::exact::exact_rows(base, sides, komis, seconds, |r| {
        // Printed whether or not the bar is drawn (it is not when stderr is no terminal).
        bar.suspend(|| {
            eprintln!(
                "exact: side {} {}{}: Black {} ({:.1} s)",
                r.side,
                r.balance,
                r.komi.map_or(String::new(), |k| format!(" komi {k}")),
                r.result(),
                r.seconds
            )
        });
        bar.inc(1);
    })
    .map_err(EvalError::Config)?;
    bar.finish_and_clear();
    Ok(rows)
}

fn exact_md(rows: &[crate::exact::ExactRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n## Exact values (solver, perfect play)\n\n| side | method | result for Black | winning first turns (one per class) | openings White should swap | classes solved | seconds |\n|---|---|---|---|---|---|---|\n");
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    for r in rows {
        let method = match r.komi {
            Some(k) => format!("komi pie, komi {k}"),
            None => format!("{} pie", r.balance),
        };
        let swap = if r.komi.is_some() {
            "-".to_string()
        } else {
            list(&r.swap)
        };
        let _ = writeln!(
            s,
            "| {} | {method} | {} | {} | {swap} | {}/{} | {:.1} |",
            r.side,
            r.result(),
            list(&r.winning_first_turns),
            r.first_turns_solved,
            r.first_turn_classes,
            r.seconds
        );
    }
    s
}

/// Write `OUT/NAME.json` (with the command), `.svg` and `.md`; returns the Markdown.
fn write(
    out: &Path,
    name: &str,
    mut json: serde_json::Value,
    svg: &str,
    md: &str,
) -> Result<String, EvalError> {
    let command = command_line();
    json["study"] = name.into();
    json["command"] = command.clone().into();
    json["intervals"] =
        "95%: Wilson score intervals for scores (draws count half), delta method for the fair komi"
            .into();
    let md = format!("{md}\nMade by `{command}`.\n");
    let text = serde_json::to_string_pretty(&json).expect("studies serialise") + "\n";
    selfplay::rundir::write_atomic(&out.join(format!("{name}.json")), text.as_bytes())?;
    selfplay::rundir::write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
    selfplay::rundir::write_atomic(&out.join(format!("{name}.md")), md.as_bytes())?;
    Ok(md)
}

/// SVG pictures next to each other in one SVG (nested `<svg>` elements).
fn side_by_side(pictures: Vec<String>) -> String {
    let size = |svg: &str, attr: &str| -> f64 {
        svg.split(&format!("{attr}=\""))
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let (mut x, mut height, mut inner) = (0.0, 0.0f64, String::new());
    for p in &pictures {
        let (w, h) = (size(p, "width"), size(p, "height"));
        inner.push_str(&p.replacen("<svg ", &format!("<svg x=\"{x}\" y=\"0\" "), 1));
        x += w;
        height = height.max(h);
    }
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{x}\" height=\"{height}\">{inner}</svg>\n")
}

fn swap_map_md(maps: &[crate::swapmap::SwapMap]) -> String {
    let mut s = String::from("# Swap map

| game | player | openings (searched) | White should swap | best openings for the player who made them |
|---|---|---|---|---|
");
    for m in maps {
        let mut best: Vec<&crate::swapmap::Opening> = m.openings.iter().collect();
        best.sort_by(|a, b| b.value.total_cmp(&a.value));
        let top = best
            .iter()
            .take(5)
            .map(|o| match o.checked {
                Some(c) => format!(
                    "{} {:+.2} (played: Black {})",
                    o.cells.join("+"),
                    o.value,
                    c.show()
                ),
                None => format!("{} {:+.2}", o.cells.join("+"), o.value),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let swaps = m.openings.iter().filter(|o| o.swap).count();
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {swaps} | {top} |",
            m.game,
            m.player,
            m.openings.len(),
            m.searched
        );
    }
    s
}

fn opt(e: Option<Estimate>) -> String {
    e.map_or("-".into(), |e| e.show())
}

fn first_player_md(results: &[FirstPlayer]) -> String {
    let mut s = String::from("# First player's score\n\n| game | player | games (distinct) | Black's score | swap taken | Black if swapped | Black if kept |\n|---|---|---|---|---|---|---|\n");
    for r in results {
        let (rate, sw, kept) = match &r.swaps {
            Some(x) => (
                x.rate.show(),
                opt(x.black_when_swapped),
                opt(x.black_when_kept),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {} | {rate} | {sw} | {kept} |",
            r.game,
            r.player,
            r.games,
            r.distinct_games,
            r.black.show()
        );
    }
    s
}

fn komi_md(curves: &[KomiCurve]) -> String {
    let mut s = String::from("# Black's score by komi\n\n| game | player | fair komi | komi: Black's score |\n|---|---|---|---|\n");
    for c in curves {
        let points = c
            .points
            .iter()
            .map(|p| format!("{}: {}", p.komi, p.black.show()))
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(
            s,
            "| {} | {} | {} | {points} |",
            c.game,
            c.player,
            c.fair_komi.map_or("no crossing".into(), |f| format!(
                "{:.2} [{:.2}, {:.2}]",
                f.estimate, f.lo, f.hi
            ))
        );
    }
    s
}

fn pie_table_md(tables: &[(String, Vec<PieRow>)]) -> String {
    let mut s = String::from("# First player's score by balancing method\n\n| player | side | strong pie | weak pie | fair komi | komi pie at komi k |\n|---|---|---|---|---|---|\n");
    for (player, rows) in tables {
        for r in rows {
            let fair = r.komi.fair_komi.map_or("no crossing".into(), |f| {
                format!("{:.2} [{:.2}, {:.2}]", f.estimate, f.lo, f.hi)
            });
            let at = r
                .komi_at_fair
                .as_ref()
                .map_or("-".into(), |p| format!("k={}: {}", p.komi, p.black.show()));
            let _ = writeln!(
                s,
                "| {player} | {} | {} | {} | {fair} | {at} |",
                r.side,
                r.strong.black.show(),
                r.weak.black.show()
            );
        }
    }
    s
}
