//! Random playouts for profiling (callgrind counts instructions independently of machine load):
//! `playout_profile GAME SIZE N` with GAME one of lifeline, square, leblin, vigilance (SIZE
//! then picks the board: 0 Hex M, 1 Sq4 Adjacent, 2 Hex M without captures). Prints the average
//! number of decisions per game and a checksum of the games played (the same seed must give the
//! same games before and after an optimisation).
use engine::leblin::{Leblin, LeblinOptions};
use engine::lifeline::{Balance, Lifeline, LifelineOptions};
use engine::playout::random_playout_count;
use engine::square::{SquareLifeline, SquareOptions};
use engine::vigilance::{Vigilance, VigilanceBoard, VigilanceOptions};
use engine::Game;
use rand::{Rng, SeedableRng};
use std::time::Instant;

fn run<G: Game>(start: G, n: usize) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut buf = Vec::with_capacity(1024);
    let mut decisions = 0u64;
    let mut check = 0u64;
    let t = Instant::now();
    for _ in 0..n {
        let mut g = start.clone();
        decisions += random_playout_count(&mut g, &mut rng, &mut buf) as u64;
        check = check.wrapping_mul(31).wrapping_add(g.hash());
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{n} playouts, {:.1} decisions/game, checksum {check:016x} (rng {}), {:.0} playouts/s, {:.2} us/decision",
        decisions as f64 / n as f64,
        rng.gen::<u32>(),
        n as f64 / s,
        s * 1e6 / decisions as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args[2].parse().unwrap();
    let n: usize = args[3].parse().unwrap();
    match args[1].as_str() {
        "lifeline" => run(
            Lifeline::new(LifelineOptions::new(size, Balance::Strong)).unwrap(),
            n,
        ),
        "square" => run(SquareLifeline::new(SquareOptions::new(size)).unwrap(), n),
        "leblin" => run(Leblin::new(LeblinOptions::new(size)).unwrap(), n),
        "vigilance" => {
            let (board, captures) = match size {
                0 => (VigilanceBoard::HexM, true),
                1 => (VigilanceBoard::Sq4Adjacent, true),
                _ => (VigilanceBoard::HexM, false),
            };
            run(
                Vigilance::new(VigilanceOptions::new(board, captures)).unwrap(),
                n,
            )
        }
        g => panic!("unknown game {g}"),
    }
}
