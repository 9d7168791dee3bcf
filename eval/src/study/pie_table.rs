//! The pie table: the first player's best under strong, weak and komi pie for several board
//! sides of Lifeline (the komi pie at the komi nearest the fair komi of that side, from
//! [`crate::study::komi`]), a table per rung of players; the solver's exact values beside it
//! where it reaches, and every figure's convergence over the rungs. `eval balance pie-table`
//! writes `pie-table.json`, `.svg` and `.md` ([`run()`]).

use crate::charts::{colour, points_with_intervals, svg_chart};
use crate::error::EvalError;
use crate::players::{Brain, Contestant};
use crate::score::Estimate;
use crate::study::balance::{with_komi, BalanceSetup, FAIR};
use crate::study::exact::{beside_exact, exact_rows, ExactRow};
use crate::study::first_player::{first_player, FirstPlayer};
use crate::study::komi::{fair_komi_convergence, komi_study, KomiCurve, KomiPoint};
use crate::study::ladder::{self, Convergence, Rung};
use crate::study::openings::StudyOptions;
use crate::study::report::{side_by_side, write_with_ladder};
use engine::lifeline::LifelineOptions;
use engine::GameConfig;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One board side of the pie table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PieRow {
    pub side: usize,
    pub strong: FirstPlayer,
    pub weak: FirstPlayer,
    /// Komi pie: the curve over the komi range, and Black's score at the komi nearest the fair
    /// one (the komi a pie between good players would settle on).
    pub komi: KomiCurve,
    pub komi_at_fair: Option<KomiPoint>,
}

/// The first player's score under each balancing method of Lifeline for each side.
pub fn pie_table(
    base: &LifelineOptions,
    sides: &[usize],
    komis: &[u32],
    players: &[&Contestant],
    opts: &StudyOptions,
) -> Result<Vec<PieRow>, EvalError> {
    use engine::lifeline::Balance;
    let game = |size, balance| {
        GameConfig::Lifeline(LifelineOptions {
            size,
            balance,
            komi: 0,
            ..base.clone()
        })
    };
    let mut rows = Vec::new();
    for &side in sides {
        let strong = game(side, Balance::Strong);
        let weak = game(side, Balance::Weak);
        let komi_game = game(side, Balance::Komi);
        let at_komis: Vec<GameConfig> = komis
            .iter()
            .map(|&k| with_komi(&komi_game, k))
            .collect::<Result<_, _>>()?;
        let strong = first_player(
            &strong,
            player_for(players, std::slice::from_ref(&strong))?,
            opts,
        )?;
        let weak = first_player(
            &weak,
            player_for(players, std::slice::from_ref(&weak))?,
            opts,
        )?;
        let komi = komi_study(&komi_game, player_for(players, &at_komis)?, komis, opts)?;
        let komi_at_fair = komi.fair_komi.and_then(|fair| {
            komi.points
                .iter()
                .min_by(|p, q| {
                    (p.komi as f64 - fair.estimate)
                        .abs()
                        .total_cmp(&(q.komi as f64 - fair.estimate).abs())
                })
                .cloned()
        });
        rows.push(PieRow {
            side,
            strong,
            weak,
            komi,
            komi_at_fair,
        });
    }
    Ok(rows)
}

/// The first of `players` that plays every game of `games`: a network only plays the size,
/// komi and balancing method it was trained for, so a table of trained players takes one
/// network per method (or per size); `mcts:N` and random play anything.
fn player_for<'a>(
    players: &[&'a Contestant],
    games: &[GameConfig],
) -> Result<&'a Contestant, EvalError> {
    let mut why = Vec::new();
    for &p in players {
        match games.iter().find_map(|g| p.plays(g).err()) {
            None => return Ok(p),
            Some(w) => why.push(format!("{}: {w}", p.info.name)),
        }
    }
    let label = games.first().map(|g| g.label()).unwrap_or_default();
    Err(EvalError::Config(format!(
        "no player given plays {label}{} ({})",
        if games.len() > 1 {
            " at every komi asked"
        } else {
            ""
        },
        why.join("; ")
    )))
}

