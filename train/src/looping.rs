//! `train loop`: self-play with the best model, fit, gate, rate, repeat.
//!
//! The run directory is the whole state (DESIGN.md): `config.toml` (the frozen config),
//! `models/` (checkpoints and the `best` pointer), `selfplay/` (shards and records), `eval/`
//! (matches, ratings), `tb/` (TensorBoard) and `loop.json`, which says which phase of which
//! iteration comes next. Every phase writes its results atomically before `loop.json` moves
//! on, so a loop killed at any moment resumes at the phase it was in: self-play replays that
//! iteration's games (a shard written just before the kill only adds data), fitting resumes
//! from the newest checkpoint towards the same target step, and a gate starts again.

use crate::config::TrainConfig;
use crate::fit::{checkpoint_dir, checkpoints, read_best, write_best, Losses, Trainer};
use crate::tb::EventWriter;
use crate::window::Window;
use anyhow::{bail, Context, Result};
use eval::{Contestant, EvalConfig, MatchOutput, RatingOptions};
use selfplay::config::RunConfig;
use selfplay::generate::{default_threads, generate, RunOutput};
use selfplay::model::{parse_device, Model, NetEvaluator};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The `[loop]` table of a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoopConfig {
    /// Iterations to run (0: no limit; `minutes` or a kill ends the loop).
    pub iterations: u32,
    /// Stop starting new iterations after this many minutes of this invocation (0: no limit).
    pub minutes: f64,
    /// Self-play games per iteration.
    pub games: usize,
    /// Rate the best model against the baselines every this many iterations in which it
    /// changed (0: never), and always at iteration 0.
    pub rating_every: u32,
    pub device: String,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig { iterations: 10, minutes: 0.0, games: 64, rating_every: 1, device: "cpu".into() }
    }
}

impl LoopConfig {
    pub fn from_table(table: &toml::Table) -> Result<LoopConfig, String> {
        let t = table.get("loop").cloned().unwrap_or(toml::Value::Table(Default::default()));
        let cfg: LoopConfig = t.try_into().map_err(|e| format!("[loop]: {e}"))?;
        if cfg.games == 0 {
            return Err("loop.games must be at least 1".into());
        }
        if cfg.minutes < 0.0 || !cfg.minutes.is_finite() {
            return Err("loop.minutes must not be negative".into());
        }
        // Checked for its form only: a config meant for a GPU stays valid on a CPU-only build,
        // which refuses `cuda` when the loop starts.
        let d = cfg.device.as_str();
        let cuda_index = d.strip_prefix("cuda:").map(|n| n.parse::<usize>().is_ok());
        if !(d == "cpu" || d == "cuda" || cuda_index == Some(true)) {
            return Err(format!("loop.device must be cpu, cuda or cuda:N (got `{d}`)"));
        }
        Ok(cfg)
    }
}

/// Every table of a config, validated (the errors name the file and field).
pub struct FullConfig {
    pub run: RunConfig,
    pub train: TrainConfig,
    pub eval: EvalConfig,
    pub looping: LoopConfig,
    pub text: String,
}

impl FullConfig {
    pub fn load(path: &Path) -> Result<FullConfig> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let named = |e: String| anyhow::anyhow!("{}: {e}", path.display());
        let run = RunConfig::parse(&text).map_err(named)?;
        let train = TrainConfig::from_table(&run.table).map_err(named)?;
        let eval = EvalConfig::from_table(&run.table).map_err(named)?;
        let looping = LoopConfig::from_table(&run.table).map_err(named)?;
        Ok(FullConfig { run, train, eval, looping, text })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    SelfPlay,
    Fit,
    Gate,
    Rate,
}

/// `loop.json`: where the loop stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    pub iteration: u32,
    pub phase: Phase,
    /// Whether the gate of this iteration promoted its candidate (read by the rate phase).
    #[serde(default)]
    pub promoted: bool,
}

fn state_path(run: &Path) -> PathBuf {
    run.join("loop.json")
}

