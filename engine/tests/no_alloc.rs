//! Legal-action generation and apply allocate nothing once the action buffer has grown: a
//! counting global allocator watches random games of every game kind.

use engine::leblin::{Leblin, LeblinOptions};
use engine::lifeline::{Balance, Lifeline, LifelineOptions};
use engine::square::{Incursions, SquareLifeline, SquareOptions};
use engine::Game;
use rand::{Rng, SeedableRng};
use std::alloc::{GlobalAlloc, Layout, System};

struct Counting;

thread_local! {
    /// Allocations made by this thread (tests run on several threads at once).
    static ALLOCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn allocs() -> usize {
    ALLOCS.with(|a| a.get())
}

fn count() {
    let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `legal_actions` + `apply` over `games` random games.
pub fn allocations_during_play<G: Game>(start: &G, games: usize) -> usize {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut buf = Vec::with_capacity(4096);
    let mut total = 0;
    for _ in 0..games {
        let mut g = start.clone();
        while g.outcome().is_none() {
            let before = allocs();
            g.legal_actions(&mut buf);
            let a = buf[rng.gen_range(0..buf.len())];
            g.apply(a);
            total += allocs() - before;
        }
    }
    total
}

#[test]
fn the_counter_sees_allocations() {
    let before = allocs();
    let v: Vec<u64> = std::hint::black_box((0..100).collect());
    assert!(allocs() > before && v.len() == 100);
}

#[test]
fn lifeline_play_allocates_nothing() {
    for balance in [Balance::Strong, Balance::Weak, Balance::Komi] {
        for size in [3, 7, 12] {
            let komi = if balance == Balance::Komi { 5 } else { 0 };
            let g = Lifeline::new(LifelineOptions {
                komi,
                ..LifelineOptions::new(size, balance)
            })
            .unwrap();
            assert_eq!(allocations_during_play(&g, 3), 0, "size {size} {balance:?}");
        }
    }
}

/// Allocations made by `legal_actions` and by `apply` separately, and the number of turns.
fn allocations_split<G: Game>(start: &G, games: usize) -> (usize, usize, usize) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut buf = Vec::with_capacity(4096);
    let (mut legal, mut apply, mut turns) = (0, 0, 0);
    for _ in 0..games {
        let mut g = start.clone();
        while g.outcome().is_none() {
            let before = allocs();
            g.legal_actions(&mut buf);
            legal += allocs() - before;
            let a = buf[rng.gen_range(0..buf.len())];
            let mover = g.to_move();
            let before = allocs();
            g.apply(a);
            apply += allocs() - before;
            if g.to_move() != mover || g.outcome().is_some() {
                turns += 1;
            }
        }
    }
    (legal, apply, turns)
}

#[test]
fn square_lifeline_allocates_only_its_history() {
    // Listing actions allocates nothing; a turn adds one node to the shared repetition history
    // (a persistent list, so that cloning a game for a search simulation costs no allocation).
    for size in [5, 9, 13] {
        for incursions in [Incursions::Allowed, Incursions::Forbidden] {
            let g = SquareLifeline::new(SquareOptions {
                komi: 2,
                incursions,
                ..SquareOptions::new(size)
            })
            .unwrap();
            let (legal, apply, turns) = allocations_split(&g, 3);
            assert_eq!(
                legal, 0,
                "size {size} {incursions:?}: legal_actions allocated"
            );
            assert!(
                apply <= turns,
                "size {size}: {apply} allocations in apply over {turns} turns"
            );
        }
    }
}

#[test]
fn leblin_play_allocates_nothing() {
    for size in [5, 13, 19] {
        let g = Leblin::new(LeblinOptions {
            komi: 2,
            handicap: 2,
            ..LeblinOptions::new(size)
        })
        .unwrap();
        assert_eq!(allocations_during_play(&g, 2), 0, "size {size}");
    }
}
