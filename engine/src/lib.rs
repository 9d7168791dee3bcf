//! The rules of the Lifeline family of games, and everything about them a learner needs that
//! knows nothing of networks: boards and their symmetries, legal actions, notation and game
//! records, position hashing, and positions as tensors.
//!
//! - [`board`]: cell graphs on hex and square lattices, bitsets ([`bitset`]) for flood fills.
//! - [`game`]: the [`Game`] trait, [`Action`], [`Player`], [`Outcome`].
//! - [`lifeline`]: Lifeline on hexhex boards with strong, weak and komi balancing.
//! - [`square`]: Square Lifeline, Advanced and Basic (incursions allowed or forbidden).
//! - [`leblin`]: Leblin (lifelines along the grid lines, signed prison, annihilation).
//! - [`vigilance`]: Vigilance on Ludii's 14 perforated boards ([`vigilance_boards`]).
//! - [`games`]: [`games::GameConfig`] and [`games::AnyGame`] for dispatch by configuration.
//! - [`encode`], [`notation`], [`record`]: tensors, text, and records that replay exactly.
//! - [`solve`] (alpha-beta) and [`dfpn`] (proof-number search) solve small positions exactly;
//!   [`solve_openings`] proves every opening class in pieces that resume, and [`proof`] checks
//!   the certificates they write without search.
//! - [`testing`], [`soak`]: the interface contract as checks, and the soak that runs them over
//!   random games and set-up positions of every game.
//!
//! ```
//! use engine::{Game, lifeline::{Lifeline, LifelineOptions, Balance}};
//! let mut g = Lifeline::new(LifelineOptions::new(5, Balance::Strong)).unwrap();
//! let mut legal = Vec::new();
//! g.legal_actions(&mut legal);
//! g.apply(legal[0]);
//! assert_eq!(g.to_move(), engine::Player::Black, "a double placement: Black decides again");
//! ```

pub mod bitset;
pub mod board;
pub mod dfpn;
pub mod display;
pub mod encode;
pub mod game;
pub mod games;
pub mod groups;
pub mod leblin;
pub mod lifeline;
pub mod notation;
pub mod playout;
pub mod proof;
pub mod record;
pub mod soak;
pub mod solve;
pub mod solve_growth;
pub mod solve_openings;
pub mod square;
pub mod testing;
pub mod vigilance;
pub mod vigilance_boards;
pub mod zobrist;

pub use board::{Board, Cell};
pub use game::{Action, EndReason, Game, GameError, Outcome, Player};
pub use games::{AnyGame, GameConfig};
