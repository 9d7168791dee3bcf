//! The learning benchmark (`train learning`): train a config from scratch for a fixed number
//! of wall-clock minutes, then rate checkpoints taken along the way against a fixed ladder of
//! baselines (`random`, `mcts:100` … `mcts:3000`), so that a change to the loop is judged by
//! the strength it reaches in a given time, not by its loss curves.
//!
//! Everything lives under `OUT`: the run in `OUT/run` (an ordinary run directory, so the
//! benchmark resumes like the loop: run the same command again), `learning.json` with every
//! figure and the command, `learning.md` and `learning.svg` (Elo against minutes).
//!
//! Ratings: one maximum-likelihood fit ([`eval::fit_ratings`], random = 0) over the ladder's
//! calibration games (each rung against the next) and every rated checkpoint's games against
//! the rungs. A checkpoint plays the rungs from the weakest up and stops after the first rung
//! it scores nothing against (stronger rungs would add games, not information). Every match is
//! recorded in the run's results and found there again on a rerun, never played twice.

use crate::config::FullConfig;
use crate::looping::{enter_loop, read_iterations, run_loop, IterationRecord, Overrides};
use anyhow::{Context, Result};
use eval::matches::run_match_once;
use eval::results::MatchSummary;
use eval::score::Estimate;
use eval::{Contestant, RatingOptions};
use net::model::parse_device;
use run::RunDir;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The default ladder, weakest first.
pub const LADDER: [&str; 5] = ["random", "mcts:100", "mcts:300", "mcts:1000", "mcts:3000"];

/// What `train learning` is asked for (its command-line arguments).
#[derive(Clone, Debug, clap::Args)]
pub struct LearningOptions {
    #[arg(long)]
    pub config: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
    /// Wall-clock minutes of the loop (summed over resumes).
    #[arg(long)]
    pub minutes: f64,
    /// Baselines, weakest first (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = LADDER.map(String::from))]
    pub ladder: Vec<String>,
    /// Games of each rated checkpoint but the last against each rung.
    #[arg(long, default_value_t = 20)]
    pub games: usize,
    /// Games of the last checkpoint against each rung.
    #[arg(long, default_value_t = 100)]
    pub final_games: usize,
    /// Games of each rung against the next one.
    #[arg(long, default_value_t = 40)]
    pub ladder_games: usize,
    /// Checkpoints to rate, spread evenly over the minutes (the first and the last included).
    #[arg(long, default_value_t = 6)]
    pub points: usize,
    /// Visits of the checkpoints (default: `eval.rating_visits`, else `search.visits`).
    #[arg(long)]
    pub visits: Option<u32>,
    /// No progress bars (logs only).
    #[arg(long)]
    pub quiet: bool,
    /// The command line, recorded with the figures (set by the program, not an argument).
    #[arg(skip)]
    pub command: String,
}

/// A checkpoint's results against one rung.
#[derive(Clone, Debug, Serialize)]
pub struct RungResult {
    pub opponent: String,
    pub games: u64,
    /// The checkpoint's score with its 95% interval.
    pub score: Estimate,
}

/// One rated checkpoint.
#[derive(Clone, Debug, Serialize)]
pub struct LearningRow {
    /// Loop minutes after which the run's best was this checkpoint.
    pub minutes: f64,
    pub checkpoint: String,
    pub step: u64,
    /// Elo (random = 0) with its 95% interval.
    pub elo: Estimate,
    pub rungs: Vec<RungResult>,
}

/// A rung of the ladder and its Elo in this benchmark's fit.
#[derive(Clone, Debug, Serialize)]
pub struct LadderRung {
    pub player: String,
    pub elo: Estimate,
}

/// `learning.json`.
#[derive(Clone, Debug, Serialize)]
pub struct LearningReport {
    pub command: String,
    pub config: String,
    pub game: String,
    /// Loop minutes of the run, and its loop iterations.
    pub minutes: f64,
    pub iterations: usize,
    pub visits: u32,
    pub ladder: Vec<LadderRung>,
    pub rows: Vec<LearningRow>,
    /// The machine the run trained on: one core's speeds, measured at the loop's start, and
    /// the split of its cores (absent for a loop that is not concurrent).
    pub machine: Option<crate::machine::MachineRecord>,
    pub note: String,
}

impl LearningReport {
    /// The last checkpoint's result against `opponent`, if it played it.
    pub fn final_against(&self, opponent: &str) -> Option<&RungResult> {
        let last = self.rows.last()?;
        last.rungs.iter().find(|r| r.opponent == opponent)
    }
}

