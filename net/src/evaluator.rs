//! The search's seam: what scores a batch of positions (a network, uniform priors, a rollout
//! policy). It lives here, below both the search (`selfplay::search`) and the network
//! ([`crate::model::NetEvaluator`]), so that neither crate reaches up into the other.

use engine::{Action, Game};

/// What an evaluator returns for one position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// One prior per legal action, in the order of the legal list; they sum to 1.
    pub priors: Vec<f32>,
    /// Expected result for the player to move, in [-1, 1].
    pub value: f32,
}

/// Anything that scores positions: a network, a uniform prior, a rollout policy.
pub trait Evaluator<G: Game> {
    /// Evaluate a batch: `out[i]` for `(positions[i], legal[i])`.
    fn evaluate(&mut self, positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>);
}

/// Uniform priors and a value of zero: the evaluator of a pipeline with no trained network yet.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl<G: Game> Evaluator<G> for UniformEvaluator {
    fn evaluate(&mut self, _positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        out.clear();
        for l in legal {
            let p = 1.0 / l.len().max(1) as f32;
            out.push(Evaluation {
                priors: vec![p; l.len()],
                value: 0.0,
            });
        }
    }
}
