//! Opening solves by df-pn: Lifeline side 3 under the weak pie, proved class by class in two
//! pieces (the second resuming the first), every certificate checked from its file, and each
//! class's answer compared with the alpha-beta solver's swap decision. (The strong pie and the
//! komi pie around the fair komi are certified by scripts/certify-side-3.sh in CI, with the
//! release build: the debug build's rule cross-checks make them ten times slower.)
//!
//! Here too the cross-checks cost: 242 s in the test build against 134 s in the release build
//! (2-core AMD EPYC), so the test runs where debug assertions are off: `cargo test --release -p
//! engine --test proofs`, which CI runs in its side-3 certification step beside the release
//! engine it builds anyway; `cargo test` lists it as ignored, saying where it runs.

use engine::lifeline::{Balance, LifelineOptions};
use engine::proof;
use engine::solve::{Solver, Value};
use engine::solve_openings::{solve_openings, SolveOptions, Status};
use engine::{Game, GameConfig};
use std::path::PathBuf;

fn options_for(out: PathBuf, only: &[&str]) -> SolveOptions {
    SolveOptions {
        out,
        threads: 2,
        table_bytes: 64 << 20,
        class_limits: Default::default(),
        check: true,
        only: only.iter().map(|s| s.to_string()).collect(),
        progress: false,
        order: None,
        mobility: true,
    }
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "slow with the rules' cross-checks: run with --release (CI does)"
)]
fn side_3_weak_pie_is_certified_in_pieces_and_agrees_with_alpha_beta() {
    let config = GameConfig::Lifeline(LifelineOptions::new(3, Balance::Weak));
    let out = std::env::temp_dir().join(format!("weak-3-proofs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);

    // A solve stopped after two classes, and a leftover of a write that a kill interrupted.
    let first = solve_openings(&config, &options_for(out.clone(), &["b2", "c3"])).unwrap();
    assert_eq!(first.classes.len(), 2);
    assert!(first.classes.iter().all(|c| c.status == Status::Proved));
    let stamp = |name: &str| {
        std::fs::metadata(out.join(name))
            .unwrap()
            .modified()
            .unwrap()
    };
    let before = [stamp("b2.proof"), stamp("c3.proof")];
    std::fs::write(out.join("a1.proof.tmp"), b"half a certificate").unwrap();

    let all = solve_openings(&config, &options_for(out.clone(), &[])).unwrap();
    let status = |name: &str| all.classes.iter().find(|c| c.name == name).unwrap().status;
    assert_eq!(
        [status("b2"), status("c3")],
        [Status::Resumed; 2],
        "not proved again"
    );
    assert_eq!([status("a1"), status("b1")], [Status::Proved; 2]);
    assert_eq!(
        before,
        [stamp("b2.proof"), stamp("c3.proof")],
        "their files untouched"
    );

    // Every certificate checks from its file, and says what alpha-beta says.
    let start = config.start().unwrap();
    let mut solver = Solver::new(1 << 22);
    let analysis = solver.analyse(&start);
    let decisions = solver.swap_decisions(&start, &analysis);
    assert_eq!(decisions.len(), all.classes.len());
    for (turn, decision) in analysis.turns.iter().zip(&decisions) {
        let name: Vec<String> = turn
            .actions
            .iter()
            .map(|&a| start.action_to_string(a))
            .collect();
        let class = all
            .classes
            .iter()
            .find(|c| c.name == name.join("+"))
            .unwrap();
        let swap_wins = decision.as_ref().unwrap().value == Some(Value::Win);
        assert_eq!(class.opener_wins, Some(swap_wins), "class {}", class.name);
        let (header, checked) = proof::check_file(&out.join(class.proof.as_ref().unwrap()))
            .unwrap_or_else(|e| panic!("class {}: {e}", class.name));
        assert_eq!(Some(header.winner), class.winner);
        assert!(checked.positions > 0);
    }
    assert!(all.verdict.starts_with("white wins"), "{}", all.verdict);
    assert_eq!(
        all.swap.len(),
        4,
        "the solver swaps every weak opening of side 3"
    );
    std::fs::remove_dir_all(&out).unwrap();
}
