//! Uniformly random playouts, as Ludii plays them: the full legal list at every decision.

use crate::game::{Action, Game};
use rand::Rng;

/// Play `game` to the end with uniformly random legal actions; returns the actions played.
/// `buf` is reused for the legal lists so a playout allocates only for its action history.
pub fn random_playout<G: Game, R: Rng>(
    game: &mut G,
    rng: &mut R,
    buf: &mut Vec<Action>,
) -> Vec<Action> {
    let mut actions = Vec::new();
    while game.outcome().is_none() {
        game.legal_actions(buf);
        assert!(
            !buf.is_empty(),
            "a game that is not over has a legal action"
        );
        let a = buf[rng.gen_range(0..buf.len())];
        game.apply(a);
        actions.push(a);
    }
    actions
}

/// The positions of one uniformly random game from `start` to its end, `start` first: the
/// positions tests and measurements walk back from the end.
pub fn random_line<G: Game, R: Rng>(start: &G, rng: &mut R) -> Vec<G> {
    let mut g = start.clone();
    let mut line = vec![g.clone()];
    let mut legal = Vec::new();
    while g.outcome().is_none() {
        g.legal_actions(&mut legal);
        g.apply(legal[rng.gen_range(0..legal.len())]);
        line.push(g.clone());
    }
    line
}

/// Same as [`random_playout`] without keeping the history (the benchmark's inner loop).
pub fn random_playout_count<G: Game, R: Rng>(
    game: &mut G,
    rng: &mut R,
    buf: &mut Vec<Action>,
) -> u32 {
    let mut n = 0;
    while game.outcome().is_none() {
        game.legal_actions(buf);
        let a = buf[rng.gen_range(0..buf.len())];
        game.apply(a);
        n += 1;
    }
    n
}