/// The pie table of the setup's Lifeline config over `sides` (the komi pie over `komis`), one
/// table per rung of players (a searcher alone, trained networks at one visit count together),
/// with the solver's exact values of `exact_sides`; writes `pie-table.json`, `.svg` and `.md`
/// and returns the Markdown.
pub fn run(setup: &BalanceSetup, sides: &[usize], komis: &[u32]) -> Result<String, EvalError> {
    let l = setup.load_players(true)?;
    let GameConfig::Lifeline(base) = &setup.config.game else {
        return Err(EvalError::Config(format!(
            "the pie table is Lifeline's; {} is {}",
            setup.config_path.display(),
            setup.config.game.label()
        )));
    };
    check(base, sides, komis)?;
    let mut tables = Vec::new();
    for rung in pie_rungs(&l.players) {
        let name = rung
            .iter()
            .map(|p| p.info.name.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        tables.push((name, pie_table(base, sides, komis, &rung, &l.opts)?));
    }
    let exact = solve_exact(base, &setup.exact_sides, komis, setup.exact_seconds)?;
    let ladder = convergence(sides, &tables);
    // One picture per player, the first one shown; all are in the JSON.
    let picture = side_by_side(vec![
        svg(&tables[0].0, &tables[0].1).map_err(EvalError::Config)?,
        ladder::svg(
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
        "exact": exact,
    });
    let md = markdown(&tables, &exact) + &exact_md(&exact);
    write_with_ladder(&setup.out, "pie-table", json, &ladder, &picture, &md)
}

/// The pie table's games, every side under every method and komi, checked before it plays.
fn check(base: &LifelineOptions, sides: &[usize], komis: &[u32]) -> Result<(), EvalError> {
    use engine::lifeline::{Balance, Lifeline};
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

/// The rungs of the pie table, in the order the players came: a searcher (mcts:N) is a rung
/// of its own; trained networks at one visit count fill one rung together, each cell played by
/// the first network trained for it (one network per balancing method, or per size).
fn pie_rungs(players: &[Contestant]) -> Vec<Vec<&Contestant>> {
    let mut rungs: Vec<(Option<u32>, Vec<&Contestant>)> = Vec::new();
    for p in players {
        let visits = match &p.brain {
            Brain::Net { .. } => p.search_config().map(|c| c.visits),
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

/// The pie table's figures by strength: every table is a rung, in the order the players came.
fn convergence(sides: &[usize], tables: &[(String, Vec<PieRow>)]) -> Vec<Convergence> {
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

/// The exact rows of the pie table, with a progress bar (each can take minutes).
fn solve_exact(
    base: &LifelineOptions,
    sides: &[usize],
    komis: &[u32],
    seconds: f64,
) -> Result<Vec<ExactRow>, EvalError> {
    if sides.is_empty() {
        return Ok(Vec::new());
    }
    let solves = (sides.len() * (2 + komis.len())) as u64;
    let bar = run::progress::bar(solves, "solved", true).with_message("(exact values)");
    let rows = exact_rows(base, sides, komis, seconds, |r| {
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

fn exact_md(rows: &[ExactRow]) -> String {
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

/// The first player's score by board side under each balancing method.
pub fn svg(player: &str, rows: &[PieRow]) -> Result<String, String> {
    let sides = rows.iter().map(|r| r.side as f64);
    let (lo, hi) = sides.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
        (lo.min(s), hi.max(s))
    });
    let (lo, hi) = if lo.is_finite() {
        (lo - 0.5, hi + 0.5)
    } else {
        (0.0, 1.0)
    };
    let title = format!("First player's score by side and balancing method ({player})");
    svg_chart(
        &title,
        ("board side", lo..hi),
        ("Black's score", 0.0..1.0),
        FAIR,
        |chart| {
            let series: [(&str, Vec<(f64, Estimate)>); 3] = [
                (
                    "strong pie",
                    rows.iter()
                        .map(|r| (r.side as f64 - 0.1, r.strong.best.black.as_estimate()))
                        .collect(),
                ),
                (
                    "weak pie",
                    rows.iter()
                        .map(|r| (r.side as f64, r.weak.best.black.as_estimate()))
                        .collect(),
                ),
                (
                    "komi pie at the fair komi",
                    rows.iter()
                        .filter_map(|r| {
                            r.komi_at_fair
                                .as_ref()
                                .map(|p| (r.side as f64 + 0.1, p.black.as_estimate()))
                        })
                        .collect(),
                ),
            ];
            for (i, (label, points)) in series.iter().enumerate() {
                points_with_intervals(chart, label, colour(i), points)?;
            }
            Ok(())
        },
    )
}

fn markdown(tables: &[(String, Vec<PieRow>)], exact: &[ExactRow]) -> String {
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
