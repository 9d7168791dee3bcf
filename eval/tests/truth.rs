//! Balance studies against the truth: on Lifeline side 3 the solver knows every answer, and
//! the studies of small networks trained by the project's own loop (tests/fixtures/lifeline-3,
//! with the commands that made them) must find it.
//!
//! What the solver says on side 3 (docs/solve/lifeline-3, proved by df-pn with certificates;
//! CI proves the strong pie and komi 3 and 4 again in scripts/certify-side-3.sh, and
//! engine/tests/proofs.rs the weak pie): under the komi pie all four first-stone classes win at
//! komi 0, b1 and c3 at komi 1 and 2, c3 alone at komi 3 and none from komi 4, so the fair komi
//! lies between 3 and 4; under the weak pie every first stone wins for its maker with the swap
//! declined (White swaps all), under the strong pie 13 of the 17 classes of pairs do.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lifeline-3")
        .join(name)
}

/// Run `eval balance STUDY --config CONFIG --player PLAYER EXTRA... --out TEMP`, check that
/// it succeeded, and return its JSON and what it printed.
fn balance(
    study: &str,
    config: &Path,
    player: &str,
    extra: &[&str],
) -> (serde_json::Value, String) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("eval-truth-{study}-{}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["balance", study, "--config"])
        .arg(config)
        .args(["--player", player])
        .args(extra)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    println!("{text}");
    let json = std::fs::read_to_string(out.join(format!("{study}.json"))).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    (serde_json::from_str(&json).unwrap(), text)
}

