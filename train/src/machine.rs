//! What one core of this machine does for a config: self-play samples per second, network
//! positions per second and training samples per second, measured in a few seconds at the
//! start of a concurrent loop (and by `train bench`), so that the loop can give each role the
//! cores it needs and a reader of `learning.json` knows what machine its figures come from.
//!
//! The figures are of a fresh network of the config's size: self-play with a trained network
//! plays games of another length, and a busy machine measures slower, so they are estimates
//! of the balance, not promises.

use anyhow::{Context, Result};
use net::model::{Model, NetEvaluator};
use run::RunDir;
use selfplay::config::RunConfig;
use selfplay::generate::{generate, RunOutput, RunSummary};
use selfplay::search::{Evaluation, Evaluator, UniformEvaluator};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

use crate::config::TrainConfig;
use crate::fit::Trainer;
use crate::window::Window;

/// One core's speeds for a config (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Speeds {
    /// The CPU's model name (`/proc/cpuinfo`), and the cores this process may use.
    pub cpu: String,
    pub cores: usize,
    /// Self-play samples per second on one core (the config's search and games in flight).
    pub selfplay_samples_per_second: f64,
    /// The network batch self-play formed (positions per evaluator call, over all games in
    /// flight), and the network positions per second inside self-play. Absent (0) in the
    /// `machine.json` of runs made before they were measured.
    #[serde(default)]
    pub selfplay_batch: f64,
    #[serde(default)]
    pub selfplay_positions_per_second: f64,
    /// Network evaluations per second on one core by the inference bench, at the batch
    /// self-play formed (the search's `batch` in runs made before that was measured).
    pub inference_positions_per_second: f64,
    pub inference_batch: usize,
    /// Training samples per second on one core, at the config's batch size, and the kernels.
    pub train_samples_per_second: f64,
    pub train_batch: usize,
    pub kernels: String,
    /// The inference backend self-play and the bench ran (`fused-cpu`, `fused-cpu-bf16`);
    /// empty in the `machine.json` of runs made before it was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub inference: String,
    /// The board sides of a multi-size config (`selfplay.sizes`), whose games the self-play
    /// figures mix as self-play does; empty for one side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sides: Vec<usize>,
}

/// Self-play and training cores of a concurrent loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    pub selfplay_threads: usize,
    pub train_threads: usize,
}

/// The CPU's model name, or "unknown CPU" where `/proc/cpuinfo` does not say.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The cores this process may use.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Plays `games` games of `cfg` on one thread with `model` (the uniform evaluator with 8
/// visits when `None`: positions for a window, fast) in a scratch directory that is removed
/// again. Returns the games' samples as a window, and what the games measured.
pub fn sample_window(
    cfg: &RunConfig,
    train: &TrainConfig,
    model: Option<&Model>,
    games: usize,
) -> Result<(Window, RunSummary)> {
    let dir = std::env::temp_dir().join(format!(
        "lifeline-zero-speeds-{}-{}",
        std::process::id(),
        selfplay::roles::fresh_seed()
    ));
    let scratch = RunDir::new(&dir);
    let out = RunOutput {
        run: &scratch,
        model: "speeds",
        iteration: None,
        progress: false,
        stop: &run::Stop::on_signal(),
    };
    let played = match model {
        Some(model) => {
            // The self-play thread's network calls run in a one-thread pool of their own,
            // never in rayon's global pool, which the loop sizes after measuring.
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .context("cannot start a thread to measure self-play")?;
            generate(
                cfg,
                |_| InPool {
                    pool: &pool,
                    inner: NetEvaluator::new(model),
                },
                games,
                1,
                0,
                &out,
            )
        }
        None => {
            let mut quick = cfg.clone();
            quick.search.visits = 8;
            quick.selfplay.fast_visits = 8;
            quick.selfplay.full_search_share = 1.0;
            generate(&quick, |_| UniformEvaluator, games, 1, 0, &out)
        }
    };
    let window = played.map_err(anyhow::Error::from).and_then(|summary| {
        let window = Window::load(&scratch, &cfg.games(), train)?;
        Ok((window, summary))
    });
    let _ = std::fs::remove_dir_all(&dir);
    window
}

/// An evaluator whose calls run in `pool`.
struct InPool<'a, E> {
    pool: &'a rayon::ThreadPool,
    inner: E,
}

impl<G: engine::Game, E: Evaluator<G> + Send> Evaluator<G> for InPool<'_, E>
where
    G: Sync,
{
    fn evaluate(
        &mut self,
        positions: &[G],
        legal: &[Vec<engine::Action>],
        out: &mut Vec<Evaluation>,
    ) {
        let inner = &mut self.inner;
        self.pool.install(|| inner.evaluate(positions, legal, out));
    }
}