const NOTE: &str = "Elo: one maximum-likelihood fit (random = 0, one virtual draw per pair) over \
the ladder's games (each rung against the next) and each checkpoint's games against the rungs, \
95% intervals from the observed information. Scores: Wilson 95% intervals. Minutes: loop time \
(self-play, fitting, gating, rating) until the end of the iteration after which the run's best \
was that checkpoint, summed over resumes. Every match pairs each opening with both colours.";

/// How much the run trained: its loop iterations and minutes.
#[derive(Clone, Copy, Debug)]
struct Trained {
    iterations: usize,
    minutes: f64,
}

/// Seeds of the ladder's matches: the same openings for every checkpoint and every run.
const CALIBRATION_SEED: u64 = 9_100;
const RUNG_SEED: u64 = 9_200;

/// Train (or resume) the run, rate its checkpoints and write `learning.{json,md,svg}`.
pub fn run(opts: &LearningOptions) -> Result<LearningReport> {
    anyhow::ensure!(
        opts.minutes > 0.0 && opts.minutes.is_finite(),
        "--minutes must be a positive number (got {})",
        opts.minutes
    );
    anyhow::ensure!(opts.points >= 1, "--points must be at least 1");
    anyhow::ensure!(!opts.ladder.is_empty(), "--ladder names no player");
    for (field, games) in [
        ("--games", opts.games),
        ("--final-games", opts.final_games),
        ("--ladder-games", opts.ladder_games),
    ] {
        anyhow::ensure!(
            games >= 2 && games % 2 == 0,
            "{field} must be an even number of at least 2 (openings are played in pairs)"
        );
    }
    for spec in &opts.ladder {
        eval::config::check_baseline("--ladder", spec).map_err(anyhow::Error::msg)?;
    }
    let cfg = FullConfig::load(&opts.config)?;
    let run_path = opts.out.join("run");
    let run = RunDir::new(&run_path);
    train_for(opts, &run)?;
    let records = read_iterations(&run)?;
    let timeline = timeline(&run, &records)?;
    let chosen = choose_points(&timeline, opts.points);
    let bench = Bench::new(opts, cfg)?;
    let calibration = bench.calibrate(&run_path)?;
    let mut played = Vec::new();
    for (k, (minutes, name)) in chosen.iter().enumerate() {
        let games = if k + 1 == chosen.len() {
            opts.final_games
        } else {
            opts.games
        };
        let checkpoint = run.models().join(name);
        played.push((*minutes, bench.rate(&run_path, &checkpoint, games)?));
    }
    let trained = Trained {
        iterations: records.len(),
        minutes: records.last().map_or(0.0, |r| r.loop_seconds / 60.0),
    };
    let mut report = bench.report(opts, trained, &calibration, &played);
    report.machine = crate::machine::MachineRecord::read(&run);
    write_report(&opts.out, &report)?;
    Ok(report)
}

/// Run the loop until the run holds `opts.minutes` of loop time (nothing if it does already).
fn train_for(opts: &LearningOptions, run: &RunDir) -> Result<()> {
    let spent = read_iterations(run)?
        .last()
        .map_or(0.0, |r| r.loop_seconds / 60.0);
    // The loop stops at the first iteration that ends at or past its minutes, so a finished
    // budget is recorded in full (the tolerance absorbs the sum over resumes' rounding).
    if spent + 1e-9 >= opts.minutes {
        eprintln!("the run holds {spent:.1} minutes of training already: rating its checkpoints");
        return Ok(());
    }
    let overrides = Overrides {
        // The benchmark's budget is time; the config's iteration count does not apply.
        iterations: Some(0),
        minutes: Some(opts.minutes - spent),
    };
    let location = run::RunLocation::Dir(run.root().to_path_buf());
    let (session, cfg) = enter_loop(&location, &opts.config, overrides, |_| Ok(()))?;
    run_loop(&session, &cfg, !opts.quiet, |s| println!("{}", s.line()))?;
    let stopped = session.stop().requested();
    session.finish()?;
    anyhow::ensure!(
        !stopped,
        "stopped: run the same command to resume the benchmark"
    );
    Ok(())
}

