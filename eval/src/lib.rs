//! Evaluation: matches, Elo, SPRT gating and balance studies. Not built yet (issue 7).