/// Calls `f` until `budget` has passed (at least twice) and returns calls per second.
fn rate(budget: Duration, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: buffers, caches
    let t0 = Instant::now();
    let mut calls = 0u32;
    while calls < 2 || t0.elapsed() < budget {
        f();
        calls += 1;
    }
    calls as f64 / t0.elapsed().as_secs_f64()
}

/// Measure one core's speeds for `cfg` on the CPU: about `seconds` for each figure.
pub fn measure(cfg: &RunConfig, train: &TrainConfig, seconds: f64) -> Result<Speeds> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .context("cannot start a thread to measure the machine")?;
    pool.install(|| {
        let device = burn::tensor::Device::flex();
        let fresh =
            || Model::random(&cfg.game, &cfg.network, &device, 0).map_err(anyhow::Error::msg);
        let model = fresh()?.for_inference_in(cfg.selfplay.precision);
        // As many games as self-play keeps in flight, so that the network batch it forms is
        // the one a run forms (with 4 games it was about a tenth of it).
        let games = cfg.selfplay.games_in_flight.max(4);
        let (window, played) = sample_window(cfg, train, Some(&model), games)?;
        let budget = Duration::from_secs_f64(seconds.max(0.1));
        let inference_batch = (played.evaluator.mean_batch().round() as usize).max(1);
        let b = window.batch(inference_batch, 0, 0, false);
        let inference = rate(budget, || {
            model.run(b.inputs.clone(), &b.mask, b.size, b.height, b.width);
        }) * inference_batch as f64;
        let mut trainer = Trainer::new(fresh()?, train.clone());
        let batch = window.batch(train.batch_size, 0, 0, false);
        let training = rate(budget, || {
            trainer.step(&batch);
        }) * train.batch_size as f64;
        Ok(Speeds {
            cpu: cpu_name(),
            cores: available_cores(),
            selfplay_samples_per_second: played.samples as f64 / played.seconds.max(1e-9),
            selfplay_batch: played.evaluator.mean_batch(),
            selfplay_positions_per_second: played.evaluator.positions as f64
                / played.evaluator.seconds.max(1e-9),
            inference_positions_per_second: inference,
            inference_batch,
            train_samples_per_second: training,
            train_batch: train.batch_size,
            kernels: trainer.kernels_name(),
            inference: model.backend_name().to_string(),
            sides: cfg
                .selfplay
                .sizes
                .clone()
                .filter(|sides| sides.len() > 1)
                .unwrap_or_default(),
        })
    })
}

impl Speeds {
    /// The split of `cores` between self-play and training that trains the most samples per
    /// second when the trainer trains at most `ratio` samples per sample generated: training
    /// cores `k` from 1 to `cores - 1`, each role's rate its cores times one core's (cores
    /// add up, as the loop's roles share nothing but the run directory). Ties go to self-play,
    /// whose samples are what the run is short of.
    pub fn split(&self, cores: usize, ratio: f64) -> Split {
        let cores = cores.max(2);
        let trained = |k: usize| {
            self.trained_per_second(
                Split {
                    selfplay_threads: cores - k,
                    train_threads: k,
                },
                ratio,
            )
        };
        let k = (1..cores).fold(1, |best, k| {
            if trained(k) > trained(best) * 1.0001 {
                k
            } else {
                best
            }
        });
        Split {
            selfplay_threads: cores - k,
            train_threads: k,
        }
    }

    /// Samples trained per second with `split`: the trainer's capacity, or `ratio` times
    /// what self-play makes, whichever is smaller.
    pub fn trained_per_second(&self, split: Split, ratio: f64) -> f64 {
        let capacity = split.train_threads as f64 * self.train_samples_per_second;
        let allowed = ratio * split.selfplay_threads as f64 * self.selfplay_samples_per_second;
        capacity.min(allowed)
    }

    /// The share of its time the trainer is expected to train (the rest it waits for
    /// samples), with `split` and `ratio`.
    pub fn trainer_busy(&self, split: Split, ratio: f64) -> f64 {
        let capacity = split.train_threads as f64 * self.train_samples_per_second;
        (self.trained_per_second(split, ratio) / capacity.max(1e-9)).min(1.0)
    }

