//! A network's priors as the move order of the exact solver (MoHex's "focused" df-pn): df-pn
//! tries first the children the network likes, so it finds proofs along the lines a strong
//! player would play. The solver stays exact: an order only decides which of several equally
//! promising children is searched first ([`engine::dfpn::MoveOrder`]), never what counts as
//! proved. It lives here because the engine knows nothing of networks.

use crate::error::EvalError;
use engine::dfpn::{MoveOrder, StoneOrder};
use engine::game::{Action, Game};
use engine::games::{AnyGame, GameConfig};
use engine::solve_openings::OrderMaker;
use net::model::{Model, NetEvaluator};
use selfplay::search::{Evaluation, Evaluator};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Priors are remembered for this many positions, then forgotten all at once (df-pn revisits
/// a parent each time it descends through it; a full table costs a few hundred MB at most).
const CACHE_POSITIONS: usize = 1 << 18;

/// The priority scale of a prior: priors differ by more than the capture order's largest
/// priority ([`StoneOrder`], under 256 on every board), which breaks the priors' ties.
const PRIOR_SCALE: f32 = 10_000.0;

pub struct PriorOrder {
    model: Model,
    /// Positions with more stones than this are ordered by [`StoneOrder`] alone (`None`: all
    /// use the network), so the network's cost is paid only near the root.
    max_stones: Option<usize>,
    cache: HashMap<u64, Vec<(Action, f32)>>,
    legal: Vec<Action>,
    out: Vec<Evaluation>,
    /// Network evaluations so far (shared, so that it can be read once the solver owns this).
    evaluations: Arc<AtomicU64>,
}

impl PriorOrder {
    /// The network of checkpoint `dir`, which must play `game`.
    pub fn load(
        dir: &Path,
        game: &GameConfig,
        max_stones: Option<usize>,
    ) -> Result<PriorOrder, EvalError> {
        let model = Model::load(dir, &burn::tensor::Device::flex())?;
        model.check_plays(game, dir)?;
        Ok(PriorOrder::new(model.for_inference(), max_stones))
    }

    pub fn new(model: Model, max_stones: Option<usize>) -> PriorOrder {
        PriorOrder {
            model,
            max_stones,
            cache: HashMap::new(),
            legal: Vec::new(),
            out: Vec::new(),
            evaluations: Arc::default(),
        }
    }

    /// The count of network evaluations, read while the solver owns this order.
    pub fn evaluations(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.evaluations)
    }

    /// The network's prior of `action` at `parent` (0 for an action it was not asked about).
    fn prior(&mut self, parent: &AnyGame, action: Action) -> f32 {
        let key = parent.hash();
        if !self.cache.contains_key(&key) {
            if self.cache.len() >= CACHE_POSITIONS {
                self.cache.clear();
            }
            parent.legal_actions(&mut self.legal);
            NetEvaluator::new(&self.model).evaluate(
                std::slice::from_ref(parent),
                std::slice::from_ref(&self.legal),
                &mut self.out,
            );
            self.evaluations.fetch_add(1, Ordering::Relaxed);
            let priors = self
                .legal
                .iter()
                .copied()
                .zip(self.out[0].priors.iter().copied());
            self.cache.insert(key, priors.collect());
        }
        self.cache[&key]
            .iter()
            .find(|(a, _)| *a == action)
            .map_or(0.0, |&(_, p)| p)
    }
}

/// One order per solver thread, each with its own copy of the network of checkpoint `dir`
/// (all loaded here, so that a bad checkpoint is refused before any work starts).
pub fn order_maker(
    dir: &Path,
    game: &GameConfig,
    max_stones: Option<usize>,
    threads: usize,
) -> Result<(OrderMaker, Arc<AtomicU64>), EvalError> {
    let evaluations = Arc::new(AtomicU64::new(0));
    let orders = (0..threads.max(1))
        .map(|_| {
            PriorOrder::load(dir, game, max_stones).map(|o| PriorOrder {
                evaluations: Arc::clone(&evaluations),
                ..o
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let orders = Mutex::new(orders);
    let maker = OrderMaker(Arc::new(move || {
        // The solve asks once per thread; were it to ask more often, the capture order (the
        // engine's own) serves, which changes only the speed.
        match orders.lock().expect("never poisoned").pop() {
            Some(o) => Box::new(o) as Box<dyn MoveOrder<AnyGame>>,
            None => Box::new(StoneOrder),
        }
    }));
    Ok((maker, evaluations))
}

impl MoveOrder<AnyGame> for PriorOrder {
    fn priority(&mut self, parent: &AnyGame, action: Action, child: &AnyGame) -> i32 {
        let captures = StoneOrder.priority(parent, action, child);
        let stones =
            parent.stones(engine::Player::Black).len() + parent.stones(engine::Player::White).len();
        if self.max_stones.is_some_and(|m| stones > m) {
            return captures;
        }
        let prior = (self.prior(parent, action) * PRIOR_SCALE).round() as i32;
        prior * 256 + captures
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::dfpn::Dfpn;
    use engine::lifeline::{Balance, LifelineOptions};

    fn fixture(method: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/lifeline-3")
            .join(method)
    }

    /// The order changes the search, never its answer: positions of side 3's weak pie, from
    /// random play down to a dozen empty cells, get the same result with the network's order
    /// as with the capture order, and the network was asked.
    #[test]
    fn the_networks_order_proves_what_the_capture_order_proves() {
        let config = GameConfig::Lifeline(LifelineOptions::new(3, Balance::Weak));
        let order = PriorOrder::load(&fixture("weak"), &config, None).expect("fixture");
        let evaluations = order.evaluations();
        let mut net_order = Dfpn::new(16 << 20).with_order(order);
        let mut stone_order = Dfpn::new(16 << 20).with_order(StoneOrder);
        let mut legal = Vec::new();
        let mut seed = 0x9e37_79b9_u64;
        let mut checked = 0;
        for _ in 0..200 {
            if checked == 6 {
                break;
            }
            let mut g = config.start().unwrap();
            while g.outcome().is_none() && g.board().cells().len() - stones(&g) > 12 {
                g.legal_actions(&mut legal);
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                g.apply(legal[(seed >> 33) as usize % legal.len()]);
            }
            if g.outcome().is_some() {
                continue;
            }
            let before = evaluations.load(Ordering::Relaxed);
            let (a, b) = (net_order.prove(&g).wins, stone_order.prove(&g).wins);
            assert!(a.is_some() && a == b, "{a:?} against {b:?} at {g:?}");
            assert!(
                evaluations.load(Ordering::Relaxed) > before,
                "the network was never asked"
            );
            checked += 1;
        }
        assert_eq!(
            checked, 6,
            "random games rarely last to a dozen empty cells"
        );
    }

    fn stones(g: &AnyGame) -> usize {
        g.stones(engine::Player::Black).len() + g.stones(engine::Player::White).len()
    }
}
