//! `eval balance <study>`: runs a balance study ([`crate::study::balance`]) for every player given and
//! writes `OUT/<study>.json`, `OUT/<study>.svg` and `OUT/<study>.md`, each with the command
//! that made it.

use crate::error::EvalError;
use crate::players::Contestant;
use crate::study::balance::{self, FirstPlayer, KomiCurve, PieRow, Score, StudyOptions};
use crate::study::exact::ExactRow;
use crate::study::ladder::{self, Rung};
use crate::study::openings::class_of;
use crate::study::swapmap::SwapMap;
use engine::board::Board;
use engine::{Game, GameConfig};
use selfplay::config::RunConfig;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What every study takes from the command line.
#[derive(Clone, Debug, clap::Args)]
pub struct StudyArgs {
    /// Run config: the game and its options, `[search]` for network players, `[eval]` for games
    /// in flight.
    #[arg(long)]
    pub config: PathBuf,
    /// A player: mcts:N or CHECKPOINT@VISITS; repeat it to compare strengths side by side.
    #[arg(long = "player", required = true)]
    pub players: Vec<String>,
    /// Games per opening class played out (and from the empty board), per game, komi and
    /// player.
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// Directory the JSON, SVG and Markdown go to.
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Plies after the decisions measured (Black's first turn, White's swap) chosen in
    /// proportion to the search's visits among near-best actions, for variety. None by
    /// default: a sampled ply is a move the player would not choose, and on small boards those
    /// are its mistakes (a side-3 network's fair komi fell from 3.5 to 2.5 with 2 of them), so
    /// a network plays each opening's best line once and its figures say "deterministic".
    #[arg(long, default_value_t = 0)]
    pub sample_plies: u32,
    /// Sampled plies choose among actions whose search value is within this of the best.
    #[arg(long, default_value_t = 0.1)]
    pub sample_margin: f32,
    /// Opening classes whose search value is more than this (in [-1, 1]) from the best
    /// class's are pruned, not played out.
    #[arg(long, default_value_t = 0.5)]
    pub margin: f64,
    /// At most this many opening classes are played out (the best by search value).
    #[arg(long, default_value_t = 8)]
    pub max_classes: usize,
    /// Lifeline sides also solved exactly: the exact result beside every estimate, and any
    /// estimate whose interval excludes it flagged.
    #[arg(long, value_delimiter = ',')]
    pub exact_sides: Vec<usize>,
    /// Budget of each solver call in seconds (a game not solved in time is "unknown").
    #[arg(long, default_value_t = 600.0)]
    pub exact_seconds: f64,
    /// Games played at once (default: `[eval]` games_in_flight of the config).
    #[arg(long)]
    pub games_in_flight: Option<usize>,
    /// Device of network players: cpu, or `cuda[:N]` in a build with the cuda feature.
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    pub device: burn::tensor::Device,
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
        args: crate::study::practical::PracticalArgs,
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

/// Most komi values a study takes (each is a curve point of games).
const MAX_KOMIS: usize = 64;

/// Longest solver budget accepted, in seconds (a week).
const MAX_EXACT_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// Parse `0..=6`, `0..7` or `0,2,4`: at most `MAX_KOMIS` values, counted before any list
/// is built.
pub fn parse_komis(text: &str) -> Result<Vec<u32>, EvalError> {
    let bad = |why: &str| EvalError::Config(format!("--komi `{text}`: {why}"));
    let expected = "expected a range such as 0..=6 or a list such as 0,2,4";
    let num = |s: &str| s.trim().parse::<u32>().map_err(|_| bad(expected));
    let range = |a: u32, end: u64| {
        if end.saturating_sub(a as u64) > MAX_KOMIS as u64 {
            return Err(bad(&format!("at most {MAX_KOMIS} komi values")));
        }
        Ok((a as u64..end).map(|k| k as u32).collect::<Vec<u32>>())
    };
    let values: Vec<u32> = if let Some((a, b)) = text.split_once("..=") {
        range(num(a)?, num(b)? as u64 + 1)?
    } else if let Some((a, b)) = text.split_once("..") {
        range(num(a)?, num(b)? as u64)?
    } else {
        text.split(',').map(num).collect::<Result<_, _>>()?
    };
    if values.is_empty() {
        return Err(bad(expected));
    }
    if values.len() > MAX_KOMIS {
        return Err(bad(&format!("at most {MAX_KOMIS} komi values")));
    }
    Ok(values)
}

/// Every komi of `komis` checked on `game` before the first game is played: a study takes
/// hours, and a komi the game cannot take must not end it after them.
fn check_komis(game: &GameConfig, komis: &[u32]) -> Result<(), EvalError> {
    for &k in komis {
        game.with_komi(k)
            .map_err(|why| EvalError::Config(format!("--komi: {why}")))?;
    }
    Ok(())
}

/// The pie table's games, every side under every method and komi, checked before it plays.
fn check_pie_table(
    base: &engine::lifeline::LifelineOptions,
    sides: &[usize],
    komis: &[u32],
) -> Result<(), EvalError> {
    use engine::lifeline::{Balance, Lifeline, LifelineOptions};
    if sides.is_empty() {
        return Err(EvalError::Config("--sides: at least one side".into()));
    }
    for &size in sides {
        let methods = [(Balance::Strong, 0), (Balance::Weak, 0)]
            .into_iter()
            .chain(komis.iter().map(|&k| (Balance::Komi, k)));
        for (balance, komi) in methods {
            let opts = LifelineOptions {
                size,
                balance,
                komi: u8::try_from(komi).unwrap_or(u8::MAX),
                ..base.clone()
            };
            Lifeline::new(opts).map_err(|e| {
                let option = if balance == Balance::Komi {
                    "--komi"
                } else {
                    "--sides"
                };
                EvalError::Config(format!("{option}: side {size}, komi {komi}: {e}"))
            })?;
        }
    }
    Ok(())
}

/// `--exact-sides` and `--exact-seconds` checked against the study's game.
fn check_exact(args: &StudyArgs, game: &GameConfig) -> Result<(), EvalError> {
    let field_error = |name: &str, why: String| Err(EvalError::Config(format!("--{name}: {why}")));
    if !(args.exact_seconds > 0.0 && args.exact_seconds <= MAX_EXACT_SECONDS) {
        return field_error(
            "exact-seconds",
            format!("must be a number of seconds above 0 and at most {MAX_EXACT_SECONDS} (a week)"),
        );
    }
    if args.exact_sides.is_empty() {
        return Ok(());
    }
    if !matches!(game, GameConfig::Lifeline(_)) {
        return field_error(
            "exact-sides",
            format!(
                "the exact solver is Lifeline's, and the config's game is {}",
                game.label()
            ),
        );
    }
    for &side in &args.exact_sides {
        game.with_size(side)
            .map_err(|why| EvalError::Config(format!("--exact-sides {side}: {why}")))?;
    }
    Ok(())
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

/// A study's run config and its `[eval]` table, an error naming the file.
pub(crate) fn load_configs(path: &Path) -> Result<(RunConfig, crate::EvalConfig), EvalError> {
    let run = RunConfig::load(path).map_err(EvalError::Config)?;
    let eval = crate::EvalConfig::from_table(&run.table)
        .map_err(|e| EvalError::Config(format!("{}: {e}", path.display())))?;
    Ok((run, eval))
}

/// The config and players of a study, checkpoints checked against the config's game.
fn load(args: &StudyArgs) -> Result<Loaded, EvalError> {
    load_players(args, false)
}

/// [`load`]; with `any_game`, checkpoints are checked against their own game rather than the
/// config's (the pie table plays several sizes and methods, each game checked as it is played).
fn load_players(args: &StudyArgs, any_game: bool) -> Result<Loaded, EvalError> {
    let (run, eval) = load_configs(&args.config)?;
    let device = &args.device;
    let players = args
        .players
        .iter()
        .map(|p| {
            let game = (!any_game).then_some(&run.game);
            Contestant::load_for(p, game, &run.search, run.search.visits, device)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let field_error = |name: &str, why: &str| Err(EvalError::Config(format!("--{name}: {why}")));
    if !(args.margin >= 0.0) {
        return field_error("margin", "must be a number of at least 0");
    }
    if !(args.sample_margin >= 0.0) {
        return field_error("sample-margin", "must be a number of at least 0");
    }
    if args.max_classes == 0 {
        return field_error("max-classes", "at least one class must be played out");
    }
    check_exact(args, &run.game)?;
    let opts = StudyOptions {
        games: args.games,
        sample_plies: args.sample_plies,
        sample_margin: args.sample_margin,
        margin: args.margin,
        max_classes: args.max_classes,
        games_in_flight: args.games_in_flight.unwrap_or(eval.games_in_flight).max(1),
        seed: args.seed,
        progress: true,
        resume: Some(crate::study::resume::pieces_dir(&args.out)),
    };
    run::check_writable(&args.out)?;
    Ok(Loaded { run, players, opts })
}

/// Run a study and write its files; returns the Markdown summary.
pub fn run(study: &Study) -> Result<String, EvalError> {
    match study {
        Study::Practical { args } => crate::study::practical::run(args),
        Study::FirstPlayer { args } => {
            let l = load(args)?;
            let results = l
                .players
                .iter()
                .map(|p| balance::first_player(&l.run.game, p, &l.opts))
                .collect::<Result<Vec<_>, _>>()?;
            let exact = exact_of(&l.run.game, args)?;
            let ladder = vec![ladder::convergence(
                &format!("{}: Black's best", l.run.game.label()),
                results
                    .iter()
                    .map(|r| Rung::of_best(&r.player, &r.best))
                    .collect(),
            )];
            let svg = side_by_side(vec![
                crate::charts::first_player_svg(&results).map_err(EvalError::Config)?,
                ladder_svg(&ladder, "Black's best score")?,
            ]);
            write(
                &args.out,
                "first-player",
                serde_json::json!({ "results": results, "convergence": ladder, "exact": exact }),
                &svg,
                &(ladder::headline(&ladder)
                    + &first_player_md(&results, exact.as_ref(), &board_of(&l.run.game)?)
                    + &ladder::table(&ladder)),
            )
        }
        Study::Komi { args, komi } => {
            let komis = parse_komis(komi)?;
            let l = load(args)?;
            check_komis(&l.run.game, &komis)?;
            let curves = l
                .players
                .iter()
                .map(|p| balance::komi_study(&l.run.game, p, &komis, &l.opts))
                .collect::<Result<Vec<_>, _>>()?;
            let exact = komis
                .iter()
                .map(|&k| exact_of(&balance::with_komi(&l.run.game, k)?, args))
                .collect::<Result<Option<Vec<_>>, _>>()?;
            let ladder = vec![fair_komi_convergence(
                &format!("{}: fair komi", l.run.game.label()),
                &curves.iter().collect::<Vec<_>>(),
            )];
            let svg = side_by_side(vec![
                crate::charts::komi_svg(&curves).map_err(EvalError::Config)?,
                ladder_svg(&ladder, "fair komi")?,
            ]);
            write(
                &args.out,
                "komi",
                serde_json::json!({ "curves": curves, "convergence": ladder, "exact": exact }),
                &svg,
                &(ladder::headline(&ladder)
                    + &komi_md(&curves, exact.as_deref(), &board_of(&l.run.game)?)
                    + &ladder::table(&ladder)),
            )
        }
        Study::SwapMap { args, check_games } => {
            let l = load(args)?;
            let maps = l
                .players
                .iter()
                .map(|p| {
                    crate::study::swapmap::swap_map(
                        &l.run.game,
                        p,
                        *check_games,
                        &l.opts,
                        &run::stop_requested,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let start = l
                .run
                .game
                .start()
                .map_err(|e| EvalError::Config(e.to_string()))?;
            let board = start.board().clone();
            let exact = exact_of(&l.run.game, args)?
                .map(|row| exact_swaps(&start, &row))
                .transpose()?;
            let agreement: Vec<Option<[usize; 2]>> = maps
                .iter()
                .map(|m| exact.as_ref().map(|e| agreement(&board, m, e)))
                .collect();
            let ladder = vec![swap_convergence(&maps)];
            let svg = side_by_side(
                maps.iter()
                    .map(|m| crate::study::swapmap::swap_map_svg(&board, m))
                    .collect(),
            );
            write(
                &args.out,
                "swap-map",
                serde_json::json!({
                    "maps": maps,
                    "convergence": ladder,
                    "exact_swap": exact.as_ref().map(|e| e.iter().map(|k| crate::study::openings::turn_name(&board, k)).collect::<Vec<_>>()),
                    "agrees_with_exact": agreement,
                }),
                &svg,
                &(ladder::headline(&ladder)
                    + &swap_map_md(&maps, &agreement)
                    + &ladder::table(&ladder)),
            )
        }
        Study::PieTable { args, sides, komi } => {
            let komis = parse_komis(komi)?;
            let l = load_players(args, true)?;
            let GameConfig::Lifeline(base) = &l.run.game else {
                return Err(EvalError::Config(format!(
                    "the pie table is Lifeline's; {} is {}",
                    args.config.display(),
                    l.run.game.label()
                )));
            };
            check_pie_table(base, sides, &komis)?;
            let mut tables = Vec::new();
            for rung in pie_rungs(&l.players) {
                let name = rung
                    .iter()
                    .map(|p| p.info.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" + ");
                tables.push((
                    name,
                    balance::pie_table(base, sides, &komis, &rung, &l.opts)?,
                ));
            }
            let exact = solve_exact(base, &args.exact_sides, &komis, args.exact_seconds)?;
            let ladder = pie_convergence(sides, &tables);
            // One picture per player, the first one shown; all are in the JSON.
            let svg = side_by_side(vec![
                crate::charts::pie_table_svg(&tables[0].0, &tables[0].1)
                    .map_err(EvalError::Config)?,
                ladder_svg(
                    &ladder
                        .iter()
                        .filter(|c| !c.figure.contains("komi"))
                        .cloned()
                        .collect::<Vec<_>>(),
                    "Black's best score",
                )?,
            ]);
            let json = serde_json::json!({
                "tables": tables.iter().map(|(p, rows)| serde_json::json!({"player": p, "rows": rows})).collect::<Vec<_>>(),
                "convergence": ladder,
                "exact": exact,
            });
            let md = ladder::headline(&ladder)
                + &pie_table_md(&tables, &exact)
                + &exact_md(&exact)
                + &ladder::table(&ladder);
            write(&args.out, "pie-table", json, &svg, &md)
        }
    }
}

/// The rungs of the pie table, in the order the players came: a searcher (mcts:N) is a rung
/// of its own; trained networks at one visit count fill one rung together, each cell played by
/// the first network trained for it (one network per balancing method, or per size).
fn pie_rungs(players: &[Contestant]) -> Vec<Vec<&Contestant>> {
    let mut rungs: Vec<(Option<u32>, Vec<&Contestant>)> = Vec::new();
    for p in players {
        let visits = match &p.brain {
            crate::players::Brain::Net { .. } => p.search_config().map(|c| c.visits),
            _ => None,
        };
        match rungs
            .iter_mut()
            .find(|(v, _)| visits.is_some() && *v == visits)
        {
            Some((_, rung)) => rung.push(p),
            None => rungs.push((visits, vec![p])),
        }
    }
    rungs.into_iter().map(|(_, r)| r).collect()
}

fn ladder_svg(figures: &[ladder::Convergence], y: &str) -> Result<String, EvalError> {
    crate::charts::ladder_svg("Figures by strength", y, figures).map_err(EvalError::Config)
}

/// The pie table's figures by strength: every table is a rung, in the order the players came.
fn pie_convergence(sides: &[usize], tables: &[(String, Vec<PieRow>)]) -> Vec<ladder::Convergence> {
    let mut out = Vec::new();
    for (i, &side) in sides.iter().enumerate() {
        let rows = || {
            tables
                .iter()
                .filter_map(move |(p, rows)| rows.get(i).map(|r| (p, r)))
        };
        out.push(ladder::convergence(
            &format!("side {side} strong pie: Black's best"),
            rows()
                .map(|(p, r)| Rung::of_best(p, &r.strong.best))
                .collect(),
        ));
        out.push(ladder::convergence(
            &format!("side {side} weak pie: Black's best"),
            rows()
                .map(|(p, r)| Rung::of_best(p, &r.weak.best))
                .collect(),
        ));
        out.push(fair_komi_convergence(
            &format!("side {side} fair komi"),
            &rows().map(|(_, r)| &r.komi).collect::<Vec<_>>(),
        ));
    }
    out
}

/// The fair komi by strength (`curves` weakest first). Where either of the two strongest rungs
/// has a curve that reverses ([`KomiCurve::reversals`]) or that komi does not move
/// ([`KomiCurve::komi_effect`]), their agreement says nothing: the figure has not converged.
fn fair_komi_convergence(figure: &str, curves: &[&KomiCurve]) -> ladder::Convergence {
    let mut c = ladder::convergence(
        figure,
        curves
            .iter()
            .map(|k| Rung::of_fair_komi(&k.player, k.fair()))
            .collect(),
    );
    for k in curves.iter().rev().take(2) {
        let reversals = k.reversals();
        let why = if !reversals.is_empty() {
            format!(
                "{}'s curve is noisy: Black's best wins again at komi {reversals:?} after a loss",
                k.player
            )
        } else if let Some(e) = k.komi_effect().filter(|e| !e.moves_games()) {
            format!(
                "komi does not move {}'s games ({e}): its Black's best is the best of coin flips, not an answer",
                k.player
            )
        } else {
            continue;
        };
        c.converged = false;
        c.why = why;
        break;
    }
    c
}

/// The swap decisions by strength: the share of openings each rung would swap, converged when
/// the two strongest rungs make the same decision on every opening.
fn swap_convergence(maps: &[SwapMap]) -> ladder::Convergence {
    let share = |m: &SwapMap| {
        m.openings.iter().filter(|o| o.swap).count() as f64 / m.openings.len().max(1) as f64
    };
    let mut c = ladder::convergence(
        "share of openings White should swap",
        maps.iter()
            .map(|m| Rung {
                player: m.player.clone(),
                estimate: Some(share(m)),
                lo: None,
                hi: None,
                not_applicable: false,
            })
            .collect(),
    );
    if let [.., a, b] = maps {
        let differ: Vec<String> = a
            .openings
            .iter()
            .zip(&b.openings)
            .filter(|(x, y)| x.swap != y.swap)
            .map(|(x, _)| x.cells.join("+"))
            .collect();
        c.converged = differ.is_empty() && c.converged;
        if !differ.is_empty() {
            c.why = format!(
                "{} and {} decide {} openings differently: {}",
                a.player,
                b.player,
                differ.len(),
                differ
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    c
}

/// The exact row of `game` when it is Lifeline of a side in `--exact-sides`.
fn exact_of(game: &GameConfig, args: &StudyArgs) -> Result<Option<ExactRow>, EvalError> {
    let GameConfig::Lifeline(o) = game else {
        return Ok(None);
    };
    if !args.exact_sides.contains(&o.size) {
        return Ok(None);
    }
    eprintln!(
        "exact: solving {} (at most {} s)",
        game.label(),
        args.exact_seconds
    );
    let row = crate::study::exact::solve_lifeline(
        o,
        o.size,
        o.balance,
        o.komi as u32,
        args.exact_seconds,
    )
    .map_err(EvalError::Config)?;
    eprintln!(
        "exact: {}: Black {} ({:.1} s)",
        game.label(),
        row.result(),
        row.seconds
    );
    Ok(Some(row))
}

/// The openings (class keys) the solver says White should swap.
fn exact_swaps(
    start: &engine::AnyGame,
    row: &ExactRow,
) -> Result<Vec<Vec<engine::Cell>>, EvalError> {
    row.swap
        .iter()
        .map(|t| {
            class_of(start.board(), t.split('+')).ok_or_else(|| {
                EvalError::Config(format!("solver turn `{t}`: not cells of the board"))
            })
        })
        .collect()
}

/// On how many of the map's opening classes its swap decision is the solver's: `[agree, of]`.
fn agreement(board: &Board, map: &SwapMap, exact: &[Vec<engine::Cell>]) -> [usize; 2] {
    let mut seen = std::collections::HashMap::new();
    for o in &map.openings {
        if let Some(key) = class_of(board, o.cells.iter().map(String::as_str)) {
            let agrees = o.swap == exact.contains(&key);
            seen.entry(key).or_insert(agrees);
        }
    }
    [seen.values().filter(|&&ok| ok).count(), seen.len()]
}

/// The exact rows of the pie table, with a progress bar (each can take minutes).
fn solve_exact(
    base: &engine::lifeline::LifelineOptions,
    sides: &[usize],
    komis: &[u32],
    seconds: f64,
) -> Result<Vec<crate::study::exact::ExactRow>, EvalError> {
    if sides.is_empty() {
        return Ok(Vec::new());
    }
    let bar = indicatif::ProgressBar::new((sides.len() * (2 + komis.len())) as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} solved {elapsed} {msg}")
            .expect("valid template"),
    );
    bar.set_message("(exact values)");
    let rows = crate::study::exact::exact_rows(base, sides, komis, seconds, |r| {
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

fn exact_md(rows: &[crate::study::exact::ExactRow]) -> String {
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

/// What every study's intervals cover, and what they do not.
const INTERVALS: &str = "95%. A score's interval is a Wilson interval over distinct games (a deterministic player's repeated game counts once; a figure from one distinct game has no interval and says deterministic). Black's best takes the highest lower and upper bounds of the classes played, so it covers the choice among them. The fair komi's runs from the last komi at which Black's best surely wins to the first at which it surely loses (the logistic fit's delta method where the range has none): Black's best only falls as komi grows, so it holds the crossing when every komi's interval holds its score. They cover the sampling noise of these players' games, not the players' own mistakes: whether a stronger player would answer differently is what the convergence over the ladder of players says.";

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
    json["intervals"] = INTERVALS.into();
    let md = format!("{md}\nMade by `{command}`.\n");
    let text = serde_json::to_string_pretty(&json).expect("studies serialise") + "\n";
    run::write_atomic(&out.join(format!("{name}.json")), text.as_bytes())?;
    run::write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
    run::write_atomic(&out.join(format!("{name}.md")), md.as_bytes())?;
    // Every figure is in the files now: the pieces kept for a resume are not needed.
    crate::study::resume::forget(out);
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

fn swap_map_md(maps: &[SwapMap], agreement: &[Option<[usize; 2]>]) -> String {
    let mut s = String::from("# Swap map

Each opening is valued for the player who made it with White's swap declined; White should swap the openings better than even for their maker.

| game | player | openings (searched) | White should swap | agrees with the solver | best openings for the player who made them |
|---|---|---|---|---|---|
");
    for (m, agree) in maps.iter().zip(agreement) {
        let mut best: Vec<&crate::study::swapmap::Opening> = m.openings.iter().collect();
        best.sort_by(|a, b| b.value.total_cmp(&a.value));
        let top = best
            .iter()
            .take(5)
            .map(|o| match &o.checked {
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
        let agree = agree.map_or("-".into(), |[a, n]| {
            let flag = if a < n { " **differs**" } else { "" };
            format!("{a} of {n} classes{flag}")
        });
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {swaps} | {agree} | {top} |",
            m.game,
            m.player,
            m.openings.len(),
            m.searched
        );
    }
    s
}

fn opt(e: Option<&Score>) -> String {
    e.map_or("-".into(), |e| e.show())
}

/// The exact score of a solved result for Black (1 win, 0 loss, one half a draw).
fn exact_score(row: &ExactRow) -> Option<f64> {
    match row.result() {
        "win" => Some(1.0),
        "loss" => Some(0.0),
        "draw" => Some(0.5),
        _ => None,
    }
}

/// The board of `game`.
fn board_of(game: &GameConfig) -> Result<Board, EvalError> {
    Ok(game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?
        .board()
        .clone())
}

/// A flag for a chosen class that its maker won by play although the solver says it loses
/// (the win came from the other side's mistakes), or lost although it wins. A class the
/// solver did not reach in its budget gets no flag.
fn class_flag(board: &Board, class: &str, opener: &Score, row: &ExactRow) -> String {
    let chosen = class_of(board, class.split('+'));
    let wins = chosen.is_some()
        && row
            .winning_first_turns
            .iter()
            .chain(&row.swap)
            .any(|t| class_of(board, t.split('+')) == chosen);
    match (wins, opener.estimate > 0.5) {
        (false, true) if row.complete => {
            ", **a losing class by the solver: won by the other side's mistakes**".into()
        }
        (true, false) => ", **a winning class by the solver: lost by its maker's mistakes**".into(),
        _ => String::new(),
    }
}

/// `1.000 (deterministic) · exact: loss, **outside**`.
fn beside_exact(score: &Score, exact: Option<&ExactRow>) -> String {
    let Some(row) = exact else {
        return score.show();
    };
    let flag = match exact_score(row) {
        Some(x) if !score.admits(x) => ", **excludes it**",
        _ => "",
    };
    format!("{} (exact: {}{flag})", score.show(), row.result())
}

fn first_player_md(results: &[FirstPlayer], exact: Option<&ExactRow>, board: &Board) -> String {
    let mut s = String::from("# First player's best

Black's best: the opening class Black chooses, played out after White's best reply (under a pie: swap when the opener scores above one half, so the figure is min(p, 1 - p)). Reached: games from the empty board, first plies sampled (a population, not the first player's best).

| game | player | Black's best | its class (opener's score, swap declined) | classes played (pruned) | reached from the empty board | swap taken | Black if swapped | Black if kept |
|---|---|---|---|---|---|---|---|---|
");
    for r in results {
        let (rate, sw, kept) = match &r.reached.swaps {
            Some(x) => (
                x.rate.show(),
                opt(x.black_when_swapped.as_ref()),
                opt(x.black_when_kept.as_ref()),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let b = &r.best;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {}{} ({}) | {} ({}) | {} | {rate} | {sw} | {kept} |",
            r.game,
            r.player,
            beside_exact(&b.black, exact),
            b.best,
            exact.map_or(String::new(), |row| class_flag(
                board, &b.best, &b.opener, row
            )),
            b.opener.show(),
            b.classes.len() - b.pruned,
            b.pruned,
            r.reached.black.show(),
        );
    }
    s
}

fn komi_md(curves: &[KomiCurve], exact: Option<&[ExactRow]>, board: &Board) -> String {
    let mut s = String::from("# Black's best by komi

At each komi, Black's best opening class played out; the fair komi is where Black's best crosses one half.

| game | player | fair komi [last komi Black surely wins, first it surely loses] | komi: Black's best (class) |
|---|---|---|---|
");
    for c in curves {
        let points = c
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let row = exact.and_then(|rows| rows.get(i));
                let flag = row.map_or(String::new(), |row| {
                    class_flag(board, &p.best, &p.black, row)
                });
                format!(
                    "{}: {} ({}{flag})",
                    p.komi,
                    beside_exact(&p.black, row),
                    p.best
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let reversals = c.reversals();
        let flat = c.komi_effect().filter(|e| !e.moves_games());
        let noise = if let Some(e) = flat {
            format!("; **flat**: komi does not move these games ({e})")
        } else if reversals.is_empty() {
            String::new()
        } else {
            format!(
                "; **noisy**: Black's best wins again at komi {} after a loss at a smaller komi",
                reversals
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let _ = writeln!(
            s,
            "| {} | {} | {}{noise} | {points} |",
            c.game,
            c.player,
            c.fair()
        );
    }
    if let Some(rows) = exact {
        let results: Vec<Option<f64>> = rows.iter().map(exact_score).collect();
        let komis: Vec<u32> = curves
            .first()
            .map_or(Vec::new(), |c| c.points.iter().map(|p| p.komi).collect());
        let switch = komis
            .windows(2)
            .zip(results.windows(2))
            .find(|(_, r)| r[0] == Some(1.0) && r[1] == Some(0.0))
            .map(|(k, _)| (k[0], k[1]));
        if let Some((a, b)) = switch {
            let _ = writeln!(s, "\nExact (solver): Black wins at komi {a} and loses at komi {b}, so the fair komi lies between {a} and {b}.");
            for c in curves {
                if let Some(f) = c.fair_komi {
                    if f.hi < a as f64 || f.lo > b as f64 {
                        let _ = writeln!(
                            s,
                            "\n**{}'s fair komi interval excludes the exact one.**",
                            c.player
                        );
                    }
                }
            }
        }
    }
    s
}

fn pie_table_md(tables: &[(String, Vec<PieRow>)], exact: &[ExactRow]) -> String {
    let row = |side: usize, balance: &str| {
        exact
            .iter()
            .find(|r| r.side == side && r.balance == balance)
    };
    let mut s = String::from("# First player's best by balancing method\n\nUnder a pie the second player wins with perfect play; a pie's fairness is how close its most balanced opening is to even (Black's best after White's reply, one half at best).\n\n| player | side | strong pie (class) | weak pie (class) | fair komi | komi pie at komi k |\n|---|---|---|---|---|---|\n");
    for (player, rows) in tables {
        for r in rows {
            let fair = r.komi.fair();
            let at = r
                .komi_at_fair
                .as_ref()
                .map_or("-".into(), |p| format!("k={}: {}", p.komi, p.black.show()));
            let _ = writeln!(
                s,
                "| {player} | {} | {} ({}) | {} ({}) | {fair} | {at} |",
                r.side,
                beside_exact(&r.strong.best.black, row(r.side, "strong")),
                r.strong.best.best,
                beside_exact(&r.weak.best.black, row(r.side, "weak")),
                r.weak.best.best,
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curve whose best class wins at every komi; at komi k, `won[k]` of 4 played classes won.
    fn curve(player: &str, won: &[usize]) -> KomiCurve {
        let score = |x: f64| serde_json::json!({"estimate": x, "games": 1, "distinct_games": 1});
        let points: Vec<_> = won
            .iter()
            .enumerate()
            .map(|(k, &w)| {
                let classes: Vec<_> = (0..4)
                    .map(|i| serde_json::json!({"opening": format!("c{i}"), "turns": 1, "value": 0.0,
                        "pruned": false, "played": score(if i < w { 1.0 } else { 0.0 })}))
                    .collect();
                serde_json::json!({"komi": k, "black": score(1.0), "best": "c0", "classes": classes})
            })
            .collect();
        serde_json::from_value(
            serde_json::json!({"game": "g", "player": player, "points": points,
            "fit": null, "fair_komi": null, "sampling": ""}),
        )
        .unwrap()
    }

    #[test]
    fn two_rungs_above_the_range_agree_only_when_komi_moves_both_rungs_games() {
        let moving = [4, 3, 3, 2, 1, 1, 1, 1, 1];
        let flat = [2, 2, 2, 2, 2, 2, 2, 2, 2];
        let judge = |a: &[usize], b: &[usize]| {
            let (a, b) = (curve("a", a), curve("b", b));
            fair_komi_convergence("fair komi", &[&a, &b])
        };
        let both = judge(&moving, &moving);
        assert!(both.converged, "{both:?}");
        assert!(both.why.contains("above 8"), "{both:?}");
        for c in [judge(&flat, &moving), judge(&moving, &flat)] {
            assert!(!c.converged && c.why.contains("coin flips"), "{c:?}");
        }
    }

    fn row(winning: &[&str], swap: &[&str]) -> ExactRow {
        ExactRow {
            side: 3,
            balance: "komi".into(),
            komi: Some(3),
            black: Some("win".into()),
            winning_first_turns: winning.iter().map(|s| s.to_string()).collect(),
            first_turn_classes: 4,
            first_turns_solved: 4,
            swap: swap.iter().map(|s| s.to_string()).collect(),
            complete: true,
            nodes: 0,
            seconds: 0.0,
        }
    }

    #[test]
    fn a_chosen_class_is_checked_against_the_solver_by_orbit() {
        let board = board_of(
            &serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"komi"}}"#)
                .unwrap(),
        )
        .unwrap();
        let won = Score::of_values(&[1.0], 1);
        let lost = Score::of_values(&[0.0], 1);
        let solver = row(&["c3"], &[]);
        assert_eq!(class_flag(&board, "c3", &won, &solver), "");
        assert!(class_flag(&board, "b1", &won, &solver).contains("other side's mistakes"));
        assert!(class_flag(&board, "c3", &lost, &solver).contains("maker's mistakes"));
        assert_eq!(class_flag(&board, "b1", &lost, &solver), "");
        // Another corner of the same orbit is the same class; a pie's swap list counts too.
        let corners = row(&[], &["a1"]);
        assert_eq!(class_flag(&board, "a1", &won, &corners), "");
        assert_eq!(class_flag(&board, "e5", &won, &corners), "");
        // A solver out of budget before it reached a class says nothing of it.
        let unfinished = ExactRow {
            complete: false,
            ..row(&["c3"], &[])
        };
        assert_eq!(class_flag(&board, "b1", &won, &unfinished), "");
        assert!(class_flag(&board, "c3", &lost, &unfinished).contains("maker's mistakes"));
    }
}
