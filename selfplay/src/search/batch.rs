//! The batched driver: many searches, one evaluator call per round.
//!
//! Self-play, matches, gating and [`Search::run`] all advance their searches the same way:
//! each search walks down to at most `want` leaves ([`Search::gather`]), the waiting leaves of
//! all of them are scored by one evaluator call, and each search takes its answers back
//! ([`Search::deliver`]). One network call then serves many simulations of many games, which
//! is what keeps a network's batch large. [`LeafBatch`] is that round, with buffers that are
//! reused from round to round.

use super::{Evaluation, Evaluator, Search, SearchError};
use engine::{Action, Game};
use std::ops::Range;

/// The buffers of one round of batched evaluation.
pub struct LeafBatch<G> {
    games: Vec<G>,
    legal: Vec<Vec<Action>>,
    evals: Vec<Evaluation>,
    spans: Vec<Range<usize>>,
}

impl<G> Default for LeafBatch<G> {
    fn default() -> Self {
        LeafBatch {
            games: Vec::new(),
            legal: Vec::new(),
            evals: Vec::new(),
            spans: Vec::new(),
        }
    }
}

impl<G: Game> LeafBatch<G> {
    pub fn new() -> Self {
        Self::default()
    }

    /// One round over `searches`, each with the number of simulations it wants: gather, one
    /// `evaluator` call for every waiting leaf, deliver. Returns how many simulations
    /// completed (terminal and cached leaves complete without the evaluator).
    pub fn round<'a, E: Evaluator<G>>(
        &mut self,
        searches: impl IntoIterator<Item = (&'a mut Search<G>, usize)>,
        evaluator: &mut E,
    ) -> Result<usize, SearchError>
    where
        G: 'a,
    {
        self.games.clear();
        self.legal.clear();
        self.spans.clear();
        let mut completed = 0;
        let mut gathered: Vec<&'a mut Search<G>> = Vec::new();
        for (search, want) in searches {
            completed += search.gather(want);
            let (games, legal) = search.pending();
            self.spans
                .push(self.games.len()..self.games.len() + games.len());
            self.games.extend_from_slice(games);
            self.legal.extend_from_slice(legal);
            gathered.push(search);
        }
        self.evals.clear();
        if !self.games.is_empty() {
            evaluator.evaluate(&self.games, &self.legal, &mut self.evals);
        }
        for (search, span) in gathered.into_iter().zip(&self.spans) {
            completed += search.deliver(&self.evals[span.clone()])?;
        }
        Ok(completed)
    }
}

/// An evaluator that counts what it was asked: calls, positions, and the seconds inside the
/// wrapped evaluator. Self-play reports the batch it actually forms from these counts (the
/// configured `search.batch` is only each search's share of a round).
pub struct Metered<E> {
    pub inner: E,
    pub counts: EvaluatorCounts,
}

/// What a [`Metered`] evaluator counted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EvaluatorCounts {
    pub calls: u64,
    pub positions: u64,
    pub seconds: f64,
}

impl EvaluatorCounts {
    /// Positions per call: the network batch that was formed (0 with no calls).
    pub fn mean_batch(&self) -> f64 {
        self.positions as f64 / self.calls.max(1) as f64
    }

    pub fn add(&mut self, other: &EvaluatorCounts) {
        self.calls += other.calls;
        self.positions += other.positions;
        self.seconds += other.seconds;
    }
}

impl<E> Metered<E> {
    pub fn new(inner: E) -> Self {
        Metered {
            inner,
            counts: EvaluatorCounts::default(),
        }
    }
}

impl<G: Game, E: Evaluator<G>> Evaluator<G> for Metered<E> {
    fn evaluate(&mut self, positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        let t0 = std::time::Instant::now();
        self.inner.evaluate(positions, legal, out);
        self.counts.seconds += t0.elapsed().as_secs_f64();
        self.counts.calls += 1;
        self.counts.positions += positions.len() as u64;
    }
}
