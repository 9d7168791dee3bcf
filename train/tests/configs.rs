//! Every config shipped in configs/ loads with all its tables; broken ones are refused with the
//! file and field named.

use std::path::PathBuf;
use train::config::FullConfig;

fn configs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs")
}

#[test]
fn every_shipped_config_is_valid() {
    let mut seen = 0;
    let mut games = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(configs_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let cfg =
                FullConfig::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            cfg.run.game.start().unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let family = serde_json::to_value(&cfg.run.game).unwrap()["game"]
                .as_str()
                .unwrap()
                .to_string();
            if name.contains("quick") {
                games.insert((family.clone(), "quick"));
            }
            if name.contains("full") {
                games.insert((family, "full"));
            }
            seen += 1;
        }
    }
    assert!(seen >= 8, "{seen} configs");
    for family in ["lifeline", "square_lifeline", "leblin", "vigilance"] {
        assert!(
            games.contains(&(family.to_string(), "quick")),
            "a quick config for {family}"
        );
        assert!(
            games.contains(&(family.to_string(), "full")),
            "a full config for {family}"
        );
    }
}

#[test]
fn invalid_configs_name_the_file_and_field() {
    let dir = std::env::temp_dir().join(format!("lifeline-zero-configs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = std::fs::read_to_string(configs_dir().join("lifeline-5-quick.toml")).unwrap();
    for (from, to, field) in [
        ("batch_size = 128", "batch_size = 0", "batch_size"),
        ("games = 64", "games = 0", "loop.games"),
        ("minutes = 5", "minutes = -1", "loop.minutes"),
        ("max_games = 8", "max_gams = 8", "max_gams"),
        ("promote = \"newest\"", "promote = \"oldest\"", "oldest"),
        ("final_games = 40", "final_games = 41", "eval.final_games"),
        ("blocks = 4", "blocks = 0", "network.blocks"),
        ("[loop]", "[loop]\ndevice = \"tpu\"", "loop.device"),
        ("size = 5", "size = 2", "size"),
        // One role's cores given and the other's left to the measured split.
        (
            "selfplay_threads = 0",
            "selfplay_threads = 1",
            "loop.selfplay_threads",
        ),
        ("ratio = 4.0", "ratio = nan", "loop.ratio"),
        ("[loop]", "[loop]\nlr_anneal = 1.5", "loop.lr_anneal"),
        ("[loop]", "[loop]\nlr_anneal = nan", "loop.lr_anneal"),
        (
            "concurrent = true",
            "concurrent = false\nlr_anneal = 0.2",
            "loop.lr_anneal",
        ),
        (
            "concurrent = true",
            "concurrent = false\nrater_threads = 1",
            "loop.rater_threads",
        ),
        (
            "threads = 2\n",
            "threads = 2\nsizes = [5, 13]\n",
            "selfplay.sizes",
        ),
        ("precision = \"bf16\"", "precision = \"bf17\"", "precision"),
        ("[train]", "[train]\nprecision = \"fp8\"", "precision"),
    ] {
        assert!(base.contains(from), "{from}");
        let path = dir.join("bad.toml");
        std::fs::write(&path, base.replacen(from, to, 1)).unwrap();
        let e = format!(
            "{:#}",
            FullConfig::load(&path)
                .err()
                .unwrap_or_else(|| panic!("{to} accepted"))
        );
        assert!(
            e.contains("bad.toml") && e.contains(field),
            "{e} should name the file and {field}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
