//! Random Vigilance playouts per second (full legal list at every decision, uniform choice), as
//! Ludii measures its own: about 22 games/s on Hex M (72) with captures and 47 without, one
//! thread. Throughput is reported in games per second ("elem/s").
//!
//! `cargo bench -p engine --bench vigilance_playouts -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use engine::playout::random_playout_count;
use engine::vigilance::{Vigilance, VigilanceBoard, VigilanceOptions};
use engine::Action;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("vigilance_playout");
    group.throughput(Throughput::Elements(1));
    for (board, captures) in [
        (VigilanceBoard::HexM, true),
        (VigilanceBoard::HexM, false),
        (VigilanceBoard::Sq4Adjacent, true),
        (VigilanceBoard::Sq4Adjacent, false),
    ] {
        let start = Vigilance::new(VigilanceOptions::new(board, captures)).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut buf: Vec<Action> = Vec::with_capacity(256);
        let name = format!(
            "{}/{}",
            board.slug(),
            if captures { "captures" } else { "nocaptures" }
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut g = start.clone();
                random_playout_count(&mut g, &mut rng, &mut buf)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, playouts);
criterion_main!(benches);