    /// One line for the log.
    pub fn line(&self) -> String {
        let mixed = if self.sides.is_empty() {
            String::new()
        } else {
            let sides: Vec<String> = self.sides.iter().map(|s| s.to_string()).collect();
            format!(
                " (games of sides {} mixed as in self-play)",
                sides.join(", ")
            )
        };
        let backend = if self.inference.is_empty() {
            String::new()
        } else {
            format!(" on {}", self.inference)
        };
        format!(
            "{} ({} cores); one core{mixed}: {:.0} self-play samples/s (network batch {:.0}{backend}: {:.0} positions/s, {:.0}% of the bench's {:.0} at batch {}), {:.0} training samples/s at batch {} ({} kernels)",
            self.cpu,
            self.cores,
            self.selfplay_samples_per_second,
            self.selfplay_batch,
            self.selfplay_positions_per_second,
            100.0 * self.selfplay_positions_per_second
                / self.inference_positions_per_second.max(1e-9),
            self.inference_positions_per_second,
            self.inference_batch,
            self.train_samples_per_second,
            self.train_batch,
            self.kernels
        )
    }
}

/// Where a run keeps its [`MachineRecord`].
pub fn file(run: &RunDir) -> std::path::PathBuf {
    run.root().join("machine.json")
}

/// `machine.json` of a run: the speeds its loop measured and the split it used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineRecord {
    pub speeds: Speeds,
    pub split: Split,
    pub ratio: f64,
    /// Expected share of the trainer's time spent training, and samples trained per second.
    pub trainer_busy: f64,
    pub trained_per_second: f64,
}

impl MachineRecord {
    pub fn new(speeds: Speeds, split: Split, ratio: f64) -> Self {
        MachineRecord {
            trainer_busy: speeds.trainer_busy(split, ratio),
            trained_per_second: speeds.trained_per_second(split, ratio),
            speeds,
            split,
            ratio,
        }
    }

    /// The record of the run in `dir`, if its loop wrote one.
    pub fn read(run: &RunDir) -> Option<MachineRecord> {
        let text = std::fs::read_to_string(file(run)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn write(&self, run: &RunDir) -> Result<()> {
        let path = file(run);
        let json = serde_json::to_string_pretty(self).expect("speeds serialise") + "\n";
        run::write_atomic(&path, json.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speeds(selfplay: f64, train: f64) -> Speeds {
        Speeds {
            cpu: "test".into(),
            cores: 8,
            selfplay_samples_per_second: selfplay,
            selfplay_batch: 0.0,
            selfplay_positions_per_second: 0.0,
            inference_positions_per_second: 0.0,
            inference_batch: 8,
            train_samples_per_second: train,
            train_batch: 128,
            kernels: "FusedCpu".into(),
            inference: "fused-cpu".into(),
            sides: Vec::new(),
        }
    }

    /// Fails if a multi-size config's figures did not say they mix sides, or a one-side
    /// config's line named sides.
    #[test]
    fn the_line_names_the_sides_a_multi_size_config_mixes() {
        let one = speeds(600.0, 2000.0);
        assert!(!one.line().contains("sides"), "{}", one.line());
        let mixed = Speeds {
            sides: vec![3, 5, 7],
            ..one
        };
        assert!(
            mixed
                .line()
                .contains("one core (games of sides 3, 5, 7 mixed as in self-play): 600"),
            "{}",
            mixed.line()
        );
    }

    #[test]
    fn the_split_gives_training_the_cores_it_can_use() {
        // A core trains 1000 samples/s and plays 100: at ratio 4 one training core takes what
        // 2.5 self-play cores make.
        let s = speeds(100.0, 1000.0);
        let split = s.split(8, 4.0);
        assert_eq!(
            split,
            Split {
                selfplay_threads: 6,
                train_threads: 2
            }
        );
        assert!((s.trained_per_second(split, 4.0) - 2000.0).abs() < 1e-9);
        // With two cores there is one split, and the trainer waits 60% of the time.
        let two = s.split(2, 4.0);
        assert_eq!(
            two,
            Split {
                selfplay_threads: 1,
                train_threads: 1
            }
        );
        assert!((s.trainer_busy(two, 4.0) - 0.4).abs() < 1e-9);
        // A slow trainer gets more cores.
        let slow = speeds(100.0, 100.0).split(8, 4.0);
        assert_eq!(
            slow,
            Split {
                selfplay_threads: 2,
                train_threads: 6
            }
        );
    }

    /// A run's `machine.json` written before self-play's own batch was measured still reads
    /// (its loop resumes), with the new figures at 0. Fails if the new fields became required.
    #[test]
    fn an_older_machine_record_still_reads() {
        let old = r#"{"cpu":"AMD EPYC","cores":2,"selfplay_samples_per_second":616.0,
            "inference_positions_per_second":9430.0,"inference_batch":8,
            "train_samples_per_second":2379.0,"train_batch":128,"kernels":"FusedCpu"}"#;
        let s: Speeds = serde_json::from_str(old).unwrap();
        assert_eq!((s.selfplay_batch, s.inference_batch), (0.0, 8));
        assert!(s.line().contains("616 self-play samples/s"), "{}", s.line());
    }
}
