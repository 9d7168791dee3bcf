//! Checks every game must pass, shared by the rule crates' tests (public so that other crates'
//! tests can run them on their own positions too).

use crate::encode::{transform_planes, transform_policy};
use crate::game::{transform_action, Action, Game};
use ndarray::Array3;
use rand::Rng;

/// Say, where `cargo test` shows it, that part of a test did not run because something
/// outside the project is missing (a browser, numpy, Slurm): one `SKIPPED` line on stderr,
/// written past the harness's capture, which holds back `eprintln!` of a passing test, so that
/// a new user sees what did not run.
pub fn report_skip(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what}");
}

/// Encode a position into a fresh array.
pub fn encode_owned<G: Game>(g: &G) -> Array3<f32> {
    let b = g.board();
    let mut a = Array3::zeros((g.num_planes(), b.height(), b.width()));
    g.encode(a.view_mut());
    a
}

/// Check a position against the interface contract:
/// - the incremental hash equals the hash recomputed from scratch;
/// - every legal action is reported legal by `is_legal`, and its policy index round-trips;
/// - under every symmetry of the board, encode(sym(s)) == sym(encode(s)), the legal actions of
///   sym(s) are the images of those of s, the legal-action mask transforms like a policy, and
///   the hash of sym(s) is consistent.
///
/// Panics with a message naming the failed property.
pub fn check_position<G: Game>(g: &G) {
    assert_eq!(
        g.hash(),
        g.recompute_hash(),
        "incremental hash differs from the recomputed one"
    );
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    if g.outcome().is_some() {
        assert!(legal.is_empty(), "a finished game has legal actions");
    }
    let mut seen = std::collections::HashSet::new();
    for &a in &legal {
        assert!(seen.insert(a), "{a:?} listed twice");
        assert!(g.is_legal(a), "{a:?} listed but is_legal says no");
        let i = g.policy_index(a);
        assert!(i < g.policy_len());
        assert_eq!(
            g.action_of_policy_index(i),
            Some(a),
            "policy index of {a:?} does not round-trip"
        );
        let text = g.action_to_string(a);
        assert_eq!(
            g.parse_action(&text).as_ref(),
            Ok(&a),
            "notation '{text}' does not round-trip"
        );
    }
    let planes = encode_owned(g);
    let mut mask = vec![0.0f32; g.policy_len()];
    for &a in &legal {
        mask[g.policy_index(a)] = 1.0;
    }
    for (k, sym) in g.board().symmetries().iter().enumerate() {
        let h = g.transformed(sym);
        assert_eq!(
            h.hash(),
            h.recompute_hash(),
            "symmetry {k}: hash of the image is inconsistent"
        );
        assert_eq!(h.to_move(), g.to_move());
        let expected = transform_planes(g.board(), sym, planes.view());
        let got = encode_owned(&h);
        assert!(
            got == expected,
            "symmetry {k}: encode(sym(s)) != sym(encode(s))"
        );
        let mut legal_h = Vec::new();
        h.legal_actions(&mut legal_h);
        let mut mapped: Vec<Action> = legal.iter().map(|&a| transform_action(sym, a)).collect();
        mapped.sort();
        legal_h.sort();
        assert_eq!(
            mapped, legal_h,
            "symmetry {k}: legal actions do not map to legal actions"
        );
        let mut mask_h = vec![0.0f32; h.policy_len()];
        for &a in &legal_h {
            mask_h[h.policy_index(a)] = 1.0;
        }
        assert_eq!(
            transform_policy(g.board(), sym, &mask),
            mask_h,
            "symmetry {k}: policy mask"
        );
    }
}

/// Play one uniformly random game from `start`, calling `each(before, action, after)` on every
/// step. Returns the final position and the actions.
pub fn random_game<G: Game, R: Rng>(
    start: &G,
    rng: &mut R,
    mut each: impl FnMut(&G, Action, &G),
) -> (G, Vec<Action>) {
    let mut g = start.clone();
    let mut legal = Vec::new();
    let mut actions = Vec::new();
    while g.outcome().is_none() {
        g.legal_actions(&mut legal);
        assert!(
            !legal.is_empty(),
            "a game that is not over must have a legal action"
        );
        let a = legal[rng.gen_range(0..legal.len())];
        let before = g.clone();
        g.apply(a);
        each(&before, a, &g);
        actions.push(a);
    }
    (g, actions)
}
