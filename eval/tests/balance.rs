//! `eval balance`: each study on a tiny board with `mcts:N` writes well-formed JSON, an SVG
//! that parses, and Markdown with the command; every interval holds its estimate.

use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = r#"
game = "lifeline"
[options]
size = 3
balance = "weak"
[search]
visits = 8
batch = 4
[eval]
games_in_flight = 4
"#;

fn setup(tag: &str, config: &str) -> (PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!("eval-balance-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let cfg = d.join("config.toml");
    std::fs::write(&cfg, config).unwrap();
    (d.join("out"), cfg)
}

fn balance(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_eval"))
        .arg("balance")
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every `{estimate, lo, hi}` object in `v` (at any depth) holds its estimate; returns how
/// many there were.
fn check_estimates(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Object(m) => {
            let own = match (m.get("estimate"), m.get("lo"), m.get("hi")) {
                (Some(e), Some(lo), Some(hi)) => {
                    let (e, lo, hi) = (
                        e.as_f64().unwrap(),
                        lo.as_f64().unwrap(),
                        hi.as_f64().unwrap(),
                    );
                    assert!(lo <= e && e <= hi && lo < hi, "{v}");
                    1
                }
                _ => 0,
            };
            own + m.values().map(check_estimates).sum::<usize>()
        }
        serde_json::Value::Array(a) => a.iter().map(check_estimates).sum(),
        _ => 0,
    }
}

/// The study's three files: JSON with the command and sound intervals (at least one: players
/// that draw, such as mcts:N, play distinct games), SVG that parses.
fn check_outputs(out: &Path, study: &str) -> serde_json::Value {
    let json = check_files(out, study);
    assert!(check_estimates(&json) > 0, "{json}");
    json
}

/// [`check_outputs`] without asking for an interval: a deterministic player's figures have none.
fn check_files(out: &Path, study: &str) -> serde_json::Value {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(format!("{study}.json"))).unwrap())
            .unwrap();
    assert_eq!(json["study"], study);
    assert!(
        json["command"]
            .as_str()
            .unwrap()
            .contains(&format!("balance {study}")),
        "{json}"
    );
    check_estimates(&json);
    let svg = std::fs::read_to_string(out.join(format!("{study}.svg"))).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(
        doc.descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count()
            > 0,
        "points are drawn"
    );
    let md = std::fs::read_to_string(out.join(format!("{study}.md"))).unwrap();
    assert!(md.contains("Made by `") && md.contains('|'), "{md}");
    json
}