fn save_state(run: &Path, s: &LoopState) -> Result<()> {
    let path = state_path(run);
    let tmp = run.join(".loop.json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(s)? + "\n").with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))
}

/// What one iteration did, for its summary line.
#[derive(Clone, Debug, Default)]
pub struct IterationSummary {
    pub iteration: u32,
    pub games: usize,
    pub samples: usize,
    pub window: usize,
    pub losses: Losses,
    pub step: u64,
    pub gate: String,
    pub best: String,
    pub best_elo: Option<(f64, f64, f64)>,
    pub seconds: f64,
}

impl IterationSummary {
    pub fn line(&self) -> String {
        let elo = match self.best_elo {
            Some((e, lo, hi)) => format!("{e:+.0} [{lo:+.0}, {hi:+.0}]"),
            None => "-".into(),
        };
        format!(
            "iter {:>3} | {} games {} samples (window {}) | step {} loss {:.3} (p {:.3} v {:.3} o {:.3}) | gate {} | best {} Elo {} | {:.0} s",
            self.iteration,
            self.games,
            self.samples,
            self.window,
            self.step,
            self.losses.total,
            self.losses.policy,
            self.losses.value,
            self.losses.ownership,
            self.gate,
            self.best,
            elo,
            self.seconds
        )
    }
}

/// Freeze the config into the run directory, or check that it matches the frozen one.
fn freeze_config(run: &Path, config: &Path, text: &str) -> Result<()> {
    let frozen = run.join("config.toml");
    match std::fs::read_to_string(&frozen) {
        Ok(old) if old == text => Ok(()),
        Ok(_) => bail!(
            "{} was started with another config ({}); resume it with that file, or start a new run directory for {}",
            run.display(),
            frozen.display(),
            config.display()
        ),
        Err(_) => {
            std::fs::create_dir_all(run).with_context(|| format!("cannot create {}", run.display()))?;
            let tmp = run.join(".config.toml.tmp");
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, &frozen).with_context(|| format!("cannot write {}", frozen.display()))
        }
    }
}

fn name_of(dir: &Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Command-line overrides of the `[loop]` table (they leave the frozen config as it is).
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    pub iterations: Option<u32>,
    pub minutes: Option<f64>,
}

