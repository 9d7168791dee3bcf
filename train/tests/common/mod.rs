//! What the end-to-end tests of `train` share: a tiny config and fresh temporary directories.

use std::path::PathBuf;

pub mod moto;

/// Lifeline side 3 with a one-block network: a loop iteration takes about a second.
pub const TINY: &str = r#"
game = "lifeline"
[options]
size = 3
balance = "strong"
[network]
blocks = 1
channels = 8
head_channels = 4
value_hidden = 8
pool_every = 1
[search]
visits = 8
batch = 4
[selfplay]
games_in_flight = 4
fast_visits = 4
full_search_share = 0.5
threads = 1
[train]
batch_size = 16
steps = 4
checkpoint_every = 2
[eval]
max_games = 4
gate_batch = 2
games_in_flight = 4
opening_plies = 1
rating_games = 2
rating_baselines = ["random"]
[loop]
iterations = 2
games = 4
"#;

/// A fresh, empty temporary directory for test `name` of this process.
pub fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lifeline-zero-train-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Waits (up to 30 s) until a role's lock file names its holder. The file exists from the
/// moment the role opens it, but names the holder only once the role also holds its lease:
/// a second process asking in between is refused by "another process", not "pid N".
pub fn wait_for_holder(lock: &std::path::Path) {
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string(lock).map_or(true, |t| t.trim().is_empty()) {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(30),
            "nobody took {}",
            lock.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The checkpoint name the run's best pointer holds (`models/best` carries its writer's role
/// and epoch after the name: `000008 gate 1`).
pub fn best_name(run: &std::path::Path) -> String {
    let text = std::fs::read_to_string(run.join("models/best")).unwrap_or_default();
    run::BestPointer::parse(&text).map_or(String::new(), |p| p.name)
}