/// The placebo of the practical-balance study: an untrained network (random weights, the
/// first checkpoint a fresh run would have) under each pie and the komi pie must never be
/// called a reference player, nor get an "effective", "ineffective" or "converged" figure,
/// however its games fall. Fails if the reference gate were dropped or too weak to stop a
/// network that knows nothing (the old pie table called such a network's rows "converged").
#[test]
fn an_untrained_network_gets_no_verdict_from_the_practical_study() {
    let root = std::env::temp_dir().join(format!("eval-placebo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for method in ["weak", "komi"] {
        let config = fixture(&format!("{method}.toml"));
        let rc = selfplay::config::RunConfig::load(&config).unwrap();
        let device = net::model::parse_device("cpu").unwrap();
        let mut model = net::model::Model::random(&rc.game, &rc.network, &device, 11).unwrap();
        model.meta.komi_range = rc.selfplay.komi_range;
        let dir = root.join(method).join("000000");
        model.save(&dir).unwrap();
        let player = format!("{}@16", dir.display());
        let (json, text) = balance(
            "practical",
            &config,
            &player,
            &[
                "--player",
                &player,
                "--player",
                &player,
                "--anchor",
                "mcts:100",
                "--anchor-games",
                "10",
                "--games",
                "16",
                "--max-games",
                "16",
                "--komi",
                "0..=4",
            ],
        );
        for p in json["players"].as_array().unwrap() {
            assert!(p["reference"]["not_reference"].is_string(), "{method}: {p}");
            assert_eq!(p["verdict"]["verdict"], "not-applicable", "{method}: {p}");
        }
        assert_eq!(json["convergence"]["converged"], "not-applicable", "{json}");
        for word in ["effective (", "ineffective (", "converged ("] {
            assert!(
                !text.contains(&format!("**Verdict: {word}"))
                    && !text.contains(&format!("\n{word}")),
                "{method}: {word}: {text}"
            );
        }
        if method == "weak" {
            // The older first-player study of the same network at two rungs: its Black's best
            // under the pie is 0 from single deterministic games, as for every network.
            let rung = format!("{}@32", dir.display());
            let (json, text) = balance(
                "first-player",
                &config,
                &player,
                &["--player", &rung, "--games", "2"],
            );
            assert!(!text.contains("Converged"), "{text}");
            let c = &json["convergence"][0];
            let why = c["why"].as_str().unwrap();
            assert!(c["converged"] == false && why.starts_with("n/a"), "{c}");
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Run `eval balance practical` on a side-3 network at 64 visits with the solver's committed
/// results beside every class, and read its JSON.
fn practical(config: &str, network: &str, extra: &[&str]) -> serde_json::Value {
    // At most 64 games per cell, as when these tests' margins were set: more games for the
    // cells whose games repeat would only narrow intervals, and cost CI minutes.
    let mut args = vec!["--max-games", "64"];
    args.extend_from_slice(extra);
    practical_at(config, network, 64, &args)
}

/// `eval balance practical` on a side-3 network at `visits`, with the solver's committed
/// results beside every class, and its JSON.
fn practical_at(config: &str, network: &str, visits: u32, extra: &[&str]) -> serde_json::Value {
    let solved = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/solve/lifeline-3");
    let solved = solved.display().to_string();
    let player = format!("{}@{visits}", fixture(network).display());
    let mut args = vec!["--exact-from", &solved];
    args.extend_from_slice(extra);
    balance("practical", &fixture(config), &player, &args).0
}

/// Strong pie: the practical study's swap map (each of the 17 classes of Black's two stones
/// played out by sampled games with the swap declined, and called swap, keep, near-even or
/// undetermined by its interval) agrees with the solver's swap list beyond chance, Cohen's κ
/// of the categories at least 0.6, the margin the balance issue set. The players are the two
/// training seeds of one recipe (`strong-open-seed1-x2`, `-seed2-x2`: 480 rounds, half the
/// self-play games opened at random) at 256 visits, the study's default games, as the rule
/// written before their runs says (tests/fixtures/lifeline-3/README.md); one test per seed,
/// so that the two run side by side. Fails if a network's White stops refuting the openings
/// the solver says their maker loses (the players before these: κ 0.14 to 0.59), if the
/// categories were taken on the wrong side of the swap, or if κ were counted without the
/// agreement chance gives (13 of 17 classes are swap-classes: "swap everything" scores 13).
fn the_strong_swap_map_agrees_with_the_solver_beyond_chance(seed: u32) {
    let network = format!("strong-open-seed{seed}-x2");
    let json = practical_at("strong.toml", &network, 256, &[]);
    let p = &json["players"][0];
    assert_eq!(p["classes"].as_array().unwrap().len(), 17, "{p}");
    let kappa = p["kappa"].as_f64().unwrap();
    assert!(kappa >= 0.6, "{network}@256: κ {kappa}: {p}");
}

// How each could fail: see the function above.
#[test]
fn the_strong_pie_swap_map_agrees_with_the_solver_for_seed_1() {
    the_strong_swap_map_agrees_with_the_solver_beyond_chance(1);
}

#[test]
fn the_strong_pie_swap_map_agrees_with_the_solver_for_seed_2() {
    the_strong_swap_map_agrees_with_the_solver_beyond_chance(2);
}

/// The practical komi study of the side-3 komi network (sampled games per class and komi, the
/// pooled logistic) against the solver, with the margins the balance issue set before any run:
/// at least 34 of the 36 (class, komi) cells on the solver's side of one half, Black's best at
/// komi 3 is c3 (the only stone that wins there) and wins, and the fair komi's 95% interval
/// lies inside [3, 4]; and, added 2026-11-29 with the band over the classes in contention
/// before the study was judged by it, Black's best by the model on the solver's side of one
/// half at every komi at least one point from the crossing. Fails if the network's mistakes
/// decide cells (the old fixture got 33 of 36 and a fair komi of 1.95 [1.00, 2.41]), if komi
/// 3 were "won" by a stone the solver proves lost (the old study's b1), or if an interval
/// excluded the truth.
#[test]
fn the_practical_komi_study_agrees_with_the_solver_cell_by_cell() {
    let json = practical("komi.toml", "komi-17200", &["--komi", "0..=8"]);
    let p = &json["players"][0];
    let [right, of] = [0, 1].map(|i| p["cells_right"][i].as_u64().unwrap());
    assert_eq!(of, 36, "{p}");
    assert!(right >= 34, "{right} of {of} cells: {p}");
    let at3: Vec<&serde_json::Value> = p["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["komi"] == 3)
        .collect();
    let rate = |c: &serde_json::Value| c["win_rate"]["estimate"].as_f64().unwrap();
    let best = at3
        .iter()
        .max_by(|a, b| rate(a).total_cmp(&rate(b)))
        .unwrap();
    assert_eq!(best["opening"], "c3", "Black's best at komi 3: {best}");
    assert!(rate(best) > 0.5, "{best}");
    // The percentile interval of the crossings, which the margin was set for. The
    // band's interval (`fair_komi_band`) is printed beside it and not held to this margin:
    // on the committed study it reads 2.95 to 4.00, for the band of Black's best at komi 3
    // reaches 0.486 (docs/studies.md).
    let fair = &p["komi"]["model"]["fair_komi"];
    let (lo, hi) = (fair["lo"].as_f64().unwrap(), fair["hi"].as_f64().unwrap());
    assert!(3.0 <= lo && hi <= 4.0, "fair komi {fair}");
    // Black's best by the model, whose interval is the band over the classes in contention
    // (docs/studies.md, "Black's best without the winner's curse"): above one half wholly at
    // komi 0 to 2, below it wholly at 5 to 8, the solver's side at every komi at least one
    // point from the crossing. Fails if the band were so wide that it no longer tells a won
    // komi from a lost one, or the model put the crossing elsewhere.
    for read in p["komi"]["model"]["best"].as_array().unwrap() {
        let komi = read[0].as_u64().unwrap();
        let (lo, hi) = (
            read[1]["lo"].as_f64().unwrap(),
            read[1]["hi"].as_f64().unwrap(),
        );
        match komi {
            0..=2 => assert!(lo > 0.5, "Black's best at komi {komi}: {read}"),
            5..=8 => assert!(hi < 0.5, "Black's best at komi {komi}: {read}"),
            _ => {}
        }
    }
    // The value head's own crossing, the item 5: self-play's value head learnt the
    // win rate of sampled openings and crossed at about 1.8 in the older atlas (2.46 for the
    // old fixture); it must cross inside (3, 4), where the solver puts the fair komi. Fails if
    // the value head again learns a population of openings rather than Black's best.
    let head = p["komi"]["value_head_fair_komi"].as_f64().unwrap();
    assert!(3.0 < head && head < 4.0, "value head's crossing {head}");
}

/// Weak pie: every first stone wins for its maker with the swap declined (the solver), and the
/// study's win rate of each of the 4 classes is above one half with its whole interval. Fails
/// if a class's games were lost by the network's mistakes, or too few distinct games were
/// played to put an interval above one half (a deterministic player's single game would not).
#[test]
fn under_the_weak_pie_every_first_stone_wins_for_its_maker() {
    let json = practical("weak.toml", "weak", &[]);
    let classes = json["players"][0]["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 4);
    for c in classes {
        assert_eq!(c["exact_win"], true, "{c}");
        assert!(c["win_rate"]["lo"].as_f64().unwrap() > 0.5, "{c}");
    }
}

/// The committed side-4 truth set (docs/balance/lifeline-4-endgames, `eval endgames build`):
/// every 10th committed certificate checked by the checker, each naming the position and the
/// winner its entry in positions.json names, and the committed score of R(4) judging exactly
/// the set's positions with the set's winners. (Certificates over 128 KB are not committed:
/// `eval endgames reprove` makes them again, see the set's README.md.)
// Fails if a committed certificate is refused (a wrong proof was committed), if positions.json
// and a certificate disagree on the game, the position or the winner, if the set is smaller
// than the 150 positions its figures rest on or has fewer than 150 certificates committed, or
// if the score was made on another set.
#[test]
fn a_sample_of_the_side_4_truth_set_checks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/balance/lifeline-4-endgames");
    let set = eval::study::endgames::TruthSet::read(&dir).unwrap();
    assert!(
        set.positions.len() >= 150,
        "{} positions",
        set.positions.len()
    );
    let committed: Vec<_> = set
        .positions
        .iter()
        .filter(|p| dir.join(&p.proof).exists())
        .collect();
    assert!(committed.len() >= 150, "{} certificates", committed.len());
    for p in committed.into_iter().step_by(10) {
        let (header, checked) = engine::proof::check_file(&dir.join(&p.proof)).unwrap();
        assert_eq!(header.game, p.game, "{}", p.proof);
        assert_eq!(header.setup, p.setup, "{}", p.proof);
        assert_eq!(header.winner, p.winner, "{}", p.proof);
        println!(
            "{}: {} wins, {} positions checked",
            p.proof, p.winner, checked.positions
        );
    }
    let score: eval::study::endgames::accuracy::Score =
        serde_json::from_str(&std::fs::read_to_string(dir.join("score/score.json")).unwrap())
            .unwrap();
    assert_eq!(score.judged.len(), set.positions.len());
    for (j, p) in score.judged.iter().zip(&set.positions) {
        assert_eq!(j.proof, p.proof);
        assert_eq!(j.mover_wins, p.winner == p.to_move, "{}", p.proof);
    }
}