/// Run the loop until its iteration or time limit; returns the summaries of the iterations
/// completed by this invocation.
pub fn run_loop(config: &Path, run: &Path, progress: bool, overrides: Overrides, mut report: impl FnMut(&IterationSummary)) -> Result<Vec<IterationSummary>> {
    let mut cfg = FullConfig::load(config)?;
    freeze_config(run, config, &cfg.text)?;
    if let Some(n) = overrides.iterations {
        cfg.looping.iterations = n;
    }
    if let Some(m) = overrides.minutes {
        cfg.looping.minutes = m;
    }
    let device = parse_device(&cfg.looping.device)?;
    let t_start = Instant::now();
    let mut tb = EventWriter::create(&run.join("tb")).with_context(|| format!("cannot write TensorBoard events in {}", run.join("tb").display()))?;

    // The first model: a random network, which is also the first best.
    if checkpoints(run).is_empty() {
        let model = Model::random(&cfg.run.game, &cfg.run.network, &device, cfg.train.seed).map_err(anyhow::Error::msg)?;
        let dir = checkpoint_dir(run, 0);
        Trainer::new(model, cfg.train.clone()).save(&dir, None)?;
        write_best(run, &dir)?;
    }
    if read_best(run).is_none() {
        let (_, newest) = checkpoints(run).pop().expect("a checkpoint exists");
        write_best(run, &newest)?;
    }
    let mut state: LoopState = match std::fs::read_to_string(state_path(run)) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("{} is not a loop state", state_path(run).display()))?,
        Err(_) => LoopState { iteration: 0, phase: Phase::SelfPlay, promoted: false },
    };
    let threads = match cfg.run.selfplay.threads {
        0 => default_threads(),
        n => n,
    };
    let gate_visits = cfg.eval.gate_visits.unwrap_or(cfg.run.search.visits);
    let rating_visits = cfg.eval.rating_visits.unwrap_or(cfg.run.search.visits);
    let mut done = Vec::new();
    let mut summary = IterationSummary { iteration: state.iteration, ..Default::default() };
    let mut t_iter = Instant::now();
    loop {
        if state.phase == Phase::SelfPlay {
            let limit_iters = cfg.looping.iterations > 0 && state.iteration >= cfg.looping.iterations;
            let limit_time = cfg.looping.minutes > 0.0 && t_start.elapsed().as_secs_f64() > cfg.looping.minutes * 60.0;
            if limit_iters || limit_time {
                break;
            }
        }
        let it = state.iteration;
        match state.phase {
            Phase::SelfPlay => {
                t_iter = Instant::now();
                summary = IterationSummary { iteration: it, ..Default::default() };
                let best = read_best(run).context("the run has no best model")?;
                let model = Model::load(&best, &device)?.for_inference();
                let name = name_of(&best);
                let out = RunOutput { run, model: &name, progress };
                let seed = cfg.train.seed.wrapping_mul(1_000_003).wrapping_add(it as u64 * 1000);
                let s = generate(&cfg.run, |_| NetEvaluator::new(&model), cfg.looping.games, threads, seed, &out)?;
                summary.games = s.games;
                summary.samples = s.samples;
                let _ = tb.scalar("selfplay/decisions_per_second", (s.plies as f64 / s.seconds.max(1e-9)) as f32, it as u64);
                let _ = tb.scalar("selfplay/mean_length", (s.plies as f64 / s.games.max(1) as f64) as f32, it as u64);
                state.phase = Phase::Fit;
            }
            Phase::Fit => {
                let window = Window::load(run, &cfg.train)?;
                summary.window = window.len();
                let (_, newest) = checkpoints(run).pop().expect("a checkpoint exists");
                let mut trainer = Trainer::resume(&newest, cfg.train.clone(), &device)?;
                let target = (it as u64 + 1) * cfg.train.steps;
                let mut sum = Losses::default();
                let mut n = 0u32;
                let t0 = Instant::now();
                let start = trainer.state.step;
                trainer.train_until(&window, target, |t, step, l| {
                    sum.add(l);
                    n += 1;
                    if step % 10 == 0 || step == target {
                        let rate = ((step - start) * t.cfg.batch_size as u64) as f32 / t0.elapsed().as_secs_f32();
                        let _ = l.log(&mut tb, step, t.cfg.lr_at(step - 1) as f32, rate);
                    }
                });
                summary.losses = sum.scale(1.0 / n.max(1) as f32);
                summary.step = trainer.state.step;
                let dir = checkpoint_dir(run, trainer.state.step);
                if !dir.join(selfplay::model::WEIGHTS_FILE).is_file() {
                    trainer.save(&dir, Some(name_of(&newest)))?;
                }
                state.phase = Phase::Gate;
            }
            Phase::Gate => {
                let (_, candidate_dir) = checkpoints(run).pop().expect("a checkpoint exists");
                let best_dir = read_best(run).context("the run has no best model")?;
                summary.step = summary.step.max(checkpoints(run).last().map(|c| c.0).unwrap_or(0));
                if candidate_dir == best_dir {
                    summary.gate = "skipped (no new checkpoint)".into();
                    state.promoted = false;
                } else {
                    let load = |dir: &Path| -> Result<Contestant> {
                        let m = Model::load(dir, &device)?;
                        Ok(Contestant::network(&m, &name_of(dir), gate_visits, &cfg.run.search))
                    };
                    let (cand, best) = (load(&candidate_dir)?, load(&best_dir)?);
                    let out = MatchOutput::in_run(run, &cand, &best, "gate-");
                    let g = eval::gate(&cfg.run.game, &cand, &best, &cfg.eval, it as u64 + 17, progress, &out)?;
                    let wdl = g.summary.wdl();
                    summary.gate = format!(
                        "{} {}-{}-{} {}",
                        if g.promoted { "PROMOTED" } else { "rejected" },
                        wdl.wins,
                        wdl.draws,
                        wdl.losses,
                        if g.decided_by == "sprt" { "(sprt)".to_string() } else { format!("({})", g.decided_by) }
                    );
                    let _ = tb.scalar("gate/score", wdl.score() as f32, it as u64);
                    let _ = tb.scalar("gate/promoted", g.promoted as u8 as f32, it as u64);
                    if g.promoted {
                        write_best(run, &candidate_dir)?;
                    }
                    state.promoted = g.promoted;
                }
                state.phase = Phase::Rate;
            }
            Phase::Rate => {
                let best_dir = read_best(run).context("the run has no best model")?;
                summary.best = name_of(&best_dir);
                let every = cfg.looping.rating_every;
                if every > 0 && (it == 0 || state.promoted) && !cfg.eval.rating_baselines.is_empty() {
                    let m = Model::load(&best_dir, &device)?;
                    let best = Contestant::network(&m, &name_of(&best_dir), rating_visits, &cfg.run.search);
                    eval::rating_matches(run, &cfg.run.game, &cfg.run.search, &cfg.eval, &best, it as u64 + 1000, progress)?;
                }
                if run.join("eval").is_dir() {
                    if let Ok(table) = eval::update_ratings(run, RatingOptions::default()) {
                        let best_name = format!("{}@{}", name_of(&best_dir), rating_visits);
                        if let Some(r) = table.players.iter().find(|r| r.player.name == best_name || r.player.name.starts_with(&format!("{}@", name_of(&best_dir)))) {
                            summary.best_elo = Some((r.elo, r.lo, r.hi));
                            let _ = tb.scalar("elo/best", r.elo as f32, summary.step);
                        }
                    }
                }
                let _ = tb.flush();
                summary.seconds = t_iter.elapsed().as_secs_f64();
                report(&summary);
                done.push(summary.clone());
                state = LoopState { iteration: it + 1, phase: Phase::SelfPlay, promoted: false };
            }
        }
        save_state(run, &state)?;
    }
    Ok(done)
}