/// (loop minutes, checkpoint) for each checkpoint that became the run's best, from the
/// random network at minute 0 on.
fn timeline(run: &RunDir, records: &[IterationRecord]) -> Result<Vec<(f64, String)>> {
    let first = run
        .checkpoints()
        .first()
        .and_then(|c| c.dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .context("the run has no checkpoint")?;
    let mut out = vec![(0.0, first)];
    for r in records {
        if out.last().map(|p| &p.1) != Some(&r.best) {
            out.push((r.loop_seconds / 60.0, r.best.clone()));
        }
    }
    Ok(out)
}

/// Up to `points` entries of `timeline` spread evenly over its minutes: for each of `points`
/// evenly spaced times, the newest entry at or before it; the first and last always included.
pub fn choose_points(timeline: &[(f64, String)], points: usize) -> Vec<(f64, String)> {
    let Some(end) = timeline.last().map(|p| p.0) else {
        return Vec::new();
    };
    let mut out: Vec<(f64, String)> = Vec::new();
    for k in 0..points {
        let t = if points == 1 {
            end
        } else {
            end * k as f64 / (points - 1) as f64
        };
        let at = timeline
            .iter()
            .rev()
            .find(|p| p.0 <= t + 1e-9)
            .unwrap_or(&timeline[0]);
        if !out.iter().any(|p| p.1 == at.1) {
            out.push(at.clone());
        }
    }
    out
}

/// The ladder and how its matches are played.
struct Bench {
    cfg: FullConfig,
    ladder: Vec<Contestant>,
    visits: u32,
    progress: bool,
    ladder_games: usize,
}

impl Bench {
    fn new(opts: &LearningOptions, cfg: FullConfig) -> Result<Bench> {
        let device = parse_device("cpu")?;
        let (game, search) = (&cfg.run.game, &cfg.run.search);
        let ladder = opts
            .ladder
            .iter()
            .map(|spec| Contestant::load(spec, game, search, search.visits, &device))
            .collect::<Result<Vec<_>, _>>()?;
        let visits = opts
            .visits
            .or(cfg.eval.rating_visits)
            .unwrap_or(search.visits);
        Ok(Bench {
            ladder,
            visits,
            progress: !opts.quiet,
            ladder_games: opts.ladder_games,
            cfg,
        })
    }

    /// Each rung against the next.
    fn calibrate(&self, run: &Path) -> Result<Vec<MatchSummary>> {
        let mut out = Vec::new();
        for (i, pair) in self.ladder.windows(2).enumerate() {
            let opts = self.cfg.eval.match_options(
                self.ladder_games,
                CALIBRATION_SEED + i as u64,
                self.progress,
            );
            let s = run_match_once(run, &self.cfg.run.game, &pair[1], &pair[0], &opts)?;
            println!("ladder: {}", eval::matches::describe(&s));
            out.push(s);
        }
        Ok(out)
    }

    /// `checkpoint` against the rungs from the weakest up, until it scores nothing.
    fn rate(&self, run: &Path, checkpoint: &Path, games: usize) -> Result<Vec<MatchSummary>> {
        let spec = format!("{}@{}", checkpoint.display(), self.visits);
        let (game, search) = (&self.cfg.run.game, &self.cfg.run.search);
        let device = parse_device("cpu")?;
        let player = Contestant::load(&spec, game, search, self.visits, &device)?;
        let mut out = Vec::new();
        for (i, rung) in self.ladder.iter().enumerate() {
            let opts = self
                .cfg
                .eval
                .match_options(games, RUNG_SEED + i as u64, self.progress);
            let s = run_match_once(run, game, &player, rung, &opts)?;
            println!("{}", eval::matches::describe(&s));
            let shut_out = s.wins == 0 && s.draws == 0;
            out.push(s);
            if shut_out {
                break;
            }
        }
        Ok(out)
    }

    fn report(
        &self,
        opts: &LearningOptions,
        trained: Trained,
        calibration: &[MatchSummary],
        played: &[(f64, Vec<MatchSummary>)],
    ) -> LearningReport {
        let pairs: Vec<eval::ratings::PairResult> = calibration
            .iter()
            .chain(played.iter().flat_map(|(_, s)| s))
            .map(Into::into)
            .collect();
        let table = eval::fit_ratings(&pairs, RatingOptions::default());
        let elo_of = |name: &str| {
            table
                .players
                .iter()
                .find(|r| r.player.name == name)
                .map(|r| Estimate {
                    estimate: r.elo,
                    lo: r.lo,
                    hi: r.hi,
                })
        };
        let unknown = Estimate {
            estimate: f64::NAN,
            lo: f64::NAN,
            hi: f64::NAN,
        };
        let rows = played
            .iter()
            .filter_map(|(minutes, matches)| {
                let first = matches.first()?;
                Some(LearningRow {
                    minutes: *minutes,
                    checkpoint: first.a.name.clone(),
                    step: first.a.step.unwrap_or(0),
                    elo: elo_of(&first.a.name).unwrap_or(unknown),
                    rungs: matches
                        .iter()
                        .filter_map(|s| {
                            Some(RungResult {
                                opponent: s.b.name.clone(),
                                games: s.games,
                                score: Estimate::score(s.wdl().points(), s.games)?,
                            })
                        })
                        .collect(),
                })
            })
            .collect();
        let ladder = self
            .ladder
            .iter()
            .map(|c| LadderRung {
                player: c.info.name.clone(),
                elo: elo_of(&c.info.name).unwrap_or(unknown),
            })
            .collect();
        LearningReport {
            command: opts.command.clone(),
            config: opts.config.display().to_string(),
            game: self.cfg.run.game.label(),
            minutes: trained.minutes,
            iterations: trained.iterations,
            visits: self.visits,
            ladder,
            rows,
            machine: None,
            note: NOTE.into(),
        }
    }
}

/// The report as a Markdown table: one row per rated checkpoint, a column per rung.
pub fn markdown(report: &LearningReport) -> String {
    let mut s = format!(
        "# Learning benchmark: {} ({})\n\nCheckpoints at {} visits; Elo with random = 0; \
         each cell is the checkpoint's score against that rung [95% interval] (games).\n\n",
        report.game, report.config, report.visits
    );
    if let Some(m) = &report.machine {
        let _ = writeln!(
            s,
            "Machine: {}; {} self-play and {} training threads.\n",
            m.speeds.line(),
            m.split.selfplay_threads,
            m.split.train_threads
        );
    }
    let rungs: Vec<&str> = report.ladder.iter().map(|r| r.player.as_str()).collect();
    let _ = writeln!(
        s,
        "| minutes | checkpoint | step | Elo | {} |",
        rungs.join(" | ")
    );
    let _ = writeln!(s, "|---|---|---|---|{}", "---|".repeat(rungs.len()));
    for row in &report.rows {
        let cells: Vec<String> = rungs
            .iter()
            .map(
                |rung| match row.rungs.iter().find(|r| r.opponent == *rung) {
                    Some(r) => format!("{} ({})", r.score.show(), r.games),
                    None => "-".into(),
                },
            )
            .collect();
        let _ = writeln!(
            s,
            "| {:.1} | {} | {} | {} | {} |",
            row.minutes,
            row.checkpoint,
            row.step,
            show_elo(&row.elo),
            cells.join(" | ")
        );
    }
    let ladder: Vec<String> = report
        .ladder
        .iter()
        .map(|r| format!("{} {}", r.player, show_elo(&r.elo)))
        .collect();
    let _ = writeln!(s, "\nLadder: {}.\n\n{}\n", ladder.join(", "), report.note);
    let _ = writeln!(s, "Command: `{}`", report.command);
    s
}

fn show_elo(e: &Estimate) -> String {
    format!("{:+.0} [{:+.0}, {:+.0}]", e.estimate, e.lo, e.hi)
}

fn write_report(out: &Path, report: &LearningReport) -> Result<()> {
    let json = serde_json::to_string_pretty(report)? + "\n";
    eval::results::write_atomic(&out.join("learning.json"), &json)?;
    eval::results::write_atomic(&out.join("learning.md"), &markdown(report))?;
    let points: Vec<(f64, Estimate)> = report
        .rows
        .iter()
        .filter(|r| r.elo.estimate.is_finite())
        .map(|r| (r.minutes, r.elo))
        .collect();
    let ladder: Vec<(String, f64)> = report
        .ladder
        .iter()
        .filter(|r| r.elo.estimate.is_finite())
        .map(|r| (r.player.clone(), r.elo.estimate))
        .collect();
    let title = format!("Learning: {} ({})", report.game, report.config);
    let svg = eval::charts::learning_svg(&title, &points, &ladder).map_err(anyhow::Error::msg)?;
    eval::results::write_atomic(&out.join("learning.svg"), &svg)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(points: &[(f64, &str)]) -> Vec<(f64, String)> {
        points.iter().map(|&(t, n)| (t, n.to_string())).collect()
    }

    #[test]
    fn points_are_spread_over_the_minutes_with_the_first_and_last_included() {
        let t = timeline(&[
            (0.0, "000000"),
            (1.0, "000100"),
            (2.0, "000200"),
            (3.0, "000300"),
            (4.0, "000400"),
        ]);
        let names = |k| -> Vec<String> {
            choose_points(&t, k)
                .into_iter()
                .map(|p| p.1)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(3), ["000000", "000200", "000400"]);
        assert_eq!(names(1), ["000400"]);
        assert_eq!(names(10).len(), 5, "each checkpoint once");
        // Uneven times: the newest at or before each target.
        let t = timeline(&[(0.0, "a"), (0.5, "b"), (3.9, "c"), (4.0, "d")]);
        let chosen: Vec<String> = choose_points(&t, 3).into_iter().map(|p| p.1).collect();
        assert_eq!(chosen, ["a", "b", "d"]);
        assert!(choose_points(&[], 3).is_empty());
    }
}