#[test]
fn first_player_study() {
    let (out, cfg) = setup("first", CONFIG);
    balance(&[
        "first-player",
        "--config",
        s(&cfg),
        "--player",
        "mcts:8",
        "--player",
        "mcts:16",
        "--games",
        "8",
        "--out",
        s(&out),
    ]);
    let json = check_outputs(&out, "first-player");
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "one result per player");
    assert_eq!(results[0]["reached"]["black"]["games"], 8);
    assert!(
        results[0]["reached"]["swaps"]["rate"]["estimate"].is_number(),
        "weak pie reports the swaps: {json}"
    );
    // Black's best: side 3's four classes of first stones, each valued, the best played out.
    let best = &results[0]["best"];
    assert_eq!(best["pie"], true);
    let classes = best["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 4, "{best}");
    assert_eq!(classes[0]["opening"], best["best"]);
    assert!(
        classes[0]["played"]["games"].as_u64().unwrap() == 8,
        "{best}"
    );
    let black = best["black"]["estimate"].as_f64().unwrap();
    assert!(
        black <= 0.5,
        "under a pie Black's best after White's reply is at most even: {best}"
    );
    assert_eq!(json["convergence"][0]["rungs"].as_array().unwrap().len(), 2);
    assert!(
        json["sampling"].is_null() && best["sampling"].as_str().unwrap().contains("swap decision")
    );
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn komi_study() {
    let (out, cfg) = setup(
        "komi",
        &CONFIG.replace("balance = \"weak\"", "balance = \"komi\""),
    );
    balance(&[
        "komi",
        "--config",
        s(&cfg),
        "--player",
        "mcts:8",
        "--games",
        "6",
        "--komi",
        "0..=2",
        "--out",
        s(&out),
    ]);
    let json = check_outputs(&out, "komi");
    let points = json["curves"][0]["points"].as_array().unwrap();
    assert_eq!(
        points
            .iter()
            .map(|p| p["komi"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert!(json["curves"][0]["swaps"].is_null());
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn pie_table_study() {
    let (out, cfg) = setup("pie", CONFIG);
    balance(&[
        "pie-table",
        "--config",
        s(&cfg),
        "--player",
        "mcts:4",
        "--games",
        "4",
        "--sides",
        "3,4",
        "--komi",
        "0,1",
        "--out",
        s(&out),
    ]);
    let json = check_outputs(&out, "pie-table");
    let rows = json["tables"][0]["rows"].as_array().unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r["side"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [3, 4]
    );
    assert!(rows[0]["strong"]["game"]
        .as_str()
        .unwrap()
        .contains("strong"));
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

/// Trained networks play the pie table together, each cell by the network trained for its
/// method and size; a cell no network plays is refused with the game named.
#[test]
fn pie_table_of_one_network_per_method() {
    let (out, cfg) = setup("pie-nets", CONFIG);
    let device = net::model::parse_device("cpu").unwrap();
    let dir = out.parent().unwrap().to_path_buf();
    let mut paths = Vec::new();
    for (balance, komi) in [("strong", ""), ("weak", ""), ("komi", r#","komi":1"#)] {
        let game: engine::GameConfig = serde_json::from_str(&format!(
            r#"{{"game":"lifeline","options":{{"size":3,"balance":"{balance}"{komi}}}}}"#
        ))
        .unwrap();
        let mut m =
            net::model::Model::random(&game, &net::network::NetConfig::tiny(), &device, 1).unwrap();
        m.meta.sizes = Some(vec![3, 4]);
        if balance == "komi" {
            m.meta.komi_range = Some([0, 1]);
        }
        let path = dir.join(balance);
        m.save(&path).unwrap();
        paths.push(format!("{}@2", path.display()));
    }
    let args = |players: &[String]| {
        let mut a: Vec<String> = [
            "pie-table",
            "--config",
            s(&cfg),
            "--games",
            "2",
            "--sample-plies",
            "2",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        for p in players {
            a.extend(["--player".to_string(), p.clone()]);
        }
        a.extend(["--sides", "3,4", "--komi", "0,1", "--out", s(&out)].map(String::from));
        a
    };
    let run = |players: &[String]| {
        Command::new(env!("CARGO_BIN_EXE_eval"))
            .arg("balance")
            .args(args(players))
            .output()
            .unwrap()
    };
    let done = run(&paths);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // Networks at 2 visits play one game per opening, and their figures say deterministic.
    let json = check_files(&out, "pie-table");
    let table = &json["tables"][0];
    assert!(table["player"].as_str().unwrap().contains(" + "), "{table}");
    let rows = table["rows"].as_array().unwrap();
    for (row, side) in rows.iter().zip([3, 4]) {
        for (col, player) in [("strong", "strong@2"), ("weak", "weak@2")] {
            assert_eq!(row[col]["player"], player, "{row}");
            assert!(row[col]["game"]
                .as_str()
                .unwrap()
                .contains(&format!("-{side}-")));
        }
    }
    // Without the weak-pie network, the weak column has no player.
    let missing = run(&[paths[0].clone(), paths[2].clone()]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success());
    assert!(
        err.contains("no player given plays lifeline-3-weak"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_komi_study_of_a_game_without_komi_is_refused() {
    let (out, cfg) = setup("nokomi", CONFIG);
    let o = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args([
            "balance",
            "komi",
            "--config",
            s(&cfg),
            "--player",
            "mcts:4",
            "--games",
            "2",
            "--out",
            s(&out),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && text.contains("no komi"), "{text}");
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

/// A study killed part-way keeps the pieces it finished, and run again into the same folder
/// ends with the figures of a study that was never stopped.
#[test]
fn a_killed_study_resumes_from_its_finished_pieces() {
    let (out, cfg) = setup(
        "resume",
        &CONFIG.replace("balance = \"weak\"", "balance = \"komi\""),
    );
    let fresh = out.with_file_name("fresh");
    let study = |out: &Path, kill_at: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_eval"));
        c.args(["balance", "komi", "--config", s(&cfg), "--player", "mcts:8"])
            .args(["--games", "4", "--komi", "0..=3", "--out", s(out)]);
        if let Some(n) = kill_at {
            c.env("LIFELINE_KILL_AT_RENAME", n);
        }
        c.output().unwrap()
    };
    // One rename per komi point finished (each kept atomically): killed at the fourth, before
    // the study's own files.
    let killed = study(&out, Some("4"));
    assert!(!killed.status.success(), "the study was killed");
    assert!(!out.join("komi.json").exists());
    let kept = std::fs::read_dir(out.join(".resume")).unwrap().count();
    assert!((1..4).contains(&kept), "{kept} of the 4 komi points kept");
    let resumed = study(&out, None);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(
        !out.join(".resume").exists(),
        "the pieces are removed once the study is written"
    );
    assert!(study(&fresh, None).status.success());
    let curves = |dir: &Path| check_outputs(dir, "komi")["curves"].clone();
    assert_eq!(curves(&out), curves(&fresh));
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

/// A study stopped by a signal (SIGINT, as Ctrl-C sends) exits with status 130, not as a
/// failure, and says where its finished pieces are kept and that the same command goes on.
#[test]
fn a_study_stopped_by_a_signal_says_where_its_pieces_are() {
    let (out, cfg) = setup(
        "sigint",
        &CONFIG
            .replace("size = 3", "size = 5")
            .replace("balance = \"weak\"", "balance = \"komi\""),
    );
    // Thirteen komi points, one piece each (32 side-5 games at 64 visits, a fraction of a
    // second each on a 2-core Intel Xeon): polled every 50 ms, the signal lands after the first
    // piece and well before the last.
    let child = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["balance", "komi", "--config", s(&cfg)])
        .args(["--player", "mcts:64", "--games", "32", "--komi", "0..=12"])
        .args(["--out", s(&out)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pieces = out.join(".resume");
    // Finished pieces only: a piece being written is a `.NAME.tmp-PID` file beside them.
    let kept = || {
        std::fs::read_dir(&pieces).map_or(0, |d| {
            d.filter(|e| {
                !e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('.')
            })
            .count()
        })
    };
    let waited = std::time::Instant::now();
    while kept() == 0 && waited.elapsed() < std::time::Duration::from_secs(600) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = crate::signal_and_wait(child, "-INT");
    let stderr = String::from_utf8_lossy(&o.stderr);
    // Fails if the stop is reported as a failure (status 1 and anyhow's "Error:"), if the
    // match's own "interrupted" error reaches the reader instead of the study's, or if the
    // message does not name the folder the same command resumes from.
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("finished pieces are kept in")
            && stderr.contains(s(&pieces))
            && stderr.contains("the same command goes on"),
        "{stderr}"
    );
    assert!(!stderr.contains("Error:"), "{stderr}");
    let kept = kept();
    assert!(
        (1..13).contains(&kept),
        "{kept} of 13 pieces kept: stopped part-way"
    );
    assert!(!out.join("komi.json").exists(), "no study written half");
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

/// Options a study cannot honour are refused before its first game, each naming its option,
/// and nothing is written: a study takes hours, and must not fail after them.
#[test]
fn options_a_study_cannot_honour_are_refused_before_it_plays() {
    let (out, cfg) = setup("early", &CONFIG.replace("\"weak\"", "\"komi\""));
    let refused = |study: &str, extra: &[&str], names: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_eval"))
            .args(["balance", study, "--config", s(&cfg), "--player", "mcts:4"])
            .args(["--games", "2", "--out", s(&out)])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success(),
            "{study} {extra:?} was accepted: {text}"
        );
        for name in names {
            assert!(text.contains(name), "{study} {extra:?}: {text}");
        }
        assert!(!text.contains("panicked"), "{text}");
        let written = std::fs::read_dir(&out).map_or(0, |d| d.count());
        assert_eq!(written, 0, "{study} {extra:?} wrote into {}", out.display());
    };
    refused("komi", &["--komi", "0..=13"], &["--komi", "komi 13"]);
    refused(
        "komi",
        &["--komi", "0..=4000000000"],
        &["--komi", "at most 64"],
    );
    refused("komi", &["--exact-sides", "99"], &["--exact-sides 99"]);
    refused("komi", &["--exact-seconds", "1e300"], &["--exact-seconds"]);
    refused("komi", &["--exact-seconds", "NaN"], &["--exact-seconds"]);
    refused(
        "first-player",
        &["--exact-sides", "3,99"],
        &["--exact-sides 99"],
    );
    refused("pie-table", &["--sides", "3,99"], &["--sides", "side 99"]);
    refused(
        "pie-table",
        &["--sides", "3", "--komi", "0..=13"],
        &["--komi", "komi 13"],
    );
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn swap_map_study() {
    let (out, cfg) = setup("swap", CONFIG);
    balance(&[
        "swap-map",
        "--config",
        s(&cfg),
        "--player",
        "mcts:16",
        "--player",
        "mcts:32",
        "--check-games",
        "4",
        "--out",
        s(&out),
    ]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("swap-map.json")).unwrap()).unwrap();
    let map = &json["maps"][0];
    assert_eq!(
        map["openings"].as_array().unwrap().len(),
        19,
        "every first stone of side 3"
    );
    // Side 3's 19 cells fall into 4 orbits under the 12 symmetries of the hexagon.
    assert_eq!(map["searched"], 4);
    for o in map["openings"].as_array().unwrap() {
        let v = o["value"].as_f64().unwrap();
        let played = o["checked"]["estimate"].as_f64().unwrap();
        // Checked by play, the played score decides the swap.
        assert!(
            (-1.0..=1.0).contains(&v) && o["swap"].as_bool().unwrap() == (played > 0.5),
            "{o}"
        );
        if let Some(lo) = o["checked"]["lo"].as_f64() {
            assert!(lo <= played, "{o}");
        }
    }
    let svg = std::fs::read_to_string(out.join("swap-map.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("polygon"))
            .count(),
        2 * 19,
        "a hexagon per cell, per player"
    );
    assert!(std::fs::read_to_string(out.join("swap-map.md"))
        .unwrap()
        .contains("White should swap"));
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn a_network_needs_sampled_plies_to_play_more_than_one_game() {
    let game: engine::GameConfig =
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
            .unwrap();
    let net = net::network::NetConfig::tiny();
    let model =
        net::model::Model::random(&game, &net, &net::model::parse_device("cpu").unwrap(), 1)
            .unwrap();
    let opts = |sample_plies| eval::study::openings::StudyOptions {
        games: 12,
        sample_plies,
        games_in_flight: 4,
        seed: 1,
        progress: false,
        ..Default::default()
    };
    // PUCT, and the Gumbel root (which plays without noise, so deterministically too).
    for gumbel in [false, true] {
        let search = selfplay::search::SearchConfig {
            gumbel,
            ..Default::default()
        };
        let player = eval::Contestant::network(&model, "000000", 8, &search);
        let fixed = eval::study::first_player::first_player(&game, &player, &opts(0)).unwrap();
        let black = &fixed.reached.black;
        assert_eq!(
            black.distinct_games, 1,
            "a deterministic player repeats its game (gumbel {gumbel})"
        );
        assert!(
            black.deterministic() && black.show().contains("deterministic"),
            "one distinct game has no interval: {black:?}"
        );
        let sampled = eval::study::first_player::first_player(&game, &player, &opts(3)).unwrap();
        assert!(
            sampled.reached.black.distinct_games > 3,
            "gumbel {gumbel}: {sampled:?}"
        );
        assert!(!sampled.reached.black.deterministic());
    }
}

#[test]
fn a_study_refuses_a_network_for_games_it_was_not_trained_for() {
    let parse = |s: &str| -> engine::GameConfig { serde_json::from_str(s).unwrap() };
    let weak3 = parse(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#);
    let device = net::model::parse_device("cpu").unwrap();
    let mut model =
        net::model::Model::random(&weak3, &net::network::NetConfig::tiny(), &device, 1).unwrap();
    model.meta.sizes = Some(vec![3, 4]);
    let player = eval::Contestant::network(
        &model,
        "000000",
        4,
        &selfplay::search::SearchConfig::default(),
    );
    let opts = eval::study::openings::StudyOptions {
        games: 2,
        sample_plies: 2,
        games_in_flight: 2,
        seed: 1,
        progress: false,
        ..Default::default()
    };
    // A size of its list plays; another size, or another balancing method, is refused by name.
    let weak4 = parse(r#"{"game":"lifeline","options":{"size":4,"balance":"weak"}}"#);
    assert!(eval::study::first_player::first_player(&weak4, &player, &opts).is_ok());
    for (game, why) in [
        (
            r#"{"game":"lifeline","options":{"size":5,"balance":"weak"}}"#,
            "sizes 3, 4",
        ),
        (
            r#"{"game":"lifeline","options":{"size":3,"balance":"strong"}}"#,
            "strong",
        ),
    ] {
        let e = eval::study::first_player::first_player(&parse(game), &player, &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("000000@4 cannot play") && e.contains(why), "{e}");
    }
}

/// The swap map on a square board and on a perforated one: every opening valued, symmetric
/// openings searched once, one square per cell of the board in the picture.
#[test]
fn swap_maps_of_square_and_perforated_boards() {
    let square = "game = \"square_lifeline\"\n[options]\nsize = 5\n";
    let perforated =
        "game = \"vigilance\"\n[options]\nboard = \"sq3_36_orthogonal\"\ncaptures = true\n";
    for (tag, game, board_cells) in [("square", square, 25), ("perforated", perforated, 36)] {
        let config =
            format!("{game}[search]\nvisits = 4\nbatch = 4\n[eval]\ngames_in_flight = 4\n");
        let (out, cfg) = setup(&format!("swap-{tag}"), &config);
        balance(&[
            "swap-map",
            "--config",
            s(&cfg),
            "--player",
            "mcts:4",
            "--out",
            s(&out),
        ]);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("swap-map.json")).unwrap())
                .unwrap();
        let map = &json["maps"][0];
        let openings = map["openings"].as_array().unwrap().len();
        let searched = map["searched"].as_u64().unwrap() as usize;
        assert!(
            0 < searched && searched < openings,
            "{tag}: symmetric openings are searched once ({searched} of {openings})"
        );
        let cells = map["cells"].as_array().unwrap().len();
        assert!(
            0 < cells && cells <= board_cells,
            "{tag}: {cells} cells valued"
        );
        let svg = std::fs::read_to_string(out.join("swap-map.svg")).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
        let squares = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
        // One square per cell of the board, and the white background.
        assert_eq!(squares, board_cells + 1, "{tag}");
        std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
    }
}

/// A study's new options are checked before any game: each bad value is refused with its
/// flag named, and nothing is written.
#[test]
fn bad_study_options_are_refused_with_the_flag_named() {
    let (out, cfg) = setup("badopts", CONFIG);
    for (flag, value) in [
        ("--margin", "-1"),
        ("--sample-margin", "NaN"),
        ("--max-classes", "0"),
        ("--exact-seconds", "0"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_eval"))
            .args([
                "balance",
                "first-player",
                "--config",
                s(&cfg),
                "--player",
                "mcts:4",
            ])
            .args(["--out", s(&out), &format!("{flag}={value}")])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(flag),
            "{flag} {value}: {err}"
        );
        assert!(!out.exists(), "{flag}: nothing written");
    }
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

/// `eval balance rejudge`: a committed study (side 5's komi ladder, whose players' games are
/// near even at komi 0 for some of them) judged again from its own games. How it could fail:
/// the command that played the games lost or replaced, the replaced verdicts not recorded, a
/// player without an edge at komi 0 still judged (docs/studies.md, "The komi pie needs an
/// edge"), a player with a clear edge given another kind of verdict than before, the komi model
/// read from the file instead of refitted from the games, a second rejudge changing what the
/// first wrote, or bad input written over or not named.
#[test]
fn rejudge_recomputes_verdicts_from_the_games_and_keeps_the_command() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/balance/practical-5/komi-convergence/practical.json");
    let (dir, _) = setup("rejudge", "");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&committed, dir.join("practical.json")).unwrap();
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let before = read(&dir.join("practical.json"));
    // The komi model is refitted from the games, not trusted from the file: an interval
    // written over by hand comes back as the games give it.
    let mut tampered = before.clone();
    tampered["players"][0]["komi"]["model"]["best"][0][1]["lo"] = serde_json::json!(0.0);
    std::fs::write(dir.join("practical.json"), tampered.to_string()).unwrap();
    balance(&["rejudge", dir.to_str().unwrap()]);
    let after = read(&dir.join("practical.json"));
    assert_eq!(
        after["players"][0]["komi"]["model"]["best"][0],
        before["players"][0]["komi"]["model"]["best"][0],
        "the komi model refitted from the games"
    );
    assert_eq!(after["command"], before["command"]);
    assert!(after["rejudged"]["by"]
        .as_str()
        .unwrap()
        .contains("rejudge"));
    let players = |j: &serde_json::Value| j["players"].as_array().unwrap().clone();
    let (old, new) = (players(&before), players(&after));
    assert_eq!(old.len(), new.len());
    let mut unclear = 0;
    for (i, (o, n)) in old.iter().zip(&new).enumerate() {
        assert_eq!(after["rejudged"]["verdicts_before"][i], o["verdict"]);
        assert_eq!(
            o["classes"], n["classes"],
            "the games are kept as they were"
        );
        let b0 = &n["komi"]["model"]["best"][0];
        assert_eq!(b0[0], 0, "komi 0 first");
        let (lo, hi) = (b0[1]["lo"].as_f64().unwrap(), b0[1]["hi"].as_f64().unwrap());
        if hi <= 0.65 {
            assert_eq!(n["verdict"]["verdict"], "n/a", "{n}");
        } else if lo > 0.65 {
            // The kind is kept; the komi it names may move, since a verdict now names the
            // most even komi inside the band, not the first (docs/studies.md).
            assert_eq!(
                n["verdict"]["verdict"], o["verdict"]["verdict"],
                "a clear edge keeps the verdict: {n}"
            );
        } else {
            assert_ne!(n["verdict"]["verdict"], "effective", "{n}");
        }
        unclear += usize::from(lo <= 0.65);
    }
    assert!(
        unclear > 0,
        "the study no longer has a player the rule changes"
    );
    let md = std::fs::read_to_string(dir.join("practical.md")).unwrap();
    assert!(md.contains("recomputed from its games"), "{md}");
    balance(&["rejudge", dir.to_str().unwrap()]);
    assert_eq!(players(&read(&dir.join("practical.json"))), new);

    // Bad input: no study there, and a study of another kind, each named; nothing written.
    let refused = |dir: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_eval"))
            .args(["balance", "rejudge", dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(refused(&empty).contains("practical.json"));
    let other = serde_json::json!({ "study": "swap-map", "players": [] }).to_string();
    std::fs::write(empty.join("practical.json"), &other).unwrap();
    let why = refused(&empty);
    assert!(why.contains("`study`"), "{why}");
    assert_eq!(
        std::fs::read_to_string(empty.join("practical.json")).unwrap(),
        other
    );
}

/// A committed study's folder under docs/balance.
fn committed(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../docs/balance/{name}"))
}

/// The `practical.json` of the study in `dir`.
fn practical_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("practical.json")).unwrap()).unwrap()
}

/// `eval balance combine --player`: a ladder's study holds players a convergence leaves out
/// (another budget, another seed), so the reader names those combined. How it could fail: a
/// player not named kept, a named one dropped or out of the studies' order, its games or
/// verdict changed by the choice, or a name no study holds, or a folder left with none of its
/// players, accepted instead of refused with the names listed and nothing written.
#[test]
fn combine_takes_only_the_players_named() {
    let (dir, _) = setup("combine-named", "");
    let (ladder, old) = (
        committed("practical-3/komi-convergence"),
        committed("practical-3/komi-old-fixture"),
    );
    let run = |names: &[&str]| {
        let mut args = vec!["balance", "combine", "--out", dir.to_str().unwrap()];
        for name in names {
            args.extend(["--player", name]);
        }
        Command::new(env!("CARGO_BIN_EXE_eval"))
            .args(args)
            .args([&ladder, &old])
            .output()
            .unwrap()
    };
    let done = run(&["komi@64", "komi-seed2@64"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let combined = practical_json(&dir);
    let players = combined["players"].as_array().unwrap();
    let names: Vec<&str> = players
        .iter()
        .map(|p| p["reference"]["player"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["komi-seed2@64", "komi@64"],
        "only those named, in the studies' order"
    );
    let own = practical_json(&ladder);
    let mine = own["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["reference"]["player"] == "komi-seed2@64")
        .unwrap();
    assert_eq!(
        players[0]["classes"], mine["classes"],
        "the games as they were"
    );
    assert_eq!(
        players[0]["verdict"], mine["verdict"],
        "judged as in its own study"
    );
    assert!(combined["command"].as_str().unwrap().contains("--player"));
    std::fs::remove_dir_all(&dir).unwrap();

    // Refused, naming what is wrong, and nothing written.
    let refused = |names: &[&str]| {
        let out = run(names);
        assert!(!out.status.success());
        assert!(!dir.exists(), "nothing written");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let missing = refused(&["komi@64", "komi-x8@64"]);
    assert!(
        missing.contains("komi-x8@64") && missing.contains("komi-budget2@64"),
        "the name refused and those the studies hold: {missing}"
    );
    let left = refused(&["komi-seed2@64"]);
    assert!(
        left.contains("komi-old-fixture") && left.contains("none of its players"),
        "{left}"
    );
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

/// `eval balance combine`: two committed side-3 komi studies (today's reference fixture and the
/// older one, each played alone) written as one study over both players, nothing replayed. How
/// it could fail: a player lost, reordered or judged differently than in its own study, the
/// commands that played the games not kept, the convergence not read over both players, or a
/// combination of a player twice, of two games or into one of its own inputs accepted (or
/// written) instead of refused with the file and the field named.
#[test]
fn combine_reads_the_convergence_over_the_players_of_several_studies() {
    let (dir, _) = setup("combine", "");
    let (a, b) = (
        committed("practical-3/komi"),
        committed("practical-3/komi-old-fixture"),
    );
    balance(&[
        "combine",
        "--out",
        dir.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let combined = practical_json(&dir);
    let players = combined["players"].as_array().unwrap();
    let own: Vec<serde_json::Value> = [&a, &b].iter().map(|d| practical_json(d)).collect();
    assert_eq!(players.len(), 2);
    for (p, study) in players.iter().zip(&own) {
        let mine = &study["players"][0];
        assert_eq!(p["reference"]["player"], mine["reference"]["player"]);
        assert_eq!(p["classes"], mine["classes"], "the games as they were");
        assert_eq!(p["verdict"], mine["verdict"], "judged as in its own study");
        assert_eq!(p["komi"]["model"], mine["komi"]["model"]);
    }
    for (from, study) in combined["combined_from"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&own)
    {
        assert_eq!(from["command"], study["command"]);
    }
    assert!(combined["command"].as_str().unwrap().contains("combine"));
    // The older fixture decided classes against the solver: the veto names it, so the
    // convergence was read over both players, not copied from either study.
    let why = combined["convergence"]["why"].as_str().unwrap();
    assert!(why.contains("komi@64") && why.contains("vetoed"), "{why}");
    let md = std::fs::read_to_string(dir.join("practical.md")).unwrap();
    assert!(
        md.contains("Combined by") && md.contains("komi-old-fixture"),
        "{md}"
    );

    // Refused, each naming the file and what is wrong, and nothing written.
    let refused = |dirs: &[&Path]| {
        let out = dir.join("refused");
        let status = Command::new(env!("CARGO_BIN_EXE_eval"))
            .args(["balance", "combine", "--out", out.to_str().unwrap()])
            .args(dirs)
            .output()
            .unwrap();
        assert!(!status.status.success());
        assert!(!out.exists(), "nothing written");
        String::from_utf8_lossy(&status.stderr).to_string()
    };
    let twice = refused(&[&a, &committed("practical-3/komi-convergence")]);
    assert!(
        twice.contains("komi-17200@64") && twice.contains("practical-3/komi-convergence"),
        "{twice}"
    );
    // Written over one of its own inputs: refused before anything is read or written.
    let copy = dir.join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(a.join("practical.json"), copy.join("practical.json")).unwrap();
    let before = std::fs::read(copy.join("practical.json")).unwrap();
    let over = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["balance", "combine", "--out", copy.to_str().unwrap()])
        .args([&copy, &b])
        .output()
        .unwrap();
    assert!(!over.status.success());
    assert!(String::from_utf8_lossy(&over.stderr).contains("--out"));
    assert_eq!(std::fs::read(copy.join("practical.json")).unwrap(), before);
    let games = refused(&[&a, &committed("practical-4/komi")]);
    assert!(
        games.contains("`game`") && games.contains("practical-4/komi"),
        "{games}"
    );
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}
